//! The blob store: offloaded observations. Each entry is a row; its content is a file of its
//! own (`contents.rs`), read back by range without loading it. Entries written before schema
//! version 5 keep their content in 64 KiB rows of `observation_chunks`, read with SQLite's
//! incremental blob I/O.

use rusqlite::{Connection, MAIN_DB, OptionalExtension, Row, params};

use super::contents::Contents;
use crate::Result;
use crate::store::{BlobEntry, CHUNK, LiveUsage, kind_from, kind_tag};

/// Inserts the row of `entry` of `session`, whose content file is written, inside an open
/// transaction.
pub(crate) fn insert_entry(tx: &Connection, session: &str, entry: &BlobEntry) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO observations (id, plugin, session, turn_id, step_num, executor_name, content_kind,
                                   size_bytes, size_chars, ascii, sha256, summary, metadata, created_at, expires_at,
                                   content_in_file)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 1)",
    )?;
    insert.execute(params![
        entry.id,
        entry.plugin,
        session,
        entry.turn_id,
        entry.step,
        entry.tool,
        kind_tag(entry.kind),
        entry.size_bytes as i64,
        entry.size_chars as i64,
        entry.ascii,
        entry.sha256,
        entry.summary,
        entry.metadata,
        entry.created_at_ms as f64 / 1000.0,
        entry.expires_at_ms as f64 / 1000.0,
    ])?;
    Ok(())
}

const SELECT: &str = "SELECT id, plugin, turn_id, step_num, executor_name, content_kind, size_bytes, size_chars, ascii,
                             sha256, summary, metadata, created_at, expires_at FROM observations";

/// The entry `id` of `plugin` in `session`.
pub(crate) fn stat(conn: &Connection, plugin: &str, session: &str, id: &str) -> Result<Option<BlobEntry>> {
    let sql = format!("{SELECT} WHERE id = ?1 AND plugin = ?2 AND session = ?3");
    Ok(conn.query_row(&sql, params![id, plugin, session], read_entry).optional()?)
}

/// Bytes and count of `plugin`'s entries in `session` that have not expired at `now_ms` (what
/// the blob quota and the entry cap count).
pub(crate) fn live_usage(conn: &Connection, plugin: &str, session: &str, now_ms: u64) -> Result<LiveUsage> {
    let (bytes, entries): (i64, i64) = conn.query_row(
        "SELECT COALESCE(SUM(size_bytes), 0), COUNT(*) FROM observations
         WHERE plugin = ?1 AND session = ?2 AND expires_at >= ?3",
        params![plugin, session, now_ms as f64 / 1000.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(LiveUsage { bytes: bytes as u64, entries: entries as u64 })
}

/// Entries of `plugin` in `session` (of one turn when `turn_id` is given), oldest first.
pub(crate) fn list(
    conn: &Connection,
    plugin: Option<&str>,
    session: &str,
    turn_id: Option<&str>,
) -> Result<Vec<BlobEntry>> {
    let sql = format!(
        "{SELECT} WHERE session = ?1 AND (?2 IS NULL OR plugin = ?2) AND (?3 IS NULL OR turn_id = ?3)
         ORDER BY created_at, rowid"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![session, plugin, turn_id], read_entry)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Up to `len` bytes of the entry from `offset`, reading only the chunks that hold them.
pub(crate) fn read(
    conn: &Connection,
    contents: &Contents,
    plugin: &str,
    session: &str,
    id: &str,
    offset: u64,
    len: usize,
) -> Result<Option<Vec<u8>>> {
    let mut entry = conn.prepare_cached(
        "SELECT size_bytes, content_in_file FROM observations WHERE id = ?1 AND plugin = ?2 AND session = ?3",
    )?;
    let found: Option<(i64, bool)> =
        entry.query_row(params![id, plugin, session], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
    let Some((size, in_file)) = found else { return Ok(None) };
    let (start, end) = clamp(size as u64, offset, len);
    if in_file {
        return contents.read(id, start as u64, end - start).map(Some);
    }
    let mut buf = Vec::with_capacity(end - start);
    let mut chunk_rows = conn.prepare_cached("SELECT rowid FROM observation_chunks WHERE id = ?1 AND seq = ?2")?;
    let mut at = start;
    while at < end {
        let seq = at / CHUNK;
        let rowid: i64 = chunk_rows.query_row(params![id, seq as i64], |r| r.get(0))?;
        let within = at - seq * CHUNK;
        let take = (CHUNK - within).min(end - at);
        let handle = conn.blob_open(MAIN_DB, "observation_chunks", "data", rowid, true)?;
        let from = buf.len();
        buf.resize(from + take, 0);
        handle.read_at_exact(&mut buf[from..], within)?;
        at += take;
    }
    Ok(Some(buf))
}

/// The byte range `[start, end)` a read of `len` bytes from `offset` gets of an entry of `size`
/// bytes: cut at the entry's end, empty past it.
pub(crate) fn clamp(size: u64, offset: u64, len: usize) -> (usize, usize) {
    let start = offset.min(size) as usize;
    (start, start.saturating_add(len).min(size as usize))
}

/// Removes expired entries (of one plugin and session when given), their rows first and then
/// their content files; returns how many.
pub(crate) fn gc(conn: &Connection, contents: &Contents, scope: Option<(&str, &str)>, now_ms: u64) -> Result<u32> {
    debug_assert!(conn.is_autocommit(), "files are removed once the rows' deletion is committed");
    let now = now_ms as f64 / 1000.0;
    let (plugin, session) = scope.unzip();
    let mut delete = conn.prepare_cached(
        "DELETE FROM observations WHERE expires_at < ?1 AND (?2 IS NULL OR (plugin = ?2 AND session = ?3))
         RETURNING id, content_in_file",
    )?;
    let removed = delete
        .query_map(params![now, plugin, session], |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // The statement ran in its own transaction, now committed: the rows are gone.
    let files: Vec<String> = removed.iter().filter(|(_, in_file)| *in_file).map(|(id, _)| id.clone()).collect();
    contents.remove(&files);
    Ok(removed.len() as u32)
}

/// Whether an entry `id` exists (for sweeping orphaned content files).
pub(crate) fn exists(conn: &Connection, id: &str) -> Result<bool> {
    Ok(conn.query_row("SELECT EXISTS(SELECT 1 FROM observations WHERE id = ?1)", [id], |r| r.get(0))?)
}

fn read_entry(row: &Row<'_>) -> rusqlite::Result<BlobEntry> {
    let kind: String = row.get(5)?;
    let created: f64 = row.get(12)?;
    let expires: f64 = row.get(13)?;
    Ok(BlobEntry {
        id: row.get(0)?,
        plugin: row.get(1)?,
        turn_id: row.get(2)?,
        step: row.get::<_, Option<u32>>(3)?.unwrap_or(0),
        tool: row.get::<_, Option<String>>(4)?.unwrap_or_default(),
        kind: kind_from(&kind),
        size_bytes: row.get::<_, i64>(6)? as u64,
        size_chars: row.get::<_, i64>(7)? as u64,
        ascii: row.get(8)?,
        sha256: row.get(9)?,
        summary: row.get::<_, Option<String>>(10)?.unwrap_or_default(),
        metadata: row.get(11)?,
        created_at_ms: (created * 1000.0).round() as u64,
        expires_at_ms: (expires * 1000.0).round() as u64,
    })
}
