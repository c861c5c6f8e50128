//! The smaller records on PostgreSQL: checkpoints (linked per session, ids unique by key) and
//! plugin identities (claimed under an advisory lock).

use deadpool_postgres::{GenericClient, Object, Transaction};
use tokio_postgres::Row;

use crate::Result;
use crate::store::{Claim, new_checkpoint, now_ms, record_id};
use crate::types::{Checkpoint, Summary, SummaryRequest};

/// The advisory lock key identity claims take, so processes starting together agree on the
/// first owner of a name.
const IDENTITY_LOCK: i64 = 0x7363_7261_7463_6869;

/// Stores the summary written for `request` as the session's newest checkpoint. The
/// session's row is locked first, so two processes adding checkpoints to one session link
/// them in order; an id another process took in the same millisecond is drawn again.
pub(super) async fn insert_checkpoint(
    client: &mut Object,
    request: &SummaryRequest,
    summary: &Summary,
) -> Result<Checkpoint> {
    let tx = client.transaction().await?;
    let session = &request.session_id;
    if tx.query_opt("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", &[session]).await?.is_none() {
        return Err(crate::Error::SessionNotFound(session.clone()));
    }
    let parent_id: Option<String> = tx
        .query_opt(
            "SELECT id FROM checkpoints WHERE session = $1 ORDER BY created_at DESC, ordinal DESC LIMIT 1",
            &[session],
        )
        .await?
        .map(|r| r.get(0));
    let now = now_ms();
    let salt = format!("{}/{}/{}", request.session_id, request.turn_id, request.plugin);
    loop {
        let checkpoint = new_checkpoint(request, summary, record_id(now, &salt), parent_id.clone(), now);
        if insert_record(&tx, &checkpoint).await? {
            tx.commit().await?;
            return Ok(checkpoint);
        }
    }
}

/// Inserts `checkpoint` as it is; false when its id is taken.
pub(super) async fn insert_record(tx: &Transaction<'_>, checkpoint: &Checkpoint) -> Result<bool> {
    let json = |v: &Vec<String>| serde_json::to_string(v).expect("strings serialize");
    let summary = &checkpoint.checkpoint;
    let inserted = tx
        .execute(
            "INSERT INTO checkpoints (id, session, plugin, parent_id, turn_id, created_at, trigger,
                 tokens_at_checkpoint, message_count_at_checkpoint, summary, topics, key_decisions, open_questions)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (id) DO NOTHING",
            &[
                &checkpoint.id,
                &checkpoint.session_id,
                &checkpoint.plugin,
                &checkpoint.parent_id,
                &checkpoint.turn_id,
                &(checkpoint.created_at_ms as i64),
                &serde_json::to_string(&checkpoint.trigger).expect("a trigger serializes"),
                &(checkpoint.tokens_at_checkpoint.min(i64::MAX as u64) as i64),
                &i64::from(checkpoint.message_count_at_checkpoint),
                &summary.summary,
                &json(&summary.topics),
                &json(&summary.key_decisions),
                &json(&summary.open_questions),
            ],
        )
        .await?;
    Ok(inserted == 1)
}

/// The checkpoints of `session`, oldest first (only the newest when `latest`).
pub(super) async fn checkpoints(client: &impl GenericClient, session: &str, latest: bool) -> Result<Vec<Checkpoint>> {
    const SELECT: &str = "SELECT id, parent_id, session, plugin, turn_id, created_at, trigger, tokens_at_checkpoint, \
                          message_count_at_checkpoint, summary, topics, key_decisions, open_questions \
                          FROM checkpoints WHERE session = $1";
    let sql = if latest {
        format!("{SELECT} ORDER BY created_at DESC, ordinal DESC LIMIT 1")
    } else {
        format!("{SELECT} ORDER BY created_at, ordinal")
    };
    let stmt = client.prepare_cached(&sql).await?;
    client.query(&stmt, &[&session]).await?.iter().map(read_checkpoint).collect()
}

fn read_checkpoint(row: &Row) -> Result<Checkpoint> {
    // A JSON column that does not parse (a damaged row) is an error naming it.
    fn json<T: serde::de::DeserializeOwned>(row: &Row, i: usize) -> Result<T> {
        let text: &str = row.get(i);
        serde_json::from_str(text).map_err(|e| anyhow::anyhow!("checkpoint column {i} is not valid JSON: {e}").into())
    }
    Ok(Checkpoint {
        id: row.get(0),
        parent_id: row.get(1),
        session_id: row.get(2),
        plugin: row.get(3),
        turn_id: row.get(4),
        created_at_ms: row.get::<_, i64>(5) as u64,
        trigger: json(row, 6)?,
        tokens_at_checkpoint: row.get::<_, i64>(7) as u64,
        message_count_at_checkpoint: row.get::<_, i64>(8) as u32,
        checkpoint: Summary {
            summary: row.get(9),
            topics: json(row, 10)?,
            key_decisions: json(row, 11)?,
            open_questions: json(row, 12)?,
        },
    })
}

/// Claims each `(name, identity, upgrade)` in one transaction (see the trait's docs).
pub(super) async fn claim(client: &mut Object, claims: &[(String, String, bool)]) -> Result<Vec<Claim>> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&IDENTITY_LOCK]).await?;
    let mut outcomes = Vec::with_capacity(claims.len());
    for (name, identity, upgrade) in claims {
        let recorded =
            tx.query_opt("SELECT identity, recorded_at FROM plugin_identities WHERE name = $1", &[name]).await?;
        let outcome = match recorded.map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1))) {
            Some((owner, _)) if owner == *identity => Claim::Granted,
            Some((owner, recorded_at_ms)) if !upgrade => Claim::Owned { identity: owner, recorded_at_ms },
            _ => {
                tx.execute(
                    "INSERT INTO plugin_identities (name, identity, recorded_at) VALUES ($1, $2, $3)
                     ON CONFLICT (name) DO UPDATE SET identity = excluded.identity, recorded_at = excluded.recorded_at",
                    &[name, identity, &now_ms()],
                )
                .await?;
                Claim::Granted
            }
        };
        outcomes.push(outcome);
    }
    // Nothing is kept when a claim is refused: the host does not open.
    if outcomes.iter().all(|c| *c == Claim::Granted) {
        tx.commit().await?;
    }
    Ok(outcomes)
}

/// Every recorded identity, by name.
pub(super) async fn identities(client: &impl GenericClient) -> Result<Vec<(String, String, i64)>> {
    let rows = client.query("SELECT name, identity, recorded_at FROM plugin_identities ORDER BY name", &[]).await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
}

/// Records identities copied from another store; a name already recorded keeps its owner.
pub(super) async fn import_identities(client: &mut Object, identities: &[(String, String, i64)]) -> Result<()> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&IDENTITY_LOCK]).await?;
    for (name, identity, recorded_at) in identities {
        tx.execute(
            "INSERT INTO plugin_identities (name, identity, recorded_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
            &[name, identity, recorded_at],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}
