//! A plugin's scope in a session on SQLite: its storage and metadata key spaces, read, written
//! (inside the caller's transaction), copied to a child session and dumped for an export.

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Transaction, params};

use crate::Result;
use crate::store::{ScopeWrites, Snapshot, Writes};

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

/// Applies `writes` (both key spaces) inside an open transaction.
pub(crate) fn apply(tx: &Connection, plugin: &str, session: &str, writes: &ScopeWrites) -> Result<()> {
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
    tx: &Connection,
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
