//! The blob store on PostgreSQL: an entry's row and its content in 64 KiB `bytea` chunks,
//! streamed in with `COPY ... FROM STDIN BINARY` straight from the observation's bytes (no
//! copy of the whole entry is made), read back by range with one statement that fetches only
//! the bytes asked for from the chunks that hold them.

use std::pin::pin;

use deadpool_postgres::{GenericClient, Object};
use tokio_postgres::Row;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;

use crate::Result;
use crate::store::{BlobEntry, CHUNK, LiveUsage, kind_from, kind_tag};

/// The advisory lock key garbage collection takes, so collections never interleave.
const GC_LOCK: i64 = 0x7363_7261_7463_6867;

const SELECT: &str = "SELECT id, plugin, turn_id, step_num, executor_name, content_kind, size_bytes, size_chars, \
                      ascii, sha256, summary, metadata, created_at_ms, expires_at_ms FROM observations";

/// Inserts `entry` of `session` with `content`, inside an open transaction: `tx` runs it,
/// `copying` (the transaction's connection) copies the chunks in.
pub(super) async fn insert(
    tx: &impl GenericClient,
    copying: &tokio_postgres::Client,
    session: &str,
    entry: &BlobEntry,
    content: &[u8],
) -> Result<()> {
    let insert = tx
        .prepare_cached(
            "INSERT INTO observations (id, plugin, session, turn_id, step_num, executor_name, content_kind,
                                       size_bytes, size_chars, ascii, sha256, summary, metadata, created_at_ms,
                                       expires_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .await?;
    tx.execute(
        &insert,
        &[
            &entry.id,
            &entry.plugin,
            &session,
            &entry.turn_id,
            &i64::from(entry.step),
            &entry.tool,
            &kind_tag(entry.kind),
            &(content.len() as i64),
            &(entry.size_chars as i64),
            &entry.ascii,
            &entry.sha256,
            &entry.summary,
            &entry.metadata,
            &(entry.created_at_ms.min(i64::MAX as u64) as i64),
            &(entry.expires_at_ms.min(i64::MAX as u64) as i64),
        ],
    )
    .await?;
    let copy = tx.prepare_cached("COPY observation_chunks (id, seq, data) FROM STDIN BINARY").await?;
    let sink = copying.copy_in(&copy).await?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::INT4, Type::BYTEA]));
    for (seq, chunk) in content.chunks(CHUNK).enumerate() {
        writer.as_mut().write(&[&entry.id, &(seq as i32), &chunk]).await?;
    }
    writer.finish().await?;
    Ok(())
}

/// The entry `id` of `plugin` in `session`.
pub(super) async fn stat(
    client: &impl GenericClient,
    plugin: &str,
    session: &str,
    id: &str,
) -> Result<Option<BlobEntry>> {
    let stmt = client.prepare_cached(&format!("{SELECT} WHERE id = $1 AND plugin = $2 AND session = $3")).await?;
    Ok(client.query_opt(&stmt, &[&id, &plugin, &session]).await?.as_ref().map(read_entry))
}

/// Bytes and count of `plugin`'s entries in `session` unexpired at `now_ms`.
pub(super) async fn live_usage(
    client: &impl GenericClient,
    plugin: &str,
    session: &str,
    now_ms: u64,
) -> Result<LiveUsage> {
    let stmt = client
        .prepare_cached(
            "SELECT COALESCE(SUM(size_bytes), 0)::bigint, COUNT(*) FROM observations
              WHERE session = $2 AND plugin = $1 AND expires_at_ms >= $3",
        )
        .await?;
    let row = client.query_one(&stmt, &[&plugin, &session, &(now_ms as i64)]).await?;
    Ok(LiveUsage { bytes: row.get::<_, i64>(0) as u64, entries: row.get::<_, i64>(1) as u64 })
}

/// Entries in `session` (of one plugin and one turn when given), oldest first.
pub(super) async fn list(
    client: &impl GenericClient,
    plugin: Option<&str>,
    session: &str,
    turn_id: Option<&str>,
) -> Result<Vec<BlobEntry>> {
    let stmt = client
        .prepare_cached(&format!(
            "{SELECT} WHERE session = $1 AND ($2::text IS NULL OR plugin = $2) AND ($3::text IS NULL OR turn_id = $3)
             ORDER BY created_at_ms, ordinal"
        ))
        .await?;
    Ok(client.query(&stmt, &[&session, &plugin, &turn_id]).await?.iter().map(read_entry).collect())
}

