//! The `index` import: a plugin's search index of the session's project, searched across the
//! project's sessions (`wit/index.wit`).
//!
//! Scope: every call names only the plugin's own namespace of the call's project (the host
//! fills in both); a query is reduced to words before it reaches the backend
//! (`store::index::words`). Privacy: a document is scrubbed (`crate::privacy`) before it is
//! kept. Writes are kept with the call and applied in its commit, like storage's; reads are
//! database trips bounded by the call's deadline (a search still running then is interrupted
//! in the database, not only abandoned).

use crate::bindings::scratchpad::plugin::index::{Access, Document, Hit, Host, IndexError, Query, Stored};
use crate::bindings::scratchpad::plugin::storage::Quota;
use crate::capabilities::call::{CallState, ProjectIndex, SessionScope, within_deadline};
use crate::grants::Power;
use crate::store::index::{MAX_RESULTS, snippet, words};
use crate::store::{IndexQuery, IndexWrite, IndexedDocument};

/// Most writes (`put` and `remove`) one call may make: each is applied in the call's commit,
/// outside its deadline, so their number bounds that work.
pub(crate) const MAX_WRITES_PER_CALL: usize = 64;
/// Longest document id, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 256;
/// Longest kind, in bytes.
pub(crate) const MAX_KIND_BYTES: usize = 32;
/// Longest title, in bytes.
pub(crate) const MAX_TITLE_BYTES: usize = 256;
/// Longest text, in bytes.
pub(crate) const MAX_TEXT_BYTES: usize = 64 << 10;

fn invalid(message: impl Into<String>) -> IndexError {
    IndexError::Invalid(message.into())
}

fn check_id(id: &str) -> Result<(), IndexError> {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(invalid(format!("an id has 1 to {MAX_ID_BYTES} bytes, not {}", id.len())));
    }
    if id.chars().any(char::is_control) {
        return Err(invalid("an id may not hold control characters"));
    }
    Ok(())
}

fn check_kind(kind: &str) -> Result<(), IndexError> {
    let ok = !kind.is_empty()
        && kind.len() <= MAX_KIND_BYTES
        && kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("a kind is 1 to {MAX_KIND_BYTES} bytes of a-z, 0-9, _ and -; `{kind}` is not")))
    }
}

/// Checks a document's fields against their bounds (before privacy scrubbing, which only
/// shortens them); the error says which.
pub(crate) fn check_document(id: &str, kind: &str, title: &str, text: &str) -> Result<(), String> {
    let text_of = |error: IndexError| match error {
        IndexError::Invalid(message) => message,
        other => format!("{other:?}"),
    };
    check_id(id).and_then(|()| check_kind(kind)).map_err(text_of)?;
    if title.len() > MAX_TITLE_BYTES {
        return Err(format!("a title has at most {MAX_TITLE_BYTES} bytes"));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!("the text is {} bytes; the most is {MAX_TEXT_BYTES}", text.len()));
    }
    // Text columns of PostgreSQL cannot hold NUL; refused on every backend alike.
    if [id, title, text].iter().any(|t| t.contains('\0')) {
        return Err("id, title and text must not contain NUL characters".into());
    }
    Ok(())
}

fn check_limit(limit: u32) -> Result<(), IndexError> {
    if (1..=MAX_RESULTS).contains(&limit) {
        Ok(())
    } else {
        Err(invalid(format!("limit is 1 to {MAX_RESULTS}, not {limit}")))
    }
}

/// Unix milliseconds as the database keeps them.
fn ms(value: u64) -> i64 {
    value.min(i64::MAX as u64) as i64
}

fn to_stored(document: IndexedDocument) -> Stored {
    Stored {
        id: document.id,
        kind: document.kind,
        title: document.title,
        text: document.text,
        at_ms: document.at_ms.max(0) as u64,
        session: document.session,
    }
}

/// A failed database trip as the call's failure: a search interrupted at the deadline is the
/// call's timeout.
fn trip_failed(error: wasmtime::Error) -> wasmtime::Error {
    let deadline = match error.downcast_ref::<crate::Error>() {
        Some(crate::Error::Other(cause)) => cause.downcast_ref::<crate::error::DeadlineExceeded>().is_some(),
        _ => false,
    };
    if deadline { crate::error::DeadlineExceeded.into() } else { error }
}

impl CallState {
    /// The call's scope and its project's index, or why there is none.
    fn index_scope(&self) -> Result<(&SessionScope, &ProjectIndex), IndexError> {
        match &self.session {
            Some(scope @ SessionScope { project: Some(project), .. }) => Ok((scope, project)),
            _ => Err(IndexError::NoProject),
        }
    }

    /// Like [`CallState::index_scope`], for a write.
    fn writable_index(&self) -> Result<(SessionScope, ProjectIndex), IndexError> {
        let (scope, project) = self.index_scope()?;
        if !project.writable {
            return Err(IndexError::ReadOnly);
        }
        if self.pending_index.len() >= MAX_WRITES_PER_CALL {
            return Err(invalid(format!("one call may make at most {MAX_WRITES_PER_CALL} index writes")));
        }
        Ok((scope.clone(), project.clone()))
    }
}

