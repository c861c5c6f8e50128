//! A project's search index on PostgreSQL: `index_documents` holds each document with a stored
//! `tsvector` of its title (weight A) and text (weight B) under the `simple` configuration (no
//! language's stemming or stop words: a project's notes mix languages and code), searched
//! through a GIN index. A trigger keeps each scope's usage for its quota. Writes are applied in
//! an operation's commit transaction (`operation.rs`).
//!
//! A search asks, word by word, for the newest-written documents of the scope holding the word
//! (at most `CANDIDATES_PER_WORD` each; then, for a word of three characters or more that did
//! not fill them whole, as a prefix, `:*`: `store::index::search_as_prefix`), and the host ranks
//! them (`store::index::Candidates`), as on SQLite. Each word (letters and digits only,
//! `store::index::words`) is a `tsquery` term: nothing the caller typed is `tsquery` syntax. A
//! search runs under a `statement_timeout` ending at the call's deadline.

use std::time::Instant;

use deadpool_postgres::{GenericClient, Object};
use tokio_postgres::Row;

use crate::Result;
use crate::store::index::{
    CANDIDATES_PER_WORD, Candidates, IndexFilter, IndexQuery, IndexUsage, IndexWrite, IndexedDocument, prefix,
    search_as_prefix,
};

/// The `to_tsquery('simple', …)` term of one query word, whole or as a prefix.
fn term(word: &str, as_prefix: bool) -> String {
    if as_prefix { format!("{word}:*") } else { word.to_owned() }
}

/// The `to_tsquery('simple', …)` text of any of `words` (a word of three characters or more
/// also as a prefix).
fn tsquery(words: &[String]) -> String {
    words.iter().map(|w| term(w, prefix(w))).collect::<Vec<_>>().join(" | ")
}

const COLUMNS: &str = "project, plugin, id, kind, title, body, at_ms, session";

fn read_document(row: &Row) -> IndexedDocument {
    IndexedDocument {
        project: row.get(0),
        plugin: row.get(1),
        id: row.get(2),
        kind: row.get(3),
        title: row.get(4),
        text: row.get(5),
        at_ms: row.get(6),
        session: row.get(7),
    }
}

/// Applies one call's index writes inside the commit's transaction, in `project`.
pub(super) async fn apply(
    client: &impl GenericClient,
    project: &str,
    plugin: &str,
    writes: &[IndexWrite],
) -> Result<()> {
    for write in writes {
        match write {
            IndexWrite::Put(document) => put(client, project, plugin, document).await?,
            IndexWrite::Remove(id) => {
                let stmt = client
                    .prepare_cached("DELETE FROM index_documents WHERE project = $1 AND plugin = $2 AND id = $3")
                    .await?;
                client.execute(&stmt, &[&project, &plugin, id]).await?;
            }
        }
    }
    Ok(())
}

