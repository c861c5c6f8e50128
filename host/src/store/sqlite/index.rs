//! A project's search index on SQLite: `index_documents` holds each document once, the FTS5
//! table `index_text` indexes its title and text (external content, `unicode61` with
//! diacritics folded), ranked with BM25 (a title match weighs twice a text match). Writes are
//! applied in an operation's commit transaction (`operation.rs`); reads run on their own.
//!
//! A query's words (`store::index::words`) become a MATCH expression of quoted terms joined by
//! `OR`, a word of three characters or more as a prefix term: nothing the caller typed is
//! FTS5 syntax. A search still running at the call's deadline is interrupted (a progress
//! handler), so a pathological query never holds a blocking thread past it.

use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use crate::Result;
use crate::store::index::{IndexFilter, IndexQuery, IndexUsage, IndexWrite, IndexedDocument, prefix};

/// The FTS5 MATCH expression of `words`.
fn match_expression(words: &[String]) -> String {
    let terms: Vec<String> =
        words.iter().map(|w| if prefix(w) { format!("\"{w}\"*") } else { format!("\"{w}\"") }).collect();
    terms.join(" OR ")
}

const COLUMNS: &str = "d.project, d.plugin, d.id, d.kind, d.title, d.body, d.at_ms, d.session";

fn read_document(row: &Row<'_>) -> rusqlite::Result<IndexedDocument> {
    Ok(IndexedDocument {
        project: row.get(0)?,
        plugin: row.get(1)?,
        id: row.get(2)?,
        kind: row.get(3)?,
        title: row.get(4)?,
        text: row.get(5)?,
        at_ms: row.get(6)?,
        session: row.get(7)?,
    })
}

/// Applies one call's index writes inside the commit's transaction, in `project`.
pub(super) fn apply(tx: &Transaction<'_>, project: &str, plugin: &str, writes: &[IndexWrite]) -> Result<()> {
    for write in writes {
        match write {
            IndexWrite::Put(document) => put(tx, project, plugin, document)?,
            IndexWrite::Remove(id) => {
                tx.prepare_cached("DELETE FROM index_documents WHERE project = ?1 AND plugin = ?2 AND id = ?3")?
                    .execute(params![project, plugin, id])?;
            }
        }
    }
    Ok(())
}

fn put(conn: &Connection, project: &str, plugin: &str, document: &IndexedDocument) -> Result<()> {
    // A replaced document is deleted and inserted again, so both triggers keep the full-text
    // index and the usage in step.
    conn.prepare_cached("DELETE FROM index_documents WHERE project = ?1 AND plugin = ?2 AND id = ?3")?
        .execute(params![project, plugin, document.id])?;
    conn.prepare_cached(
        "INSERT INTO index_documents (project, plugin, id, session, kind, title, body, at_ms, bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        project,
        plugin,
        document.id,
        document.session,
        document.kind,
        document.title,
        document.text,
        document.at_ms,
        document.bytes() as i64
    ])?;
    Ok(())
}

