//! Recall, as the host serves it: which project's index a call may use (the operator's
//! [`Recall`](crate::Recall) settings applied), and the operator's side of the projects' search
//! indexes — search them, see what the next new session of a project would receive, forget,
//! export and import (`scratchpad recall …`, the viewer). What is indexed and what a session
//! is shown are the plugins' (the session scratchpad's recall); the host keeps, scopes, scrubs
//! and searches.

use serde::Serialize;

use crate::capabilities::call::ProjectIndex;
use crate::config::RecallMode;
use crate::error::{Error, Result};
use crate::host::Host;
use crate::prompt::Prompt;
use crate::store::index::{MAX_RESULTS, snippet, words};
use crate::store::{IndexFilter, IndexQuery, IndexUsage, IndexedDocument};

/// The id the imagined session of [`Host::preview_new_session`] runs under (no real session
/// may be called this: it is not a valid session id).
const IMAGINED_SESSION: &str = "(next new session)";

/// One document found by [`Host::recall_search`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct IndexHit {
    /// The document.
    pub document: IndexedDocument,
    /// Its text around the first word that matched.
    pub snippet: String,
    /// How well it matched within its plugin's answer (higher is better).
    pub score: f64,
}

impl Host {
    /// The index a call in a session of `project` may use, as the operator allows it.
    pub(crate) fn recall_project(&self, project: Option<&str>) -> Option<ProjectIndex> {
        let recall = &self.inner.recall;
        let project = project?;
        if recall.mode == RecallMode::Off || recall.exclude.iter().any(|excluded| excluded == project) {
            return None;
        }
        Some(ProjectIndex { project: project.to_owned(), writable: recall.mode == RecallMode::On })
    }

    /// The documents of `project` (every plugin's) matching `query`, best first within each
    /// plugin, at most `limit` (1 to 50) per plugin. The query is words only, as a plugin's.
    pub async fn recall_search(&self, project: &str, query: &str, limit: u32) -> Result<Vec<IndexHit>> {
        crate::project::check_project(project)?;
        let words = words(query).map_err(|message| Error::invalid("query", message))?;
        if !(1..=MAX_RESULTS).contains(&limit) {
            return Err(Error::invalid("limit", format!("limit is 1 to {MAX_RESULTS}, not {limit}")));
        }
        let query = IndexQuery { words, kind: None, session: None, since_ms: None, not_session: None, limit };
        let found = self.inner.db.index_search_all(project, &query).await?;
        Ok(found
            .into_iter()
            .map(|(document, score)| IndexHit { snippet: snippet(&document.text, &query.words), document, score })
            .collect())
    }

    /// What each plugin keeps in the index of `project`, or of every project.
    pub async fn recall_usage(&self, project: Option<&str>) -> Result<Vec<IndexUsage>> {
        if let Some(project) = project {
            crate::project::check_project(project)?;
        }
        self.inner.db.index_usage(project).await
    }

    /// Every document `filter` means, oldest first (`scratchpad recall export`).
    pub async fn recall_documents(&self, filter: &IndexFilter) -> Result<Vec<IndexedDocument>> {
        self.inner.db.index_documents(&check_filter(filter)?).await
    }

    /// Removes every document `filter` means from the index, and from the disk (the freed
    /// pages are vacuumed); returns how many. Sessions' own state is not touched.
    pub async fn recall_forget(&self, filter: &IndexFilter) -> Result<u64> {
        self.inner.db.index_forget(&check_filter(filter)?).await
    }

    /// Keeps `documents` (from [`Host::recall_documents`] of this or another store), each
    /// scrubbed as a plugin's would be and replacing any with its project, plugin and id;
    /// returns how many were kept. A document that breaks a bound refuses the whole import.
    pub async fn recall_import(&self, documents: Vec<IndexedDocument>) -> Result<u64> {
        let mut kept = Vec::with_capacity(documents.len());
        for (line, mut document) in documents.into_iter().enumerate() {
            let at = |message: String| Error::invalid("document", format!("document {}: {message}", line + 1));
            crate::project::check_project(&document.project).map_err(|e| at(e.to_string()))?;
            crate::capabilities::index::check_document(&document.id, &document.kind, &document.title, &document.text)
                .map_err(at)?;
            if document.plugin.is_empty() || document.session.is_empty() {
                return Err(at("its plugin and session must not be empty".into()));
            }
            document.text = crate::privacy::scrub(&document.text);
            document.title = crate::privacy::scrub(&document.title);
            if !document.text.trim().is_empty() {
                kept.push(document);
            }
        }
        self.inner.db.index_import(kept).await
    }

    /// What a new session of `project` would receive in its first prompt, for the message
    /// `message`: every plugin's `before-query` on an imagined session with empty state, in
    /// its first turn. Nothing is read of any session and nothing is written.
    pub async fn preview_new_session(&self, project: &str, message: &str) -> Result<Prompt> {
        crate::project::check_project(project)?;
        let mut tx = self.begin_imagined(IMAGINED_SESSION, project);
        self.query(&mut tx, message).await
    }
}

/// `filter` with its project key checked and its query reduced to words.
fn check_filter(filter: &IndexFilter) -> Result<IndexFilter> {
    let mut checked = filter.clone();
    if let Some(project) = &filter.project {
        crate::project::check_project(project)?;
    }
    if let Some(words) = &filter.words {
        let words = self::words(&words.join(" ")).map_err(|message| Error::invalid("query", message))?;
        checked.words = Some(words);
    }
    Ok(checked)
}
