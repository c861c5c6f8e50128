//! The `plugin_events` table on PostgreSQL (see `store/sqlite/events.rs`), ordered by time,
//! then by its `ordinal`.

use deadpool_postgres::GenericClient;

use crate::Result;
use crate::store::{EventKind, MAX_EVENTS_PER_SESSION, PluginEvent};

/// Appends `event` and drops the session's events beyond the bound: one statement, one trip.
/// (The statement's subquery does not see the row it inserts, so it keeps the newest
/// `bound - 1` of the others.)
pub(super) async fn record(client: &impl GenericClient, session: &str, event: &PluginEvent) -> Result<()> {
    let stmt = client
        .prepare_cached(
            "WITH added AS (
                INSERT INTO plugin_events (session, plugin, hook, kind, message, at_ms)
                VALUES ($1, $2, $3, $4, $5, $6)
             )
             DELETE FROM plugin_events WHERE session = $1 AND ordinal IN
               (SELECT ordinal FROM plugin_events WHERE session = $1 ORDER BY at_ms DESC, ordinal DESC OFFSET ($7::bigint - 1))",
        )
        .await?;
    client
        .execute(
            &stmt,
            &[
                &session,
                &event.plugin,
                &event.hook,
                &event.kind.as_str(),
                &event.message,
                &event.at_ms,
                &MAX_EVENTS_PER_SESSION,
            ],
        )
        .await?;
    Ok(())
}

/// Kept events per (plugin, kind), across sessions.
pub(super) async fn counts(client: &impl GenericClient) -> Result<Vec<(String, String, u64)>> {
    let stmt = client
        .prepare_cached(
            "SELECT plugin, kind, count(*) FROM plugin_events GROUP BY plugin, kind \
             ORDER BY plugin COLLATE \"C\", kind COLLATE \"C\"",
        )
        .await?;
    Ok(client.query(&stmt, &[]).await?.iter().map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2) as u64)).collect())
}

/// The session's events, oldest first.
pub(super) async fn list(client: &impl GenericClient, session: &str) -> Result<Vec<PluginEvent>> {
    let stmt = client
        .prepare_cached(
            "SELECT plugin, hook, kind, message, at_ms FROM plugin_events WHERE session = $1 ORDER BY at_ms, ordinal",
        )
        .await?;
    Ok(client
        .query(&stmt, &[&session])
        .await?
        .iter()
        .map(|r| PluginEvent {
            plugin: r.get(0),
            hook: r.get(1),
            kind: EventKind::parse(&r.get::<_, String>(2)),
            message: r.get(3),
            at_ms: r.get(4),
        })
        .collect())
}