/// Document `id` of `plugin` in `project`.
pub(super) fn get(conn: &Connection, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>> {
    let sql = format!("SELECT {COLUMNS} FROM index_documents d WHERE d.project = ?1 AND d.plugin = ?2 AND d.id = ?3");
    Ok(conn.prepare_cached(&sql)?.query_row(params![project, plugin, id], read_document).optional()?)
}

/// The best matches of `query`, each with its score (higher is better), stopping at `deadline`.
pub(super) fn search(
    conn: &mut Connection,
    project: &str,
    plugin: &str,
    query: &IndexQuery,
    deadline: Option<Instant>,
) -> Result<Vec<(IndexedDocument, f64)>> {
    let sql = format!(
        "SELECT {COLUMNS}, -bm25(index_text, 2.0, 1.0) AS score
         FROM index_text JOIN index_documents d ON d.seq = index_text.rowid
         WHERE index_text MATCH ?1 AND d.project = ?2 AND d.plugin = ?3
           AND (?4 IS NULL OR d.kind = ?4) AND (?5 IS NULL OR d.session = ?5)
           AND (?6 IS NULL OR d.at_ms >= ?6) AND (?7 IS NULL OR d.session <> ?7)
         ORDER BY score DESC, d.at_ms DESC, d.seq DESC LIMIT ?8"
    );
    let expression = match_expression(&query.words);
    let args =
        params![expression, project, plugin, query.kind, query.session, query.since_ms, query.not_session, query.limit];
    interruptible(conn, deadline, |conn| {
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(args, |row| Ok((read_document(row)?, row.get::<_, f64>(8)?)))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })
}

/// The newest documents of `plugin` in `project`.
pub(super) fn recent(
    conn: &Connection,
    project: &str,
    plugin: &str,
    kind: Option<&str>,
    not_session: Option<&str>,
    limit: u32,
) -> Result<Vec<IndexedDocument>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM index_documents d
         WHERE d.project = ?1 AND d.plugin = ?2 AND (?3 IS NULL OR d.kind = ?3) AND (?4 IS NULL OR d.session <> ?4)
         ORDER BY d.at_ms DESC, d.seq DESC LIMIT ?5"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![project, plugin, kind, not_session, limit], read_document)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Bytes and documents each plugin keeps, of one project or of every one.
pub(super) fn usage(conn: &Connection, project: Option<&str>) -> Result<Vec<IndexUsage>> {
    let mut stmt = conn.prepare_cached(
        "SELECT project, plugin, documents, bytes FROM index_usage
         WHERE (?1 IS NULL OR project = ?1) AND documents > 0 ORDER BY project, plugin",
    )?;
    let rows = stmt.query_map([project], |r| {
        let count = |at: usize| r.get::<_, i64>(at).map(|n| n.max(0) as u64);
        Ok(IndexUsage { project: r.get(0)?, plugin: r.get(1)?, documents: count(2)?, bytes: count(3)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every document `filter` means, oldest first.
pub(super) fn documents(conn: &Connection, filter: &IndexFilter) -> Result<Vec<IndexedDocument>> {
    let (from, expression) = match &filter.words {
        Some(words) => (
            "index_text JOIN index_documents d ON d.seq = index_text.rowid WHERE index_text MATCH ?1",
            Some(match_expression(words)),
        ),
        None => ("index_documents d WHERE ?1 IS NULL", None),
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM {from}
           AND (?2 IS NULL OR d.project = ?2) AND (?3 IS NULL OR d.session = ?3)
           AND (?4 IS NULL OR d.at_ms >= ?4) AND (?5 IS NULL OR d.at_ms < ?5)
         ORDER BY d.at_ms, d.seq"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(
        params![expression, filter.project, filter.session, filter.since_ms, filter.until_ms],
        read_document,
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Removes every document `filter` means, then rebuilds the full-text index's segments and
/// vacuums, so nothing of them is left in the file. Returns how many.
pub(super) fn forget(conn: &mut Connection, filter: &IndexFilter) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let doomed = documents(&tx, filter)?;
    for document in &doomed {
        tx.prepare_cached("DELETE FROM index_documents WHERE project = ?1 AND plugin = ?2 AND id = ?3")?
            .execute(params![document.project, document.plugin, document.id])?;
    }
    tx.commit()?;
    if !doomed.is_empty() {
        // Deleted rows of an FTS5 index are only marked until its segments are merged, and freed
        // pages keep their bytes until a vacuum: both, so "forget" means gone from the disk.
        conn.execute("INSERT INTO index_text (index_text) VALUES ('optimize')", [])?;
        conn.execute_batch("PRAGMA secure_delete = ON; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    Ok(doomed.len() as u64)
}

/// Keeps `documents` (each in its own project and plugin), replacing any with the same id;
/// returns how many were written.
pub(super) fn import(conn: &mut Connection, documents: &[IndexedDocument]) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    import_in(&tx, documents)?;
    tx.commit()?;
    Ok(documents.len() as u64)
}

/// [`import`] inside the caller's transaction.
pub(super) fn import_in(conn: &Connection, documents: &[IndexedDocument]) -> Result<()> {
    for document in documents {
        put(conn, &document.project, &document.plugin, document)?;
    }
    Ok(())
}

/// Runs `f` on `conn`, interrupted once `deadline` passes (the error is then the deadline's).
fn interruptible<T>(
    conn: &mut Connection,
    deadline: Option<Instant>,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T> {
    let Some(deadline) = deadline else { return Ok(f(conn)?) };
    // Every 1,000 virtual-machine steps: a few microseconds apart.
    conn.progress_handler(1000, Some(move || Instant::now() >= deadline))?;
    let result = f(conn);
    conn.progress_handler(1000, None::<fn() -> bool>)?;
    match result {
        Err(rusqlite::Error::SqliteFailure(error, _)) if error.code == rusqlite::ErrorCode::OperationInterrupted => {
            Err(crate::Error::Other(anyhow::Error::new(crate::error::DeadlineExceeded)))
        }
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(n: usize) -> IndexedDocument {
        IndexedDocument {
            project: "p".into(),
            plugin: "a".into(),
            id: format!("d{n}"),
            kind: "note".into(),
            title: String::new(),
            text: format!("parser cache timezone note number {n}"),
            at_ms: n as i64,
            session: "s".into(),
        }
    }

    /// A search still running at the call's deadline is stopped inside SQLite (its blocking
    /// thread is free again), answering the deadline, not a database error; without a deadline
    /// the same search answers.
    #[test]
    fn a_search_past_its_deadline_is_interrupted_in_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("index.db")).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        import(&mut conn, &(0..3000).map(document).collect::<Vec<_>>()).unwrap();
        let query = IndexQuery {
            words: vec!["parser".into(), "cache".into()],
            kind: None,
            session: None,
            since_ms: None,
            not_session: None,
            limit: 50,
        };
        let past = Some(Instant::now());
        let stopped = search(&mut conn, "p", "a", &query, past).unwrap_err();
        let deadline =
            matches!(&stopped, crate::Error::Other(e) if e.downcast_ref::<crate::error::DeadlineExceeded>().is_some());
        assert!(deadline, "{stopped:?}");
        let found = search(&mut conn, "p", "a", &query, None).unwrap();
        assert_eq!(found.len(), 50, "the connection works on, with no handler left behind");
        assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
    }
}
