//! Checkpoint records (the context-pressure policy), one row each, linked to the session's previous one.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::Result;
use crate::types::{Checkpoint, Summary, SummaryRequest};

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
    let now = crate::store::now_ms();
    let salt = format!("{}/{}/{}", request.session_id, request.turn_id, request.plugin);
    let mut id = crate::store::record_id(now, &salt);
    let mut taken = tx.prepare_cached("SELECT 1 FROM checkpoints WHERE id = ?1")?;
    while taken.exists([&id])? {
        id = crate::store::record_id(now, &salt);
    }
    drop(taken);
    let checkpoint = crate::store::new_checkpoint(request, summary, id, parent_id, now);
    insert_record(&tx, &checkpoint)?;
    tx.commit()?;
    Ok(checkpoint)
}

/// Inserts `checkpoint` as it is (its id, parent and time), inside an open transaction.
pub(crate) fn insert_record(tx: &rusqlite::Transaction<'_>, checkpoint: &Checkpoint) -> Result<()> {
    let json = |v: &Vec<String>| serde_json::to_string(v).expect("strings serialize");
    let summary = &checkpoint.checkpoint;
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
            checkpoint.created_at_ms as i64,
            serde_json::to_string(&checkpoint.trigger).expect("a trigger serializes"),
            checkpoint.tokens_at_checkpoint as i64,
            checkpoint.message_count_at_checkpoint,
            summary.summary,
            json(&summary.topics),
            json(&summary.key_decisions),
            json(&summary.open_questions),
        ],
    )?;
    Ok(())
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
    Ok(Checkpoint {
        id: row.get(0)?,
        parent_id: row.get(1)?,
        session_id: row.get(2)?,
        plugin: row.get(3)?,
        turn_id: row.get(4)?,
        created_at_ms: row.get::<_, i64>(5)? as u64,
        trigger: json_column(row, 6)?,
        tokens_at_checkpoint: row.get::<_, i64>(7)? as u64,
        message_count_at_checkpoint: row.get(8)?,
        checkpoint: Summary {
            summary: row.get(9)?,
            topics: json_column(row, 10)?,
            key_decisions: json_column(row, 11)?,
            open_questions: json_column(row, 12)?,
        },
    })
}

/// Column `i`, a JSON text the host wrote; one that does not parse (a damaged file) is an error
/// naming the column, not a made-up value.
fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, i: usize) -> rusqlite::Result<T> {
    let text: String = row.get(i)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::CheckpointTrigger;

    fn request() -> SummaryRequest {
        SummaryRequest {
            session_id: "s".into(),
            turn_id: "t".into(),
            plugin: "p".into(),
            trigger: CheckpointTrigger::TokenPercent(50),
            tokens: 100,
            message_count: 2,
        }
    }

    /// A database with session `s`.
    fn database() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        conn.execute("INSERT INTO sessions (id, origin, created_at, updated_at) VALUES ('s', 'new', 0, 0)", [])
            .unwrap();
        conn
    }

    #[test]
    fn checkpoints_of_one_turn_and_plugin_get_distinct_ids_linked_in_order() {
        let mut conn = database();
        // Many within a few milliseconds: the same time and salt, so only the sequence (and
        // the check for a taken id) keeps the ids apart.
        let stored: Vec<Checkpoint> =
            (0..300).map(|_| insert(&mut conn, &request(), &Summary::default()).unwrap()).collect();
        let ids: std::collections::BTreeSet<&str> = stored.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), stored.len());
        for pair in stored.windows(2) {
            assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
        }
        assert_eq!(list(&conn, "s").unwrap(), stored);
    }

    #[test]
    fn a_damaged_row_is_an_error_not_a_made_up_value() {
        let mut conn = database();
        insert(&mut conn, &request(), &Summary::default()).unwrap();
        conn.execute("UPDATE checkpoints SET trigger = 'not json'", []).unwrap();
        let error = match latest(&conn, "s") {
            Err(crate::Error::Other(error)) => format!("{error:#}"),
            other => panic!("expected a database error, got {other:?}"),
        };
        assert!(error.contains("index: 6"), "the error names the damaged column: {error}");
    }
}
