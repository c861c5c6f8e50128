//! The seam between a plugin's logic and the host's `index` import: full-text search over the
//! documents a plugin keeps for the session's project, across the project's sessions (see
//! `wit/index.wit`).

use std::collections::BTreeMap;

use crate::bindings::scratchpad::plugin::index as wit_index;

pub use wit_index::{Access, Document, Hit, IndexError, Query, Stored};

/// A plugin's index of the current session's project.
pub trait Index {
    /// What the session may do with it.
    fn access(&self) -> Access;
    /// Keeps `document`, replacing one with the same id.
    fn put(&mut self, document: Document) -> Result<(), IndexError>;
    /// Removes document `id`; returns whether it was there.
    fn remove(&mut self, id: &str) -> Result<bool, IndexError>;
    /// Document `id`, if kept.
    fn get(&self, id: &str) -> Option<Stored>;
    /// The documents matching `query`, best first.
    fn search(&self, query: &Query) -> Result<Vec<Hit>, IndexError>;
    /// The newest documents, of `kind` when given.
    fn recent(&self, kind: Option<&str>, other_sessions: bool, limit: u32) -> Result<Vec<Stored>, IndexError>;
}

/// [`Index`] through the host's `index` import. Only usable inside a component.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostIndex;

impl Index for HostIndex {
    fn access(&self) -> Access {
        wit_index::current_access()
    }
    fn put(&mut self, document: Document) -> Result<(), IndexError> {
        wit_index::put(&document)
    }
    fn remove(&mut self, id: &str) -> Result<bool, IndexError> {
        wit_index::remove(id)
    }
    fn get(&self, id: &str) -> Option<Stored> {
        wit_index::get(id)
    }
    fn search(&self, query: &Query) -> Result<Vec<Hit>, IndexError> {
        wit_index::search(query)
    }
    fn recent(&self, kind: Option<&str>, other_sessions: bool, limit: u32) -> Result<Vec<Stored>, IndexError> {
        wit_index::recent(kind, other_sessions, limit)
    }
}

/// In-memory [`Index`] of one project for native unit tests: documents kept at once (no
/// transaction), matched by whole lowercase words and ranked by how many of the query's words
/// they hold. The host's ranking (BM25) and privacy filtering are not modelled; tests of those
/// run against the host.
#[derive(Debug, Clone)]
pub struct MemoryIndex {
    /// What the session may do.
    pub access: Access,
    /// The session the calls run in (recorded as each document's `session`).
    pub session: String,
    /// The kept documents, by id.
    pub documents: BTreeMap<String, Stored>,
}

impl MemoryIndex {
    /// An empty read-write index, with calls running in `session`.
    pub fn new(session: &str) -> MemoryIndex {
        MemoryIndex { access: Access::ReadWrite, session: session.to_owned(), documents: BTreeMap::new() }
    }

    fn readable(&self) -> Result<(), IndexError> {
        match self.access {
            Access::None => Err(IndexError::NoProject),
            _ => Ok(()),
        }
    }

    fn writable(&self) -> Result<(), IndexError> {
        match self.access {
            Access::None => Err(IndexError::NoProject),
            Access::Read => Err(IndexError::ReadOnly),
            Access::ReadWrite => Ok(()),
        }
    }

    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    }
}

impl Index for MemoryIndex {
    fn access(&self) -> Access {
        self.access
    }
    fn put(&mut self, document: Document) -> Result<(), IndexError> {
        self.writable()?;
        if document.text.trim().is_empty() {
            return Ok(());
        }
        let stored = Stored {
            id: document.id.clone(),
            kind: document.kind,
            title: document.title,
            text: document.text,
            at_ms: document.at_ms,
            session: self.session.clone(),
        };
        self.documents.insert(document.id, stored);
        Ok(())
    }
    fn remove(&mut self, id: &str) -> Result<bool, IndexError> {
        self.writable()?;
        Ok(self.documents.remove(id).is_some())
    }
    fn get(&self, id: &str) -> Option<Stored> {
        self.readable().ok()?;
        self.documents.get(id).cloned()
    }
    fn search(&self, query: &Query) -> Result<Vec<Hit>, IndexError> {
        self.readable()?;
        let wanted = Self::words(&query.text);
        if wanted.is_empty() {
            return Err(IndexError::Invalid("the query has no words".into()));
        }
        let mut hits: Vec<Hit> = self
            .documents
            .values()
            .filter(|d| query.kind.as_ref().is_none_or(|k| *k == d.kind))
            .filter(|d| query.session.as_ref().is_none_or(|s| *s == d.session))
            .filter(|d| query.since_ms.is_none_or(|t| d.at_ms >= t))
            .filter(|d| !query.other_sessions || d.session != self.session)
            .filter_map(|d| {
                let words = Self::words(&format!("{} {}", d.title, d.text));
                let score = wanted.iter().filter(|w| words.contains(w)).count();
                (score > 0).then(|| Hit {
                    id: d.id.clone(),
                    kind: d.kind.clone(),
                    title: d.title.clone(),
                    at_ms: d.at_ms,
                    session: d.session.clone(),
                    snippet: d.text.chars().take(240).collect(),
                    text_bytes: d.text.len() as u32,
                    score: score as f64,
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.at_ms.cmp(&a.at_ms)));
        hits.truncate(query.limit as usize);
        Ok(hits)
    }
    fn recent(&self, kind: Option<&str>, other_sessions: bool, limit: u32) -> Result<Vec<Stored>, IndexError> {
        self.readable()?;
        let mut kept: Vec<Stored> = self
            .documents
            .values()
            .filter(|d| kind.is_none_or(|k| k == d.kind))
            .filter(|d| !other_sessions || d.session != self.session)
            .cloned()
            .collect();
        kept.sort_by_key(|d| std::cmp::Reverse(d.at_ms));
        kept.truncate(limit as usize);
        Ok(kept)
    }
}