/// Up to `len` bytes of the entry from `offset`, in one statement: the entry's size and, from
/// each chunk the range touches, just the bytes inside the range.
pub(super) async fn read(
    client: &impl GenericClient,
    plugin: &str,
    session: &str,
    id: &str,
    offset: u64,
    len: usize,
) -> Result<Option<Vec<u8>>> {
    let stmt = client
        .prepare_cached(
            "SELECT o.size_bytes,
                    substring(c.data FROM (greatest($4::bigint - c.seq::bigint * 65536, 0) + 1)::int
                                     FOR (least($5::bigint - c.seq::bigint * 65536, 65536)
                                          - greatest($4::bigint - c.seq::bigint * 65536, 0))::int)
               FROM observations o
               LEFT JOIN observation_chunks c
                 ON c.id = o.id AND c.seq::bigint >= $4::bigint / 65536 AND c.seq::bigint * 65536 < $5::bigint
              WHERE o.id = $1 AND o.plugin = $2 AND o.session = $3
              ORDER BY c.seq",
        )
        .await?;
    debug_assert_eq!(CHUNK, 65536, "the statement's chunk size");
    let start = offset.min(i64::MAX as u64 / 2) as i64;
    let end = start.saturating_add(len.min(i64::MAX as usize / 2) as i64);
    let rows = client.query(&stmt, &[&id, &plugin, &session, &start, &end]).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let size: i64 = rows[0].get(0);
    let mut buf = Vec::with_capacity(rows.iter().map(|r| r.get::<_, Option<&[u8]>>(1).map_or(0, <[u8]>::len)).sum());
    for row in &rows {
        if let Some(bytes) = row.get::<_, Option<&[u8]>>(1) {
            buf.extend_from_slice(bytes);
        }
    }
    // A chunk missing or cut short (a damaged database) is an error, not a shorter read.
    let expected = end.min(size).saturating_sub(start.min(size));
    if buf.len() as i64 != expected {
        return Err(anyhow::anyhow!(
            "observation `{id}` is damaged in the database: {} of its bytes {start}..{} are stored",
            buf.len(),
            start + expected
        )
        .into());
    }
    Ok(Some(buf))
}

/// Removes expired entries (of one plugin and session when given); returns how many.
/// Collections are serialized by an advisory lock, so two never contend for the same rows (the
/// one at the start of a turn, in the begin statement, skips when another holds it).
pub(super) async fn gc(client: &mut Object, scope: Option<(&str, &str)>, now_ms: u64) -> Result<u32> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&GC_LOCK]).await?;
    let now = now_ms as i64;
    let removed = match scope {
        Some((plugin, session)) => {
            tx.execute(
                "DELETE FROM observations WHERE expires_at_ms < $1 AND plugin = $2 AND session = $3",
                &[&now, &plugin, &session],
            )
            .await?
        }
        None => tx.execute("DELETE FROM observations WHERE expires_at_ms < $1", &[&now]).await?,
    };
    tx.commit().await?;
    Ok(removed as u32)
}

/// Removes the entries expired at `now_ms` in one statement, unless another collection holds
/// the lock: that one removes them.
pub(super) async fn collect_at_turn_start(client: &impl GenericClient, now_ms: u64) -> Result<()> {
    let stmt = client
        .prepare_cached("DELETE FROM observations WHERE expires_at_ms < $1 AND (SELECT pg_try_advisory_xact_lock($2))")
        .await?;
    client.execute(&stmt, &[&(now_ms as i64), &GC_LOCK]).await?;
    Ok(())
}

/// An `observations` row read with [`SELECT`].
fn read_entry(row: &Row) -> BlobEntry {
    BlobEntry {
        id: row.get(0),
        plugin: row.get(1),
        turn_id: row.get(2),
        step: row.get::<_, i64>(3) as u32,
        tool: row.get(4),
        kind: kind_from(row.get(5)),
        size_bytes: row.get::<_, i64>(6) as u64,
        size_chars: row.get::<_, i64>(7) as u64,
        ascii: row.get(8),
        sha256: row.get(9),
        summary: row.get(10),
        metadata: row.get(11),
        created_at_ms: row.get::<_, i64>(12) as u64,
        expires_at_ms: row.get::<_, i64>(13) as u64,
    }
}
