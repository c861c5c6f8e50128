//! Whole sessions out of and into PostgreSQL, for `scratchpad migrate`.

use deadpool_postgres::Object;
use tokio_postgres::IsolationLevel;

use super::{blobs, index, records, scope, sessions};
use crate::Result;
use crate::store::{SessionExport, now_ms, origin_tag};

/// Everything stored about session `id`, read in one repeatable-read transaction.
pub(super) async fn session(client: &mut Object, id: &str) -> Result<Option<SessionExport>> {
    let tx = client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start().await?;
    let Some(record) = sessions::get(&tx, id).await? else { return Ok(None) };
    let row = tx.query_one("SELECT parent, version, guidance FROM sessions WHERE id = $1", &[&id]).await?;
    let now = now_ms() as u64;
    let mut observations = Vec::new();
    for entry in blobs::list(&tx, None, id, None).await?.into_iter().filter(|e| e.expires_at_ms >= now) {
        let content =
            blobs::read(&tx, &entry.plugin, id, &entry.id, 0, entry.size_bytes as usize).await?.unwrap_or_default();
        observations.push((entry, content));
    }
    let export = SessionExport {
        parent: row.get(0),
        version: row.get(1),
        guidance_json: row.get(2),
        state: scope::dump(&tx, id).await?,
        metadata: scope::dump_metadata(&tx, id).await?,
        checkpoints: records::checkpoints(&tx, id, false).await?,
        observations,
        index: index::documents(&tx, &crate::store::IndexFilter { session: Some(id.to_owned()), ..Default::default() })
            .await?,
        record,
    };
    tx.commit().await?;
    Ok(Some(export))
}

/// Stores `export` in one transaction unless its session exists; returns whether it did.
pub(super) async fn import(client: &mut Object, export: &SessionExport) -> Result<bool> {
    let tx = client.transaction().await?;
    let record = &export.record;
    let inserted = tx
        .execute(
            "INSERT INTO sessions (id, parent, origin, created_at, updated_at, turn_id, turn_index, version, guidance,
                                   compaction_count, total_tokens, project)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING",
            &[
                &record.id,
                &export.parent,
                &origin_tag(&record.origin),
                &record.created_at,
                &record.updated_at,
                &record.turn_id,
                &record.turn_index,
                &export.version,
                &export.guidance_json,
                &record.compaction_count,
                &record.total_tokens,
                &record.project,
            ],
        )
        .await?;
    if inserted == 0 {
        return Ok(false);
    }
    for (plugin, key, value) in &export.state {
        tx.execute(
            "INSERT INTO plugin_state (session, plugin, key, value) VALUES ($1, $2, $3, $4)",
            &[&record.id, plugin, key, value],
        )
        .await?;
    }
    for (plugin, key, value) in &export.metadata {
        tx.execute(
            "INSERT INTO plugin_metadata (session, plugin, key, value) VALUES ($1, $2, $3, $4)",
            &[&record.id, plugin, key, value],
        )
        .await?;
    }
    for checkpoint in &export.checkpoints {
        records::insert_record(&tx, checkpoint).await?;
    }
    for (entry, content) in &export.observations {
        blobs::insert(&tx, tx.client(), &record.id, entry, content).await?;
    }
    index::import_in(&tx, &export.index).await?;
    tx.commit().await?;
    Ok(true)
}
