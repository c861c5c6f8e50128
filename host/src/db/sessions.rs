//! Session rows: creation (with every plugin's initial state in one transaction), lookup and
//! the host's turn counter.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::state;
use crate::capabilities::storage::ScopeWrites;
use crate::types::{Injection, Origin};
use crate::{Error, Result};

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session's id.
    pub id: String,
    /// How it was created.
    pub origin: Origin,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Time of the last committed plugin write, Unix milliseconds.
    pub updated_at: i64,
    /// The runtime's id of the current turn, once a turn has started.
    pub turn_id: Option<String>,
    /// 0-based index of the current turn; -1 before the first turn.
    pub turn_index: i64,
    /// Standing guidance from every plugin's `before-session-create`.
    pub guidance: Vec<Injection>,
    /// Compactions recorded for the session.
    pub compaction_count: i64,
    /// The runtime's last reported token total, when known.
    pub total_tokens: Option<i64>,
}

/// What a plugin contributes to a new session.
pub(crate) struct PluginInit {
    pub(crate) plugin: String,
    /// Copy the parent's state of this plugin first.
    pub(crate) inherit: bool,
    /// The hook's own writes, applied on top of any copy.
    pub(crate) writes: ScopeWrites,
}

/// Creates the session and every plugin's initial state atomically.
pub(crate) fn create(
    conn: &mut Connection,
    id: &str,
    origin: &Origin,
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
    let now = super::now_ms();
    tx.execute(
        "INSERT INTO sessions (id, parent, origin, created_at, updated_at, guidance)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        params![id, parent, origin_tag(origin), now, serde_json::to_string(guidance).unwrap()],
    )?;
    for init in inits {
        if let (true, Some(parent)) = (init.inherit, parent) {
            state::copy_scope(&tx, &init.plugin, parent, id)?;
        }
        state::apply(&tx, &init.plugin, id, &init.writes)?;
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

/// What an operation reads of its session's row: the current turn, the version (for the
/// optimistic commit) and the standing guidance, still as its JSON text.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) turn_id: Option<String>,
    pub(crate) turn_index: i64,
    pub(crate) version: i64,
    pub(crate) guidance_json: String,
}

/// The head of session `id`, in the caller's transaction.
pub(crate) fn head(conn: &Connection, id: &str) -> Result<Option<Head>> {
    let mut stmt = conn.prepare_cached("SELECT turn_id, turn_index, version, guidance FROM sessions WHERE id = ?1")?;
    let head = stmt
        .query_row([id], |r| {
            Ok(Head { turn_id: r.get(0)?, turn_index: r.get(1)?, version: r.get(2)?, guidance_json: r.get(3)? })
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
    let current = head(&tx, id)?.ok_or_else(|| Error::SessionNotFound(id.to_owned()))?;
    if current.turn_id.as_deref() == Some(turn_id) {
        return Ok((current.turn_index as u32, false));
    }
    let next = current.turn_index + 1;
    tx.execute(
        "UPDATE sessions SET turn_id = ?2, turn_index = ?3, total_tokens = coalesce(?4, total_tokens) WHERE id = ?1",
        params![id, turn_id, next, tokens.map(|t| t.min(i64::MAX as u64) as i64)],
    )?;
    tx.commit()?;
    Ok((next as u32, true))
}

/// The standing guidance stored as JSON text.
pub(crate) fn parse_guidance(json: &str) -> Vec<Injection> {
    serde_json::from_str(json).unwrap_or_default()
}

const SELECT: &str = "SELECT id, parent, origin, created_at, updated_at, turn_id, turn_index, guidance, \
                      compaction_count, total_tokens";

fn read_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    let parent: Option<String> = row.get(1)?;
    let tag: String = row.get(2)?;
    let origin = match (tag.as_str(), parent) {
        ("fork", Some(parent)) => Origin::Fork { parent },
        ("spawn", Some(parent)) => Origin::Spawn { parent, copy: false },
        ("spawn-copy", Some(parent)) => Origin::Spawn { parent, copy: true },
        _ => Origin::New,
    };
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
    })
}

fn origin_tag(origin: &Origin) -> &'static str {
    match origin {
        Origin::New => "new",
        Origin::Spawn { copy: false, .. } => "spawn",
        Origin::Spawn { copy: true, .. } => "spawn-copy",
        Origin::Fork { .. } => "fork",
    }
}
