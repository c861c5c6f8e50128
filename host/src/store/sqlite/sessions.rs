//! Session rows: creation (with every plugin's initial state in one transaction), lookup and
//! the host's turn counter.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::scope;
use crate::store::{Head, PluginInit, SessionRecord, origin_from, origin_tag, parse_guidance};
use crate::types::{Injection, Origin};
use crate::{Error, Result};

/// Creates the session and every plugin's initial state atomically.
pub(crate) fn create(
    conn: &mut Connection,
    id: &str,
    origin: &Origin,
    project: Option<&str>,
    guidance: &[Injection],
    inits: &[PluginInit],
) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let exists: bool = tx.query_row("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)", [id], |r| r.get(0))?;
    if exists {
        return Err(Error::SessionExists(id.to_owned()));
    }
    let parent = origin.parent();
    if let Some(parent) = parent {
        let found: bool =
            tx.query_row("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)", [parent], |r| r.get(0))?;
        if !found {
            return Err(Error::SessionNotFound(parent.to_owned()));
        }
    }
    let now = crate::store::now_ms();
    tx.execute(
        "INSERT INTO sessions (id, parent, origin, created_at, updated_at, guidance, project)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)",
        params![id, parent, origin_tag(origin), now, serde_json::to_string(guidance).unwrap(), project],
    )?;
    for init in inits {
        if let (true, Some(parent)) = (init.inherit, parent) {
            scope::copy_scope(&tx, &init.plugin, parent, id)?;
        }
        scope::apply(&tx, &init.plugin, id, &init.writes)?;
    }
    tx.commit()?;
    Ok(())
}

/// Whether a session exists (parent checks before running any plugin).
pub(crate) fn exists(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn.query_row("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)", [id], |r| r.get(0))?)
}

/// The session `id`, if it exists.
pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<SessionRecord>> {
    Ok(conn.query_row(&format!("{SELECT} FROM sessions WHERE id = ?1"), [id], read_row).optional()?)
}

/// Every session, oldest first.
pub(crate) fn list(conn: &Connection) -> Result<Vec<SessionRecord>> {
    let mut stmt = conn.prepare(&format!("{SELECT} FROM sessions ORDER BY created_at, id"))?;
    let rows = stmt.query_map([], read_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The head of session `id`, in the caller's transaction.
pub(crate) fn head(conn: &Connection, id: &str) -> Result<Option<Head>> {
    let mut stmt =
        conn.prepare_cached("SELECT turn_id, turn_index, version, guidance, project FROM sessions WHERE id = ?1")?;
    let head = stmt
        .query_row([id], |r| {
            Ok(Head {
                turn_id: r.get(0)?,
                turn_index: r.get(1)?,
                version: r.get(2)?,
                guidance_json: r.get(3)?,
                project: r.get(4)?,
            })
        })
        .optional()?;
    Ok(head)
}

/// Makes `turn_id` the session's current turn, the next after the one `seen` (another
/// process may have got there first: then its index is returned) and records `tokens`, the
/// runtime's figure for the conversation, when given. Returns the turn's index and whether
/// this call started it.
pub(crate) fn start_turn(conn: &mut Connection, id: &str, turn_id: &str, tokens: Option<u64>) -> Result<(u32, bool)> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let entered = enter_turn(&tx, id, turn_id, tokens)?;
    tx.commit()?;
    Ok(entered)
}

/// [`start_turn`] inside the caller's write transaction.
pub(crate) fn enter_turn(conn: &Connection, id: &str, turn_id: &str, tokens: Option<u64>) -> Result<(u32, bool)> {
    let current = head(conn, id)?.ok_or_else(|| Error::SessionNotFound(id.to_owned()))?;
    if current.turn_id.as_deref() == Some(turn_id) {
        return Ok((current.turn_index as u32, false));
    }
    let next = current.turn_index + 1;
    conn.execute(
        "UPDATE sessions SET turn_id = ?2, turn_index = ?3, total_tokens = coalesce(?4, total_tokens) WHERE id = ?1",
        params![id, turn_id, next, tokens.map(|t| t.min(i64::MAX as u64) as i64)],
    )?;
    Ok((next as u32, true))
}

const SELECT: &str = "SELECT id, parent, origin, created_at, updated_at, turn_id, turn_index, guidance, \
                      compaction_count, total_tokens, project";

fn read_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let parent: Option<String> = row.get(1)?;
    let tag: String = row.get(2)?;
    let origin = origin_from(&tag, parent);
    let guidance: String = row.get(7)?;
    Ok(SessionRecord {
        id: row.get(0)?,
        origin,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
        turn_id: row.get(5)?,
        turn_index: row.get(6)?,
        guidance: parse_guidance(&guidance),
        compaction_count: row.get(8)?,
        total_tokens: row.get(9)?,
        project: row.get(10)?,
    })
}

/// Counts one more compaction of session `id`.
pub(crate) fn record_compaction(conn: &Connection, id: &str) -> Result<()> {
    conn.execute("UPDATE sessions SET compaction_count = compaction_count + 1 WHERE id = ?1", [id])?;
    Ok(())
}

/// Sets the compaction count and token total where given; returns whether either changed.
pub(crate) fn record_counters(
    conn: &Connection,
    id: &str,
    compactions: Option<i64>,
    tokens: Option<i64>,
) -> Result<bool> {
    let changed = conn.execute(
        "UPDATE sessions SET compaction_count = COALESCE(?2, compaction_count),
                             total_tokens = COALESCE(?3, total_tokens)
         WHERE id = ?1 AND (compaction_count IS NOT COALESCE(?2, compaction_count)
                            OR total_tokens IS NOT COALESCE(?3, total_tokens))",
        params![id, compactions, tokens],
    )?;
    Ok(changed > 0)
}
