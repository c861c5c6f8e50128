//! Whole sessions out of and into the file, for `scratchpad migrate`.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::contents::Contents;
use super::{blobs, checkpoints, index, scope, sessions};
use crate::Result;
use crate::store::{SessionExport, now_ms};

/// Everything stored about session `id`: its row, state, metadata, checkpoints and live
/// observations with their content, read in one transaction.
pub(crate) fn session(conn: &mut Connection, contents: &Contents, id: &str) -> Result<Option<SessionExport>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
    let Some(record) = sessions::get(&tx, id)? else { return Ok(None) };
    let (parent, version, guidance_json): (Option<String>, i64, String) = tx
        .query_row("SELECT parent, version, guidance FROM sessions WHERE id = ?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?
        .expect("the row was just read");
    let now = now_ms() as u64;
    let mut observations = Vec::new();
    for entry in blobs::list(&tx, None, id, None)?.into_iter().filter(|e| e.expires_at_ms >= now) {
        let size = entry.size_bytes as usize;
        let content = blobs::read(&tx, contents, &entry.plugin, id, &entry.id, 0, size)?.unwrap_or_default();
        observations.push((entry, content));
    }
    let export = SessionExport {
        parent,
        version,
        guidance_json,
        state: scope::dump(&tx, id)?,
        metadata: scope::dump_metadata(&tx, id)?,
        checkpoints: checkpoints::list(&tx, id)?,
        observations,
        index: index::documents(
            &tx,
            &crate::store::IndexFilter { session: Some(id.to_owned()), ..Default::default() },
        )?,
        record,
    };
    tx.commit()?;
    Ok(Some(export))
}

/// Stores `export` in one transaction unless its session exists; returns whether it did. The
/// observations' content files are written first and kept only if the transaction lands.
pub(crate) fn import(conn: &mut Connection, contents: &Contents, export: &SessionExport) -> Result<bool> {
    let record = &export.record;
    if sessions::exists(conn, &record.id)? {
        return Ok(false);
    }
    let written =
        contents.write(export.observations.iter().map(|(entry, content)| (entry.id.as_str(), &content[..])))?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if sessions::exists(&tx, &record.id)? {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO sessions (id, parent, origin, created_at, updated_at, turn_id, turn_index, version, guidance,
                               compaction_count, total_tokens, project)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            record.id,
            export.parent,
            crate::store::origin_tag(&record.origin),
            record.created_at,
            record.updated_at,
            record.turn_id,
            record.turn_index,
            export.version,
            export.guidance_json,
            record.compaction_count,
            record.total_tokens,
            record.project,
        ],
    )?;
    for (plugin, key, value) in &export.state {
        tx.execute(
            "INSERT INTO plugin_state (plugin, session, key, value) VALUES (?1, ?2, ?3, ?4)",
            params![plugin, record.id, key, value],
        )?;
    }
    for (plugin, key, value) in &export.metadata {
        tx.execute(
            "INSERT INTO plugin_metadata (plugin, session, key, value) VALUES (?1, ?2, ?3, ?4)",
            params![plugin, record.id, key, value],
        )?;
    }
    for checkpoint in &export.checkpoints {
        checkpoints::insert_record(&tx, checkpoint)?;
    }
    for (entry, _) in &export.observations {
        blobs::insert_entry(&tx, &record.id, entry)?;
    }
    index::import_in(&tx, &export.index)?;
    tx.commit()?;
    written.keep();
    Ok(true)
}
