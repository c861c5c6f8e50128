//! Session rows on PostgreSQL: creation with every plugin's initial state in one
//! transaction, lookup and the counters an embedder records.

use deadpool_postgres::{GenericClient, Object};
use tokio_postgres::Row;

use super::scope;
use crate::store::{Commit, Head, PluginInit, SessionRecord, now_ms, origin_from, origin_tag, parse_guidance};
use crate::types::{Injection, Origin};
use crate::{Error, Result};

const SELECT: &str = "SELECT id, parent, origin, created_at, updated_at, turn_id, turn_index, guidance, \
                      compaction_count, total_tokens, project FROM sessions";

/// Creates the session and every plugin's initial state atomically.
pub(super) async fn create(
    client: &mut Object,
    id: &str,
    origin: &Origin,
    project: Option<&str>,
    guidance: &[Injection],
    inits: &[PluginInit],
) -> Result<()> {
    let tx = client.transaction().await?;
    let parent = origin.parent();
    if let Some(parent) = parent {
        // A shared lock on the parent's row: it cannot change under the copy below.
        let found = tx.query_opt("SELECT 1 FROM sessions WHERE id = $1 FOR SHARE", &[&parent]).await?;
        if found.is_none() {
            return Err(Error::SessionNotFound(parent.to_owned()));
        }
    }
    let guidance = serde_json::to_string(guidance).expect("injections serialize");
    let inserted = tx
        .execute(
            "INSERT INTO sessions (id, parent, origin, created_at, updated_at, guidance, project)
             VALUES ($1, $2, $3, $4, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
            &[&id, &parent, &origin_tag(origin), &now_ms(), &guidance, &project],
        )
        .await?;
    if inserted == 0 {
        return Err(Error::SessionExists(id.to_owned()));
    }
    let mut calls = Vec::new();
    for init in inits {
        if let (true, Some(parent)) = (init.inherit, parent) {
            for table in ["plugin_state", "plugin_metadata"] {
                let sql = format!(
                    "INSERT INTO {table} (session, plugin, key, value)
                     SELECT $3, plugin, key, value FROM {table} WHERE session = $2 AND plugin = $1"
                );
                tx.execute(sql.as_str(), &[&init.plugin, &parent, &id]).await?;
            }
        }
        calls.push((init.plugin.as_str(), &init.writes));
    }
    // The hooks' writes go through the commit statement, at the new row's version 0, which
    // they leave as it is.
    if calls.iter().any(|(_, writes)| !writes.is_empty()) {
        let outcome = scope::apply(&tx, id, 0, false, &calls).await?;
        debug_assert_eq!(outcome, Commit::Done, "the session row was created in this transaction");
    }
    tx.commit().await?;
    Ok(())
}

/// Whether a session exists.
pub(super) async fn exists(client: &impl GenericClient, id: &str) -> Result<bool> {
    let stmt = client.prepare_cached("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)").await?;
    Ok(client.query_one(&stmt, &[&id]).await?.get(0))
}

/// The session `id`, if it exists.
pub(super) async fn get(client: &impl GenericClient, id: &str) -> Result<Option<SessionRecord>> {
    let stmt = client.prepare_cached(&format!("{SELECT} WHERE id = $1")).await?;
    Ok(client.query_opt(&stmt, &[&id]).await?.as_ref().map(read_row))
}

/// Every session, oldest first.
pub(super) async fn list(client: &impl GenericClient) -> Result<Vec<SessionRecord>> {
    let stmt = client.prepare_cached(&format!("{SELECT} ORDER BY created_at, id")).await?;
    Ok(client.query(&stmt, &[]).await?.iter().map(read_row).collect())
}

/// Counts one more compaction.
pub(super) async fn record_compaction(client: &impl GenericClient, id: &str) -> Result<()> {
    client.execute("UPDATE sessions SET compaction_count = compaction_count + 1 WHERE id = $1", &[&id]).await?;
    Ok(())
}

/// Sets the compaction count and token total where given; returns whether either changed.
pub(super) async fn record_counters(
    client: &impl GenericClient,
    id: &str,
    compactions: Option<i64>,
    tokens: Option<i64>,
) -> Result<bool> {
    let changed = client
        .execute(
            "UPDATE sessions SET compaction_count = COALESCE($2, compaction_count),
                                 total_tokens = COALESCE($3, total_tokens)
             WHERE id = $1 AND (compaction_count IS DISTINCT FROM COALESCE($2, compaction_count)
                                OR total_tokens IS DISTINCT FROM COALESCE($3, total_tokens))",
            &[&id, &compactions, &tokens],
        )
        .await?;
    Ok(changed > 0)
}

/// A session row as [`SessionRecord`].
pub(super) fn read_row(row: &Row) -> SessionRecord {
    let guidance: String = row.get(7);
    SessionRecord {
        id: row.get(0),
        origin: origin_from(row.get(2), row.get(1)),
        created_at: row.get(3),
        updated_at: row.get(4),
        turn_id: row.get(5),
        turn_index: row.get(6),
        guidance: parse_guidance(&guidance),
        compaction_count: row.get(8),
        total_tokens: row.get(9),
        project: row.get(10),
    }
}

/// The head columns of a session row read as `turn_id, turn_index, version, guidance` from
/// column `at` on, and `project` from column `project_at`.
pub(super) fn read_head(row: &Row, at: usize, project_at: usize) -> Head {
    Head {
        turn_id: row.get(at),
        turn_index: row.get(at + 1),
        version: row.get(at + 2),
        guidance_json: row.get(at + 3),
        project: row.get(project_at),
    }
}
