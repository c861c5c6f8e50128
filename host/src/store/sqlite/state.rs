//! Plugin state: the key-value scope of one plugin in one session.

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::contents::Contents;
use super::{blobs, sessions};
use crate::store::ScopeWrites;
use crate::store::{Commit, PluginWrites, Read, ScopeToRead, Snapshot, Writes, now_ms};
use crate::{Error, Result};

/// Enters `turn_id` and reads the session's head and each named plugin's snapshot in one
/// read transaction (so all are of one version). A new turn id is counted first, in a write
/// transaction of its own, which also collects expired observations (the large-observation store: at the start
/// of every turn); the usual call, inside the current turn, writes nothing, and neither does
/// a read with no `turn_id`.
pub(crate) fn begin(
    conn: &mut Connection,
    contents: &Contents,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
) -> Result<Read> {
    let mut entered = false;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let head = sessions::head(&tx, session)?.ok_or_else(|| Error::SessionNotFound(session.into()))?;
        // Entered once: another process may switch the session to its own turn right after,
        // and re-entering would let two processes take turns re-entering without end.
        if let Some(turn_id) = turn_id
            && head.turn_id.as_deref() != Some(turn_id)
            && !entered
        {
            entered = true;
            drop(tx);
            let (_, new) = sessions::start_turn(conn, session, turn_id, tokens)?;
            if new {
                blobs::gc(conn, contents, None, now_ms() as u64)?;
            }
            continue;
        }
        let mut snapshots = Vec::with_capacity(plugins.len());
        for scope in plugins {
            snapshots.push((scope.index, read_scope(&tx, &scope.plugin, session)?));
        }
        tx.commit()?;
        return Ok(Read { head, snapshots });
    }
}

/// Reads the scope of `plugin` in `session` (storage and metadata, in one statement) inside an
/// open read transaction.
pub(crate) fn read_scope(conn: &Connection, plugin: &str, session: &str) -> Result<Snapshot> {
    let mut stmt = conn.prepare_cached(
        "SELECT 0, key, value FROM plugin_state WHERE plugin = ?1 AND session = ?2
         UNION ALL SELECT 1, key, value FROM plugin_metadata WHERE plugin = ?1 AND session = ?2",
    )?;
    let mut rows = stmt.query(params![plugin, session])?;
    let mut snapshot = Snapshot::default();
    while let Some(row) = rows.next()? {
        snapshot.space_mut(row.get(0)?).insert(row.get(1)?, bytes(row, 2)?);
    }
    Ok(snapshot)
}

