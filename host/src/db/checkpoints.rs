//! Checkpoint records (seed 002), one row each, linked to the session's previous one.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::Result;
use crate::checkpoints::{Checkpoint, CheckpointTrigger, Summary, SummaryRequest};

/// Stores the summary written for `request` as the session's newest checkpoint.
pub(crate) fn insert(conn: &mut Connection, request: &SummaryRequest, summary: &Summary) -> Result<Checkpoint> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let parent_id: Option<String> = tx
        .query_row(
            "SELECT id FROM checkpoints WHERE session = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
            [&request.session_id],
            |r| r.get(0),
        )
        .optional()?;
    let now = super::now_ms();
    let checkpoint = Checkpoint {
        id: super::record_id(now, &format!("{}/{}/{}", request.session_id, request.turn_id, request.plugin)),
        parent_id,
        session_id: request.session_id.clone(),
        plugin: request.plugin.clone(),
        turn_id: request.turn_id.clone(),
        created_at_ms: now as u64,
        trigger: request.trigger,
        tokens_at_checkpoint: request.tokens,
        message_count_at_checkpoint: request.message_count,
        checkpoint: summary.clone(),
    };
    let json = |v: &Vec<String>| serde_json::to_string(v).expect("strings serialize");
    tx.execute(
        "INSERT INTO checkpoints (id, session, plugin, parent_id, turn_id, created_at, trigger,
             tokens_at_checkpoint, message_count_at_checkpoint, summary, topics, key_decisions, open_questions)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            checkpoint.id,
            checkpoint.session_id,
            checkpoint.plugin,
            checkpoint.parent_id,
            checkpoint.turn_id,
            now,
            serde_json::to_string(&checkpoint.trigger).expect("a trigger serializes"),
            checkpoint.tokens_at_checkpoint as i64,
            checkpoint.message_count_at_checkpoint,
            summary.summary,
            json(&summary.topics),
            json(&summary.key_decisions),
            json(&summary.open_questions),
        ],
    )?;
    tx.commit()?;
    Ok(checkpoint)
}

/// Every checkpoint of `session`, oldest first.
pub(crate) fn list(conn: &Connection, session: &str) -> Result<Vec<Checkpoint>> {
    let mut stmt = conn.prepare_cached(&format!("{SELECT} WHERE session = ?1 ORDER BY created_at, rowid"))?;
    let rows = stmt.query_map([session], read_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The newest checkpoint of `session`.
pub(crate) fn latest(conn: &Connection, session: &str) -> Result<Option<Checkpoint>> {
    let sql = format!("{SELECT} WHERE session = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1");
    Ok(conn.query_row(&sql, [session], read_row).optional()?)
}

const SELECT: &str = "SELECT id, parent_id, session, plugin, turn_id, created_at, trigger, tokens_at_checkpoint, \
                      message_count_at_checkpoint, summary, topics, key_decisions, open_questions FROM checkpoints";

fn read_row(row: &Row<'_>) -> rusqlite::Result<Checkpoint> {
    let list = |i: usize| -> rusqlite::Result<Vec<String>> {
        let text: String = row.get(i)?;
        Ok(serde_json::from_str(&text).unwrap_or_default())
    };
    let trigger: String = row.get(6)?;
    Ok(Checkpoint {
        id: row.get(0)?,
        parent_id: row.get(1)?,
        session_id: row.get(2)?,
        plugin: row.get(3)?,
        turn_id: row.get(4)?,
        created_at_ms: row.get::<_, i64>(5)? as u64,
        trigger: serde_json::from_str(&trigger).unwrap_or(CheckpointTrigger::MessageCount(0)),
        tokens_at_checkpoint: row.get::<_, i64>(7)? as u64,
        message_count_at_checkpoint: row.get(8)?,
        checkpoint: Summary {
            summary: row.get(9)?,
            topics: list(10)?,
            key_decisions: list(11)?,
            open_questions: list(12)?,
        },
    })
}
