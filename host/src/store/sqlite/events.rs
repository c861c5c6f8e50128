//! The `plugin_events` table: each session's log of plugin failures and refusals, the newest
//! [`MAX_EVENTS_PER_SESSION`] kept, ordered by time (then by insertion: two host processes'
//! events of one millisecond may arrive in either order).

use rusqlite::{Connection, TransactionBehavior, params};

use crate::Result;
use crate::store::{EventKind, MAX_EVENTS_PER_SESSION, PluginEvent};

/// Appends `event` and drops the session's events beyond the bound, in one transaction.
pub(crate) fn record(conn: &mut Connection, session: &str, event: &PluginEvent) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "INSERT INTO plugin_events (session, plugin, hook, kind, message, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![session, event.plugin, event.hook, event.kind.as_str(), event.message, event.at_ms],
    )?;
    tx.execute(
        "DELETE FROM plugin_events WHERE session = ?1 AND rowid NOT IN
           (SELECT rowid FROM plugin_events WHERE session = ?1 ORDER BY at_ms DESC, rowid DESC LIMIT ?2)",
        params![session, MAX_EVENTS_PER_SESSION],
    )?;
    tx.commit()?;
    Ok(())
}

/// Kept events per (plugin, kind), across sessions.
pub(crate) fn counts(conn: &Connection) -> Result<Vec<(String, String, u64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT plugin, kind, count(*) FROM plugin_events GROUP BY plugin, kind ORDER BY plugin, kind",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The session's events, oldest first.
pub(crate) fn list(conn: &Connection, session: &str) -> Result<Vec<PluginEvent>> {
    let mut stmt = conn.prepare_cached(
        "SELECT plugin, hook, kind, message, at_ms FROM plugin_events WHERE session = ?1 ORDER BY at_ms, rowid",
    )?;
    let rows = stmt.query_map([session], |r| {
        Ok(PluginEvent {
            plugin: r.get(0)?,
            hook: r.get(1)?,
            kind: EventKind::parse(&r.get::<_, String>(2)?),
            message: r.get(3)?,
            at_ms: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