/// Column `i` as bytes, whether stored as a BLOB (storage values) or TEXT (metadata JSON).
fn bytes(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Vec<u8>> {
    match row.get_ref(i)? {
        ValueRef::Blob(b) | ValueRef::Text(b) => Ok(b.to_vec()),
        other => Err(rusqlite::Error::InvalidColumnType(i, "value".into(), other.data_type())),
    }
}

/// Content size from which the commit hashes new observations beside writing them: below it,
/// a thread costs more than it saves.
const HASH_BESIDE_BYTES: usize = 1 << 20;

/// Commits the effects of one operation's calls if the session is still at
/// `expected_version`, in one transaction that bumps the version once. New observations'
/// content is written and synced first, before the write lock is taken (so a large one does
/// not hold up other sessions' commits), and removed again unless the commit lands.
pub(crate) fn commit(
    conn: &mut Connection,
    contents: &Contents,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    let blobs = || calls.iter().flat_map(|(_, _, blobs)| blobs);
    let large = blobs().map(|blob| blob.content.bytes.len()).sum::<usize>() >= HASH_BESIDE_BYTES;
    let written = std::thread::scope(|scope| {
        // The entries' SHA-256 (computed once, kept with the observation) on a second thread
        // while their content is written: for a large observation both take about as long.
        if large {
            scope.spawn(|| blobs().for_each(|blob| _ = blob.content.sha256()));
        }
        contents.write(blobs().map(|blob| (blob.id.as_str(), &blob.content.bytes[..])))
    })?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: Option<i64> =
        tx.query_row("SELECT version FROM sessions WHERE id = ?1", [session], |r| r.get(0)).optional()?;
    match version {
        None => return Err(Error::SessionNotFound(session.to_owned())),
        Some(v) if v != expected_version => return Ok(Commit::Conflict),
        Some(_) => {}
    }
    for (plugin, writes, blobs) in calls {
        apply(&tx, plugin, session, writes)?;
        for blob in blobs {
            blobs::insert_entry(&tx, session, &blob.entry(plugin))?;
        }
    }
    tx.execute("UPDATE sessions SET version = version + 1, updated_at = ?2 WHERE id = ?1", params![session, now_ms()])?;
    tx.commit()?;
    written.keep();
    Ok(Commit::Done)
}

/// Applies `writes` (both key spaces) inside an open transaction.
pub(crate) fn apply(tx: &Transaction<'_>, plugin: &str, session: &str, writes: &ScopeWrites) -> Result<()> {
    apply_table(tx, &STATE, plugin, session, &writes.state, |v| Value::Blob(v.to_vec()))?;
    // Metadata values were checked to be JSON, so they are UTF-8 and stored as text.
    apply_table(tx, &METADATA, plugin, session, &writes.metadata, |v| {
        Value::Text(String::from_utf8_lossy(v).into_owned())
    })
}

/// The statements that write one key space's table (constant text: no formatting per commit).
struct TableSql {
    set: &'static str,
    delete: &'static str,
}

macro_rules! table_sql {
    ($table:literal) => {
        TableSql {
            set: concat!(
                "INSERT INTO ",
                $table,
                " (plugin, session, key, value) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (plugin, session, key) DO UPDATE SET value = excluded.value"
            ),
            delete: concat!("DELETE FROM ", $table, " WHERE plugin = ?1 AND session = ?2 AND key = ?3"),
        }
    };
}

const STATE: TableSql = table_sql!("plugin_state");
const METADATA: TableSql = table_sql!("plugin_metadata");

fn apply_table(
    tx: &Transaction<'_>,
    sql: &TableSql,
    plugin: &str,
    session: &str,
    writes: &Writes,
    value_of: impl Fn(&[u8]) -> Value,
) -> Result<()> {
    if writes.is_empty() {
        return Ok(());
    }
    let mut set = tx.prepare_cached(sql.set)?;
    let mut delete = tx.prepare_cached(sql.delete)?;
    for (key, value) in writes {
        match value {
            Some(value) => set.execute(params![plugin, session, key, value_of(value)])?,
            None => delete.execute(params![plugin, session, key])?,
        };
    }
    Ok(())
}

/// Copies every key of `plugin` (storage and metadata) from session `from` to session `to`,
/// inside a transaction.
pub(crate) fn copy_scope(tx: &Transaction<'_>, plugin: &str, from: &str, to: &str) -> Result<()> {
    for table in ["plugin_state", "plugin_metadata"] {
        tx.execute(
            &format!(
                "INSERT INTO {table} (plugin, session, key, value)
                 SELECT plugin, ?3, key, value FROM {table} WHERE plugin = ?1 AND session = ?2
                 ON CONFLICT (plugin, session, key) DO UPDATE SET value = excluded.value"
            ),
            params![plugin, from, to],
        )?;
    }
    Ok(())
}

/// Every metadata pair of a session, as (plugin, key, JSON text), ordered.
pub(crate) fn dump_metadata(conn: &Connection, session: &str) -> Result<Vec<(String, String, String)>> {
    let mut stmt =
        conn.prepare_cached("SELECT plugin, key, value FROM plugin_metadata WHERE session = ?1 ORDER BY plugin, key")?;
    let rows = stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every stored pair of a session, as (plugin, key, value), ordered.
pub(crate) fn dump(conn: &Connection, session: &str) -> Result<Vec<(String, String, Vec<u8>)>> {
    let mut stmt =
        conn.prepare_cached("SELECT plugin, key, value FROM plugin_state WHERE session = ?1 ORDER BY plugin, key")?;
    let rows = stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