async fn put(client: &impl GenericClient, project: &str, plugin: &str, document: &IndexedDocument) -> Result<()> {
    // Deleted and inserted again (not updated), so the usage trigger sees both.
    let delete =
        client.prepare_cached("DELETE FROM index_documents WHERE project = $1 AND plugin = $2 AND id = $3").await?;
    client.execute(&delete, &[&project, &plugin, &document.id]).await?;
    let insert = client
        .prepare_cached(
            "INSERT INTO index_documents (project, plugin, id, session, kind, title, body, at_ms, bytes)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .await?;
    let bytes = document.bytes() as i64;
    client
        .execute(
            &insert,
            &[
                &project,
                &plugin,
                &document.id,
                &document.session,
                &document.kind,
                &document.title,
                &document.text,
                &document.at_ms,
                &bytes,
            ],
        )
        .await?;
    Ok(())
}

/// Document `id` of `plugin` in `project`.
pub(super) async fn get(client: &Object, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>> {
    let sql = format!("SELECT {COLUMNS} FROM index_documents WHERE project = $1 AND plugin = $2 AND id = $3");
    let stmt = client.prepare_cached(&sql).await?;
    Ok(client.query_opt(&stmt, &[&project, &plugin, &id]).await?.as_ref().map(read_document))
}

/// The best of `query`'s hits in `plugin`'s index of `project`, each with its score: word by
/// word, the newest-written documents holding it, ranked by the host; within `deadline`.
pub(super) async fn search(
    client: &mut Object,
    project: &str,
    plugin: &str,
    query: &IndexQuery,
    deadline: Option<Instant>,
) -> Result<Vec<(IndexedDocument, f64)>> {
    let sql = format!(
        "SELECT {COLUMNS}, ordinal FROM index_documents
         WHERE project = $1 AND plugin = $2 AND search @@ to_tsquery('simple', $3)
           AND ($4::text IS NULL OR kind = $4) AND ($5::text IS NULL OR session = $5)
           AND ($6::bigint IS NULL OR at_ms >= $6) AND ($7::text IS NULL OR session <> $7)
         ORDER BY ordinal DESC LIMIT $8"
    );
    let limit = i64::from(CANDIDATES_PER_WORD);
    let tx = client.transaction().await?;
    // Each word's plan made for that word: a generic plan of the cached statement would choose
    // one way (the GIN index, or the newest rows first) for a rare word and a common one alike.
    tx.batch_execute("SET LOCAL plan_cache_mode = force_custom_plan").await?;
    if let Some(deadline) = deadline {
        let left = deadline.saturating_duration_since(Instant::now()).as_millis().max(1);
        tx.batch_execute(&format!("SET LOCAL statement_timeout = {left}")).await?;
    }
    let canceled = |error: tokio_postgres::Error| match error.code() {
        Some(&tokio_postgres::error::SqlState::QUERY_CANCELED) => {
            crate::Error::Other(anyhow::Error::new(crate::error::DeadlineExceeded))
        }
        _ => error.into(),
    };
    let in_scope: i64 = tx
        .query_opt("SELECT documents FROM index_usage WHERE project = $1 AND plugin = $2", &[&project, &plugin])
        .await
        .map_err(canceled)?
        .map_or(0, |row| row.get(0));
    let stmt = tx.prepare_cached(&sql).await?;
    let mut candidates = Candidates::new(&query.words, in_scope.max(0) as u64);
    let mut rows = std::collections::HashMap::new();
    for word in &query.words {
        let mut found = 0;
        for as_prefix in [false, true] {
            if as_prefix && !search_as_prefix(word, found) {
                break;
            }
            let term = term(word, as_prefix);
            let args: [&(dyn tokio_postgres::types::ToSql + Sync); 8] =
                [&project, &plugin, &term, &query.kind, &query.session, &query.since_ms, &query.not_session, &limit];
            for row in tx.query(&stmt, &args).await.map_err(canceled)? {
                found += 1;
                let ordinal: i64 = row.get(8);
                if !candidates.contains(ordinal) {
                    candidates.count(ordinal, row.get(6), row.get(4), row.get(5));
                    rows.insert(ordinal, row);
                }
            }
        }
    }
    tx.commit().await?;
    Ok(candidates
        .rank(query.limit as usize)
        .into_iter()
        .filter_map(|(ordinal, score)| Some((read_document(rows.get(&ordinal)?), score)))
        .collect())
}

/// The newest documents of `plugin` in `project`.
pub(super) async fn recent(
    client: &Object,
    project: &str,
    plugin: &str,
    kind: Option<&str>,
    not_session: Option<&str>,
    limit: u32,
) -> Result<Vec<IndexedDocument>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM index_documents
         WHERE project = $1 AND plugin = $2 AND ($3::text IS NULL OR kind = $3) AND ($4::text IS NULL OR session <> $4)
         ORDER BY at_ms DESC, ordinal DESC LIMIT $5"
    );
    let stmt = client.prepare_cached(&sql).await?;
    let rows = client.query(&stmt, &[&project, &plugin, &kind, &not_session, &i64::from(limit)]).await?;
    Ok(rows.iter().map(read_document).collect())
}

/// Bytes and documents each plugin keeps, of one project or of every one.
pub(super) async fn usage(client: &Object, project: Option<&str>) -> Result<Vec<IndexUsage>> {
    let stmt = client
        .prepare_cached(
            "SELECT project, plugin, documents, bytes FROM index_usage
             WHERE ($1::text IS NULL OR project = $1) AND documents > 0 ORDER BY project, plugin",
        )
        .await?;
    let rows = client.query(&stmt, &[&project]).await?;
    Ok(rows
        .iter()
        .map(|r| IndexUsage {
            project: r.get(0),
            plugin: r.get(1),
            documents: r.get::<_, i64>(2) as u64,
            bytes: r.get::<_, i64>(3) as u64,
        })
        .collect())
}

