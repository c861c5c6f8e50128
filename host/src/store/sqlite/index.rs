//! A project's search index on SQLite: `index_scopes` names each (project, plugin) by a small
//! integer and keeps its usage, `index_sessions` each session that kept a document;
//! `index_documents` holds each document once; the FTS5 table `index_text` indexes its title
//! and text (external content, `unicode61` with diacritics folded, `detail = none` and
//! `columnsize = 0`: which documents hold a word, no positions and no lengths, since the host
//! ranks). Writes are applied in an operation's commit transaction (`operation.rs`); reads run
//! on their own.
//!
//! A search asks the full-text index, word by word, for the newest-written documents of the
//! scope holding the word (at most [`CANDIDATES_PER_WORD`] each; then, for a word of three
//! characters or more that did not fill them whole, as a prefix term: [`search_as_prefix`]),
//! counts its words in each as it reads them, ranks them
//! ([`Candidates::rank`]), and reads whole only the hits. Each word is one
//! quoted FTS5 term made of letters and digits only: nothing the caller typed is FTS5 syntax. A
//! search still running at the call's deadline is interrupted (a progress handler), so a
//! pathological query never holds a blocking thread past it.

use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::Result;
use crate::store::index::{
    CANDIDATES_PER_WORD, Candidates, IndexFilter, IndexQuery, IndexUsage, IndexWrite, IndexedDocument, prefix,
    search_as_prefix,
};

/// The FTS5 term of one query word, whole or as a prefix.
fn term(word: &str, as_prefix: bool) -> String {
    if as_prefix { format!("\"{word}\"*") } else { format!("\"{word}\"") }
}

/// The FTS5 MATCH expression of any of `words` (a word of three characters or more also as a
/// prefix).
fn any_of(words: &[String]) -> String {
    words.iter().map(|w| term(w, prefix(w))).collect::<Vec<_>>().join(" OR ")
}

const COLUMNS: &str = "s.project, s.plugin, d.id, d.kind, d.title, d.body, d.at_ms, n.session";
/// The documents with their scope's and session's names, for [`COLUMNS`].
const DOCUMENTS: &str =
    "index_documents d JOIN index_scopes s ON s.scope = d.scope JOIN index_sessions n ON n.n = d.session";
/// The number of the session named by parameter `?N`, in SQL.
fn session_number(parameter: usize) -> String {
    format!("(SELECT n FROM index_sessions WHERE session = ?{parameter})")
}

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

/// The scope of `plugin` in `project`, if it was ever written to.
fn scope(conn: &Connection, project: &str, plugin: &str) -> Result<Option<i64>> {
    let mut stmt = conn.prepare_cached("SELECT scope FROM index_scopes WHERE project = ?1 AND plugin = ?2")?;
    Ok(stmt.query_row(params![project, plugin], |r| r.get(0)).optional()?)
}

/// The scope of `plugin` in `project`, made on its first write.
fn scope_for_write(conn: &Connection, project: &str, plugin: &str) -> Result<i64> {
    if let Some(scope) = scope(conn, project, plugin)? {
        return Ok(scope);
    }
    conn.prepare_cached("INSERT INTO index_scopes (project, plugin) VALUES (?1, ?2)")?
        .execute(params![project, plugin])?;
    Ok(conn.last_insert_rowid())
}

/// Applies one call's index writes inside the commit's transaction, in `project`.
pub(super) fn apply(tx: &Connection, project: &str, plugin: &str, writes: &[IndexWrite]) -> Result<()> {
    let scope = scope_for_write(tx, project, plugin)?;
    for write in writes {
        match write {
            IndexWrite::Put(document) => put(tx, scope, document)?,
            IndexWrite::Remove(id) => remove(tx, scope, id)?,
        }
    }
    Ok(())
}

fn remove(conn: &Connection, scope: i64, id: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM index_documents WHERE scope = ?1 AND id = ?2")?.execute(params![scope, id])?;
    Ok(())
}

fn put(conn: &Connection, scope: i64, document: &IndexedDocument) -> Result<()> {
    // A replaced document is deleted and inserted again, so both triggers keep the full-text
    // index and the usage in step (and it counts as newly written).
    remove(conn, scope, &document.id)?;
    conn.prepare_cached("INSERT INTO index_sessions (session) VALUES (?1) ON CONFLICT DO NOTHING")?
        .execute([&document.session])?;
    let insert = format!(
        "INSERT INTO index_documents (scope, id, session, kind, title, body, at_ms)
         VALUES (?1, ?2, {}, ?4, ?5, ?6, ?7)",
        session_number(3)
    );
    conn.prepare_cached(&insert)?.execute(params![
        scope,
        document.id,
        document.session,
        document.kind,
        document.title,
        document.text,
        document.at_ms
    ])?;
    Ok(())
}