impl Host for CallState {
    fn current_access(&mut self) -> wasmtime::Result<Access> {
        self.require(Power::Index)?;
        Ok(match self.index_scope() {
            Err(_) => Access::None,
            Ok((_, project)) if project.writable => Access::ReadWrite,
            Ok(_) => Access::Read,
        })
    }

    async fn put(&mut self, document: Document) -> wasmtime::Result<Result<(), IndexError>> {
        self.require(Power::Index)?;
        let (scope, project) = match self.writable_index() {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        if let Err(message) = check_document(&document.id, &document.kind, &document.title, &document.text) {
            return Ok(Err(invalid(message)));
        }
        let text = crate::privacy::scrub(&document.text);
        let title = crate::privacy::scrub(&document.title);
        if text.trim().is_empty() {
            return Ok(Ok(()));
        }
        let kept = IndexedDocument {
            project: project.project.clone(),
            plugin: scope.plugin.clone(),
            id: document.id,
            kind: document.kind,
            title,
            text,
            at_ms: ms(document.at_ms),
            session: scope.session.clone(),
        };
        // The quota counts what the project's index holds now and this call's pending puts (a
        // replaced document still counts until the commit: a bound from above).
        let held = within_deadline(self.deadline, scope.db.index_usage(Some(&project.project)))
            .await
            .map_err(trip_failed)?
            .into_iter()
            .find(|usage| usage.plugin == scope.plugin)
            .map_or(0, |usage| usage.bytes);
        let pending: u64 = self
            .pending_index
            .iter()
            .map(|write| match write {
                IndexWrite::Put(document) => document.bytes(),
                IndexWrite::Remove(_) => 0,
            })
            .sum();
        let (used, requested, limit) = (held + pending, kept.bytes(), self.plugin.limits.index_quota_bytes);
        if used.saturating_add(requested) > limit {
            return Ok(Err(IndexError::QuotaExceeded(Quota { used, requested, limit })));
        }
        self.pending_index.push(IndexWrite::Put(kept));
        Ok(Ok(()))
    }

    async fn remove(&mut self, id: String) -> wasmtime::Result<Result<bool, IndexError>> {
        self.require(Power::Index)?;
        let (scope, project) = match self.writable_index() {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        if let Err(error) = check_id(&id) {
            return Ok(Err(error));
        }
        let there = within_deadline(self.deadline, scope.db.index_get(&project.project, &scope.plugin, &id))
            .await
            .map_err(trip_failed)?
            .is_some();
        self.pending_index.push(IndexWrite::Remove(id));
        Ok(Ok(there))
    }

    async fn get(&mut self, id: String) -> wasmtime::Result<Option<Stored>> {
        self.require(Power::Index)?;
        let Ok((scope, project)) = self.index_scope() else { return Ok(None) };
        if check_id(&id).is_err() {
            return Ok(None);
        }
        let found = within_deadline(self.deadline, scope.db.index_get(&project.project, &scope.plugin, &id))
            .await
            .map_err(trip_failed)?;
        Ok(found.map(to_stored))
    }

    async fn search(&mut self, query: Query) -> wasmtime::Result<Result<Vec<Hit>, IndexError>> {
        self.require(Power::Index)?;
        let (scope, project) = match self.index_scope() {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        let words = match words(&query.text) {
            Ok(words) => words,
            Err(message) => return Ok(Err(invalid(message))),
        };
        if let Some(kind) = &query.kind
            && let Err(error) = check_kind(kind)
        {
            return Ok(Err(error));
        }
        if let Err(error) = check_limit(query.limit) {
            return Ok(Err(error));
        }
        let wanted = IndexQuery {
            words,
            kind: query.kind,
            session: query.session,
            since_ms: query.since_ms.map(ms),
            not_session: query.other_sessions.then(|| scope.session.clone()),
            limit: query.limit,
        };
        let trip = scope.db.index_search(&project.project, &scope.plugin, &wanted, self.deadline);
        let found = within_deadline(self.deadline, trip).await.map_err(trip_failed)?;
        self.index_reads.0 += 1;
        self.index_reads.1 += found.len() as u32;
        Ok(Ok(found
            .into_iter()
            .map(|(document, score)| Hit {
                snippet: snippet(&document.text, &wanted.words),
                text_bytes: document.text.len() as u32,
                id: document.id,
                kind: document.kind,
                title: document.title,
                at_ms: document.at_ms.max(0) as u64,
                session: document.session,
                score,
            })
            .collect()))
    }

    async fn recent(
        &mut self,
        kind: Option<String>,
        other_sessions: bool,
        limit: u32,
    ) -> wasmtime::Result<Result<Vec<Stored>, IndexError>> {
        self.require(Power::Index)?;
        let (scope, project) = match self.index_scope() {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        if let Some(kind) = &kind
            && let Err(error) = check_kind(kind)
        {
            return Ok(Err(error));
        }
        if let Err(error) = check_limit(limit) {
            return Ok(Err(error));
        }
        let not_session = other_sessions.then_some(scope.session.as_str());
        let trip = scope.db.index_recent(&project.project, &scope.plugin, kind.as_deref(), not_session, limit);
        let found = within_deadline(self.deadline, trip).await.map_err(trip_failed)?;
        self.index_reads.0 += 1;
        self.index_reads.1 += found.len() as u32;
        Ok(Ok(found.into_iter().map(to_stored).collect()))
    }
}