/// Every document `filter` means, oldest first.
pub(super) async fn documents(client: &impl GenericClient, filter: &IndexFilter) -> Result<Vec<IndexedDocument>> {
    let expression = filter.words.as_deref().map(tsquery);
    let sql = format!(
        "SELECT {COLUMNS} FROM index_documents
         WHERE ($1::text IS NULL OR search @@ to_tsquery('simple', $1))
           AND ($2::text IS NULL OR project = $2) AND ($3::text IS NULL OR session = $3)
           AND ($4::bigint IS NULL OR at_ms >= $4) AND ($5::bigint IS NULL OR at_ms < $5)
         ORDER BY at_ms, ordinal"
    );
    let rows = client
        .query(&sql, &[&expression, &filter.project, &filter.session, &filter.since_ms, &filter.until_ms])
        .await?;
    Ok(rows.iter().map(read_document).collect())
}

/// Removes every document `filter` means, then vacuums the table so their rows are not left
/// in its pages. Returns how many.
pub(super) async fn forget(client: &mut Object, filter: &IndexFilter) -> Result<u64> {
    let tx = client.transaction().await?;
    let doomed = documents(&tx, filter).await?;
    for document in &doomed {
        tx.execute(
            "DELETE FROM index_documents WHERE project = $1 AND plugin = $2 AND id = $3",
            &[&document.project, &document.plugin, &document.id],
        )
        .await?;
    }
    tx.commit().await?;
    if !doomed.is_empty() {
        client.batch_execute("VACUUM index_documents").await?;
    }
    Ok(doomed.len() as u64)
}

/// Keeps `documents`, each in its own project and plugin; returns how many.
pub(super) async fn import(client: &mut Object, documents: &[IndexedDocument]) -> Result<u64> {
    let tx = client.transaction().await?;
    import_in(&tx, documents).await?;
    tx.commit().await?;
    // A large import changes what the planner should know of the words (autovacuum would get
    // there later): refresh the statistics now, so the next searches plan for them.
    if documents.len() >= IMPORT_BATCH {
        client.batch_execute("ANALYZE index_documents").await?;
    }
    Ok(documents.len() as u64)
}

/// Documents one statement of [`import_in`] writes.
const IMPORT_BATCH: usize = 1000;

/// [`import`] inside the caller's transaction: a thousand documents a statement (arrays
/// unnested), not two statements each, so a large export imports in seconds. A document
/// replaces one with its project, plugin and id; of two in the import with the same, the later.
pub(super) async fn import_in(client: &impl GenericClient, documents: &[IndexedDocument]) -> Result<()> {
    let mut latest = std::collections::HashMap::new();
    for (at, document) in documents.iter().enumerate() {
        latest.insert((&document.project, &document.plugin, &document.id), at);
    }
    // In the import's order, as SQLite writes them (the newest-written last).
    let kept: Vec<&IndexedDocument> = documents
        .iter()
        .enumerate()
        .filter(|(at, d)| latest[&(&d.project, &d.plugin, &d.id)] == *at)
        .map(|(_, d)| d)
        .collect();
    // By the primary key's index: the ids of one project and plugin at a time. Not cached
    // statements: a plan cached while the table was small (a sequential scan) would stay while
    // the import grows it, and every batch would read the whole table.
    let delete = "DELETE FROM index_documents WHERE project = $1 AND plugin = $2 AND id = ANY($3)";
    let insert = "INSERT INTO index_documents (project, plugin, id, session, kind, title, body, at_ms, bytes)
                  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                       $7::text[], $8::bigint[], $9::bigint[])";
    for batch in kept.chunks(IMPORT_BATCH) {
        let column = |field: fn(&IndexedDocument) -> &str| batch.iter().map(|d| field(d)).collect::<Vec<&str>>();
        let (projects, plugins, ids) = (column(|d| &d.project), column(|d| &d.plugin), column(|d| &d.id));
        let mut scopes: Vec<(&str, &str)> = projects.iter().copied().zip(plugins.iter().copied()).collect();
        scopes.sort_unstable();
        scopes.dedup();
        for (project, plugin) in scopes {
            let of_scope: Vec<&str> =
                batch.iter().filter(|d| d.project == project && d.plugin == plugin).map(|d| d.id.as_str()).collect();
            client.execute(delete, &[&project, &plugin, &of_scope]).await?;
        }
        let (sessions, kinds, titles, texts) =
            (column(|d| &d.session), column(|d| &d.kind), column(|d| &d.title), column(|d| &d.text));
        let at: Vec<i64> = batch.iter().map(|d| d.at_ms).collect();
        let bytes: Vec<i64> = batch.iter().map(|d| d.bytes() as i64).collect();
        client.execute(insert, &[&projects, &plugins, &ids, &sessions, &kinds, &titles, &texts, &at, &bytes]).await?;
    }
    Ok(())
}