/// Document `id` of `plugin` in `project`.
pub(super) fn get(conn: &Connection, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>> {
    let sql = format!("SELECT {COLUMNS} FROM {DOCUMENTS} WHERE s.project = ?1 AND s.plugin = ?2 AND d.id = ?3");
    Ok(conn.prepare_cached(&sql)?.query_row(params![project, plugin, id], read_document).optional()?)
}

/// One word's candidates: the newest documents of scope `?2` matching the FTS5 term `?1`
/// (with the query's filters `?3` to `?6`), at most `?7`.
fn candidates_sql() -> String {
    format!(
        "SELECT d.seq, d.at_ms, d.title, d.body
         FROM index_text JOIN index_documents d ON d.seq = index_text.rowid
         WHERE index_text MATCH ?1 AND d.scope = ?2
           AND (?3 IS NULL OR d.kind = ?3) AND (?4 IS NULL OR d.session = {})
           AND (?5 IS NULL OR d.at_ms >= ?5) AND (?6 IS NULL OR d.session IS NOT {})
         ORDER BY index_text.rowid DESC LIMIT ?7",
        session_number(4),
        session_number(6)
    )
}

/// The best of `query`'s hits in `plugin`'s index of `project`, each with its score (see the
/// module docs), stopping at `deadline`.
pub(super) fn search(
    conn: &mut Connection,
    project: &str,
    plugin: &str,
    query: &IndexQuery,
    deadline: Option<Instant>,
) -> Result<Vec<(IndexedDocument, f64)>> {
    let Some((scope, in_scope)) = conn
        .prepare_cached("SELECT scope, documents FROM index_scopes WHERE project = ?1 AND plugin = ?2")?
        .query_row(params![project, plugin], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .optional()?
    else {
        return Ok(Vec::new());
    };
    let sql = candidates_sql();
    let hit = format!("SELECT {COLUMNS} FROM {DOCUMENTS} WHERE d.seq = ?1");
    interruptible(conn, deadline, |conn| {
        let mut candidates = Candidates::new(&query.words, in_scope.max(0) as u64);
        let mut stmt = conn.prepare_cached(&sql)?;
        for word in &query.words {
            let mut found = 0;
            for as_prefix in [false, true] {
                if as_prefix && !search_as_prefix(word, found) {
                    break;
                }
                let args = params![
                    term(word, as_prefix),
                    scope,
                    query.kind,
                    query.session,
                    query.since_ms,
                    query.not_session,
                    CANDIDATES_PER_WORD
                ];
                let mut rows = stmt.query(args)?;
                while let Some(row) = rows.next()? {
                    found += 1;
                    // The text is counted where SQLite keeps it, not copied.
                    let seq: i64 = row.get(0)?;
                    if !candidates.contains(seq) {
                        let text = |at: usize| -> rusqlite::Result<&str> { Ok(row.get_ref(at)?.as_str()?) };
                        candidates.count(seq, row.get(1)?, text(2)?, text(3)?);
                    }
                }
            }
        }
        let mut hit = conn.prepare_cached(&hit)?;
        let mut hits = Vec::new();
        for (seq, score) in candidates.rank(query.limit as usize) {
            hits.push((hit.query_row([seq], read_document)?, score));
        }
        Ok(hits)
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
    let Some(scope) = scope(conn, project, plugin)? else { return Ok(Vec::new()) };
    let sql = format!(
        "SELECT {COLUMNS} FROM {DOCUMENTS}
         WHERE d.scope = ?1 AND (?2 IS NULL OR d.kind = ?2) AND (?3 IS NULL OR n.session <> ?3)
         ORDER BY d.at_ms DESC, d.seq DESC LIMIT ?4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![scope, kind, not_session, limit], read_document)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Bytes and documents each plugin keeps, of one project or of every one.
pub(super) fn usage(conn: &Connection, project: Option<&str>) -> Result<Vec<IndexUsage>> {
    let mut stmt = conn.prepare_cached(
        "SELECT project, plugin, documents, bytes FROM index_scopes
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
            format!("{DOCUMENTS} JOIN index_text ON index_text.rowid = d.seq WHERE index_text MATCH ?1"),
            Some(any_of(words)),
        ),
        None => (format!("{DOCUMENTS} WHERE ?1 IS NULL"), None),
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM {from}
           AND (?2 IS NULL OR s.project = ?2) AND (?3 IS NULL OR n.session = ?3)
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

/// Removes every document `filter` means, then merges the full-text index's segments and
/// vacuums, so nothing of them is left in the file. Returns how many.
pub(super) fn forget(conn: &mut Connection, filter: &IndexFilter) -> Result<u64> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let doomed = documents(&tx, filter)?;
    for document in &doomed {
        if let Some(scope) = scope(&tx, &document.project, &document.plugin)? {
            remove(&tx, scope, &document.id)?;
        }
    }
    // Sessions that no longer keep a document are forgotten with them.
    tx.execute("DELETE FROM index_sessions WHERE n NOT IN (SELECT session FROM index_documents)", [])?;
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
        put(conn, scope_for_write(conn, &document.project, &document.plugin)?, document)?;
    }
    Ok(())
}

/// Runs `f` on `conn`, interrupted once `deadline` passes (the error is then the deadline's).
fn interruptible<T>(
    conn: &mut Connection,
    deadline: Option<Instant>,
    f: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    let Some(deadline) = deadline else { return f(conn) };
    // Every 1,000 virtual-machine steps: a few microseconds apart.
    conn.progress_handler(1000, Some(move || Instant::now() >= deadline))?;
    let result = f(conn);
    conn.progress_handler(1000, None::<fn() -> bool>)?;
    match result {
        Err(crate::Error::Other(error))
            if error.downcast_ref::<rusqlite::Error>().is_some_and(|e| {
                matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::OperationInterrupted)
            }) =>
        {
            Err(crate::Error::Other(anyhow::Error::new(crate::error::DeadlineExceeded)))
        }
        other => other,
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

    fn query(words: &[&str]) -> IndexQuery {
        IndexQuery {
            words: words.iter().map(|w| (*w).to_owned()).collect(),
            kind: None,
            session: None,
            since_ms: None,
            not_session: None,
            limit: 50,
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
        let query = query(&["parser", "cache"]);
        let past = Some(Instant::now());
        let stopped = search(&mut conn, "p", "a", &query, past).unwrap_err();
        let deadline =
            matches!(&stopped, crate::Error::Other(e) if e.downcast_ref::<crate::error::DeadlineExceeded>().is_some());
        assert!(deadline, "{stopped:?}");
        let found = search(&mut conn, "p", "a", &query, None).unwrap();
        assert_eq!(found.len(), 50, "the query's limit");
        assert_eq!(found[0].0.id, "d2999", "equal scores: newest first");
        assert_eq!(found[0].0, document(2999), "a hit is read whole");
    }

    /// A word's candidates are read from the full-text index, newest first, and only then
    /// checked against the scope: never every document of the scope probed for the word. (A
    /// later SQLite was seen to plan the other way, which over a large project takes seconds.)
    #[test]
    fn a_words_candidates_come_from_the_full_text_index_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("index.db")).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        super::super::stable_plans(&conn).unwrap();
        import(&mut conn, &(0..500).map(document).collect::<Vec<_>>()).unwrap();
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", candidates_sql())).unwrap();
        let args = params!["\"cache\"", 1, None::<String>, None::<String>, None::<i64>, Some("s"), 64];
        let plan: Vec<String> = stmt.query_map(args, |r| r.get(3)).unwrap().map(Result::unwrap).collect();
        let first = plan.iter().find(|step| step.starts_with("SCAN") || step.starts_with("SEARCH")).unwrap();
        assert!(first.starts_with("SCAN index_text VIRTUAL TABLE"), "{plan:#?}");
        assert!(plan.iter().any(|step| step.contains("d USING INTEGER PRIMARY KEY")), "{plan:#?}");
    }

    /// A word in few documents brings all of them, however old, beside a common word's newest;
    /// the rare word's document ranks first.
    #[test]
    fn a_rare_word_brings_all_its_documents_and_a_common_one_its_newest() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("index.db")).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let mut all: Vec<IndexedDocument> = (0..1000).map(document).collect();
        all[3].text = "the oldest note names marmalade".into();
        import(&mut conn, &all).unwrap();
        let found = search(&mut conn, "p", "a", &query(&["cache", "marmalade"]), None).unwrap();
        let ids: Vec<&str> = found.iter().map(|(d, _)| d.id.as_str()).collect();
        assert_eq!(ids[0], "d3", "the rare word's document: {ids:?}");
        assert_eq!(ids[1], "d999", "then the common word's newest: {ids:?}");
        let other = search(&mut conn, "q", "a", &query(&["cache"]), None).unwrap();
        assert!(other.is_empty(), "another project has nothing");
    }

    /// A session filter names the session; an unknown session is nobody's.
    #[test]
    fn session_filters_name_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("index.db")).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let mut all: Vec<IndexedDocument> = (0..4).map(document).collect();
        all[1].session = "t".into();
        import(&mut conn, &all).unwrap();
        let ids = |query: &IndexQuery, conn: &mut Connection| -> Vec<String> {
            search(conn, "p", "a", query, None).unwrap().into_iter().map(|(d, _)| d.id).collect()
        };
        let only_t = IndexQuery { session: Some("t".into()), ..query(&["cache"]) };
        assert_eq!(ids(&only_t, &mut conn), ["d1"]);
        let not_t = IndexQuery { not_session: Some("t".into()), ..query(&["cache"]) };
        assert_eq!(ids(&not_t, &mut conn), ["d3", "d2", "d0"]);
        let nobody = IndexQuery { session: Some("nobody".into()), ..query(&["cache"]) };
        assert!(ids(&nobody, &mut conn).is_empty());
        let not_nobody = IndexQuery { not_session: Some("nobody".into()), ..query(&["cache"]) };
        assert_eq!(ids(&not_nobody, &mut conn).len(), 4);
        assert_eq!(recent(&conn, "p", "a", None, Some("s"), 10).unwrap()[0].session, "t");
    }
}
