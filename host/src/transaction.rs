//! One host operation on a session (a hook across the plugins, or one tool call) as one
//! optimistic transaction with two trips to the database:
//!
//! 1. **Begin** (one trip): enter the turn (counting a new turn id and collecting expired
//!    observations at the start of a new turn), read the session row and a snapshot of every
//!    involved plugin's scope, all at one session version.
//! 2. **Run** the plugins' calls against their snapshots, in memory. Each call is atomic: what
//!    it wrote is kept as its effects only when it returns normally (and, for a tool, `Ok`);
//!    a trap, timeout, broken limit or tool error keeps nothing.
//! 3. **Commit** (one trip, only when a call wrote something): inside `BEGIN IMMEDIATE`, if
//!    the session is still at the version read in step 1, apply every kept call's effects and
//!    bump the version. If another process committed to the session meanwhile, nothing is
//!    written and the whole operation runs once more on fresh snapshots — that time under a
//!    lease ([`Host::begin_leased`]): its begin first takes the lock every commit to the
//!    session needs (SQLite's write lock; PostgreSQL: the session's row), and holds it through
//!    the run to its commit, so the re-run cannot lose. An operation loses at most one race;
//!    no update is lost across processes; the optimistic first run stays the fast path.
//!    (Within a process, calls on one session are serialized by [`Host::lock`](crate::Host),
//!    so a conflict means another process.)
//!
//! When a call fails, the effects of the calls before it are still committed (each call is
//! atomic on its own) and the operation returns the failure.

use wasmtime::Store;

use crate::bindings::{Plugin, wit};
use crate::capabilities::call::{CallState, PendingCheckpoint, SessionScope};
use crate::capabilities::scope::Scope;
use crate::error::{Error, Result};
use crate::grants::Power;
use crate::host::{Host, check_id};
use crate::sandbox::{CallFuture, CallOutput, check_power, check_value};
use crate::store::{
    Commit, Head, IndexWrite, PendingBlob, PluginWrites, ScopeToRead, ScopeWrites, Snapshot, parse_guidance,
};
use crate::types::{Injection, TurnContext};

/// How often an operation runs at most: once optimistically, and once more under a lease
/// when another process committed to its session first (the lease makes the second run's
/// commit certain; a third would be a bug, reported as [`Error::Conflict`]).
pub(crate) const MAX_ATTEMPTS: usize = 2;

/// Which plugins an operation calls.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Involved {
    /// Every plugin, in order (the hooks).
    All,
    /// One plugin (a tool call goes to its owner).
    One(usize),
}

/// An operation in progress: what it read at its start, and the effects of its calls so far.
pub(crate) struct Tx<'h> {
    host: &'h Host,
    /// The session's id.
    pub(crate) session: String,
    /// The session row as read at the start.
    head: Head,
    /// The turn, as plugins see it.
    pub(crate) turn: wit::Turn,
    /// Each involved plugin's snapshot until its call takes it.
    snapshots: Vec<Option<Snapshot>>,
    effects: Vec<(usize, Effects)>,
    /// Whether the operation writes: false for a read ([`Host::begin_reading`]), which logs no
    /// plugin event either (a preview of a failing plugin would otherwise log one per look).
    writes: bool,
    /// The lock a re-run holds from its begin to its commit ([`Host::begin_leased`]).
    lease: Option<crate::store::Lease>,
    /// Events of a leased run, logged once its commit released the lock.
    deferred_events: Vec<(String, String, crate::EventKind, String)>,
}

/// What one successful call leaves to commit.
pub(crate) struct Effects {
    writes: ScopeWrites,
    blobs: Vec<PendingBlob>,
    index: Vec<IndexWrite>,
    checkpoint: Option<PendingCheckpoint>,
}

impl Effects {
    fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.blobs.is_empty() && self.index.is_empty()
    }
}

/// Runs `$body` — the contents of an async block that uses the open transaction `$tx` and
/// evaluates to a `Result` — as one transaction on `$turn`'s session (see the module docs),
/// re-running it when another process commits to the session first. A macro rather than a
/// function taking an async closure: the hooks' futures must be `Send`, which the compiler
/// cannot yet prove through a higher-ranked async closure bound.
macro_rules! transaction {
    ($host:expr, $turn:expr, $involved:expr, |$tx:ident| $body:block) => {{
        let host: &$crate::host::Host = $host;
        let turn: &$crate::types::TurnContext = $turn;
        host.check_turn(turn)?;
        let mut attempt = 0;
        loop {
            let mut $tx = match attempt {
                0 => host.begin(turn, $involved).await?,
                _ => host.begin_leased(turn, $involved).await?,
            };
            let result = async { $body }.await;
            match host.finish($tx).await? {
                $crate::store::Commit::Done => break result,
                $crate::store::Commit::Conflict => {
                    attempt += 1;
                    if attempt == $crate::transaction::MAX_ATTEMPTS {
                        break Err($crate::transaction::conflict(&turn.session_id));
                    }
                    tracing::debug!(session = %turn.session_id, "commit conflict; re-running under a lease");
                }
            }
        }
    }};
}
pub(crate) use transaction;

/// The error of an operation that lost [`MAX_ATTEMPTS`] commits in a row.
pub(crate) fn conflict(session: &str) -> Error {
    Error::Conflict { session: session.to_owned(), attempts: MAX_ATTEMPTS }
}

impl Host {
    /// Checks the ids of a turn before anything touches the database.
    pub(crate) fn check_turn(&self, turn: &TurnContext) -> Result<()> {
        check_id("session id", &turn.session_id)?;
        check_id("turn id", &turn.turn_id)
    }

    /// Step 1: one trip to the database.
    pub(crate) async fn begin(&self, turn: &TurnContext, involved: Involved) -> Result<Tx<'_>> {
        self.begin_at(&turn.session_id, Some(turn), involved).await
    }

    /// Step 1 of an operation that is never finished: `session` read as it is, in its current
    /// turn, which is not entered, so nothing is written (the viewer's preview). Dropping the
    /// transaction drops its calls' effects.
    pub(crate) async fn begin_reading(&self, session: &str, involved: Involved) -> Result<Tx<'_>> {
        check_id("session id", session)?;
        self.begin_at(session, None, involved).await
    }

    /// An operation that is never finished on a session that does not exist: the first turn
    /// of a new session `session` of `project`, every plugin's state empty and nothing read or
    /// written (what a new session would receive, for the viewer).
    pub(crate) fn begin_imagined(&self, session: &str, project: &str) -> Tx<'_> {
        let head = Head {
            turn_id: None,
            turn_index: -1,
            version: 0,
            guidance_json: "[]".into(),
            project: Some(project.to_owned()),
        };
        let turn = wit::Turn {
            session_id: session.to_owned(),
            turn_id: String::new(),
            turn_index: 0,
            tokens_used: None,
            context_window: None,
        };
        Tx {
            host: self,
            session: session.to_owned(),
            head,
            turn,
            snapshots: (0..self.inner.plugins.len()).map(|_| Some(Snapshot::default())).collect(),
            effects: Vec::new(),
            writes: false,
            lease: None,
            deferred_events: Vec::new(),
        }
    }

    /// Step 1 of an operation's re-run after it lost its commit: the same read, under the lock
    /// its commit needs, held until [`Host::finish`] (see the module docs).
    pub(crate) async fn begin_leased(&self, turn: &TurnContext, involved: Involved) -> Result<Tx<'_>> {
        self.begin_with(&turn.session_id, Some(turn), involved, true).await
    }

    async fn begin_at(&self, session: &str, turn: Option<&TurnContext>, involved: Involved) -> Result<Tx<'_>> {
        self.begin_with(session, turn, involved, false).await
    }

    async fn begin_with(
        &self,
        session: &str,
        turn: Option<&TurnContext>,
        involved: Involved,
        leased: bool,
    ) -> Result<Tx<'_>> {
        let scope = |i: usize| ScopeToRead { index: i, plugin: self.inner.plugins[i].info.name.clone() };
        let names: Vec<ScopeToRead> = match involved {
            Involved::All => (0..self.inner.plugins.len()).map(scope).collect(),
            Involved::One(i) => vec![scope(i)],
        };
        let (turn_id, tokens) = (turn.map(|t| t.turn_id.as_str()), turn.and_then(|t| t.tokens_used));
        let (read, lease) = match leased {
            true => {
                let (read, lease) = self.inner.db.begin_leased(session, turn_id, tokens, names).await?;
                (read, Some(lease))
            }
            false => (self.inner.db.begin(session, turn_id, tokens, names).await?, None),
        };
        let mut snapshots: Vec<Option<Snapshot>> = (0..self.inner.plugins.len()).map(|_| None).collect();
        for (i, snapshot) in read.snapshots {
            snapshots[i] = Some(snapshot);
        }
        let wit_turn = wit::Turn {
            session_id: session.to_owned(),
            turn_id: turn_id.map(str::to_owned).or_else(|| read.head.turn_id.clone()).unwrap_or_default(),
            turn_index: read.head.turn_index.max(0) as u32,
            tokens_used: tokens,
            context_window: turn.and_then(|t| t.context_window),
        };
        Ok(Tx {
            host: self,
            session: session.to_owned(),
            head: read.head,
            turn: wit_turn,
            snapshots,
            effects: Vec::new(),
            writes: turn.is_some(),
            lease,
            deferred_events: Vec::new(),
        })
    }

    /// Step 3: commits the kept effects (no trip when there are none); once they are
    /// committed, queues the checkpoints the calls asked for.
    pub(crate) async fn finish(&self, tx: Tx<'_>) -> Result<Commit> {
        let Tx { session, head, effects, lease, deferred_events, .. } = tx;
        let (mut requests, mut writes) = (Vec::new(), Vec::new());
        for (index, effect) in effects {
            let name = self.inner.plugins[index].info.name.clone();
            if let Some(request) = effect.checkpoint {
                requests.push((session.clone(), name.clone(), request));
            }
            if !effect.is_empty() {
                writes.push(PluginWrites {
                    plugin: name,
                    writes: effect.writes,
                    blobs: effect.blobs,
                    index: effect.index,
                });
            }
        }
        let outcome = self.inner.db.commit(lease, &session, head.version, writes).await;
        for (plugin, hook, kind, message) in deferred_events {
            self.record_event(&session, &plugin, &hook, kind, &message).await;
        }
        let outcome = outcome?;
        if outcome == Commit::Done {
            self.inner.checkpoint_requests.lock().unwrap().extend(requests);
        }
        Ok(outcome)
    }
}

impl Tx<'_> {
    /// The session's standing guidance (from `before-session-create`), decoded only by the
    /// hook that shows it.
    pub(crate) fn guidance(&self) -> Vec<Injection> {
        parse_guidance(&self.head.guidance_json)
    }

    /// Plugin `index`'s snapshot, for a caller that runs the plugin itself (see
    /// [`crate::reuse`]).
    pub(crate) fn take_snapshot(&mut self, index: usize) -> Snapshot {
        self.snapshots[index].take().expect("each involved plugin is called once per transaction")
    }

    /// Keeps `writes` of plugin `index` to commit, for a caller that ran it itself (the kept
    /// instance of `internals.rs`).
    #[cfg(feature = "internals")]
    pub(crate) fn keep_writes(&mut self, index: usize, writes: ScopeWrites) {
        self.effects.push((index, Effects { writes, blobs: Vec::new(), index: Vec::new(), checkpoint: None }));
    }

    /// Runs one call of plugin `index` on its snapshot and keeps its effects when its value
    /// says so. Each plugin is called at most once per transaction.
    pub(crate) async fn call<R, F>(&mut self, index: usize, hook: &str, f: F) -> Result<R>
    where
        R: CallOutput + Send,
        F: for<'a> FnOnce(&'a Plugin, &'a mut Store<CallState>) -> CallFuture<'a, R> + Send,
    {
        self.call_with(index, hook, |_| None, f).await
    }

    /// [`Tx::call`] for a hook whose answer may need a power (`needs` says which, from the
    /// answer): an answer the plugin has no power to give is a denial, and keeps nothing.
    pub(crate) async fn call_with<R, F>(
        &mut self,
        index: usize,
        hook: &str,
        needs: impl FnOnce(&R) -> Option<Power> + Send,
        f: F,
    ) -> Result<R>
    where
        R: CallOutput + Send,
        F: for<'a> FnOnce(&'a Plugin, &'a mut Store<CallState>) -> CallFuture<'a, R> + Send,
    {
        let host = self.host;
        let loaded = &host.inner.plugins[index];
        let scope = Scope::new(self.take_snapshot(index), &loaded.info.limits);
        let session_scope = Some(SessionScope {
            db: host.inner.db.clone(),
            plugin: loaded.info.name.clone(),
            session: self.session.clone(),
            project: host.recall_project(self.head.project.as_deref()),
        });
        // Take an instance made ahead; once the call is done, a task of its own gives the used
        // instance's slot back and makes the successor (see `warm.rs`).
        let fresh = || host.take_fresh(index);
        let started = std::time::Instant::now();
        let outcome = host.inner.sandbox.call(fresh, &loaded.pre, &loaded.info, scope, session_scope, hook, f).await;
        let metrics = &host.inner.db.metrics;
        let (value, spent) = match outcome {
            Ok((value, spent)) => (value, spent),
            Err(error) => {
                host.recycle(index, None);
                let failed = Err(error);
                metrics.call(&loaded.info.name, hook, started.elapsed(), &failed);
                self.record_failure(index, hook, &failed).await;
                return failed;
            }
        };
        let refused = spent.scope.quota_refusals();
        metrics.quota_refusals(&loaded.info.name, refused);
        if refused > 0 && self.writes {
            let quota = loaded.info.limits.storage_quota_bytes;
            let message = format!("{refused} write(s) refused by its storage quota of {quota} bytes");
            self.record_event(&loaded.info.name, hook, crate::EventKind::Quota, message).await;
        }
        let writes = spent.scope.into_writes();
        host.recycle(index, Some(spent.used));
        drop(spent.permit);
        *loaded.last_memory.lock().unwrap() = spent.memory;
        let checked = check_value(&loaded.info, &loaded.tools, hook, &value)
            .and_then(|()| check_power(&loaded.info, hook, needs(&value)));
        metrics.call(&loaded.info.name, hook, started.elapsed(), &checked);
        self.record_failure(index, hook, &checked).await;
        checked?;
        let (reads, answered) = spent.index_reads;
        // What a `before-query` that consulted the index injected: recall's share of the prompt.
        let recalled = if reads > 0 && hook == "before-query" { value.output_bytes() } else { 0 };
        metrics.recall_reads(&loaded.info.name, reads, answered, recalled);
        if value.commits() {
            let bytes = spent.pending_blobs.iter().map(|blob| blob.content.bytes.len() as u64).sum();
            metrics.offloaded(&loaded.info.name, bytes);
            let kept = spent.pending_index.iter().filter(|w| matches!(w, IndexWrite::Put(_))).count();
            metrics.recall_kept(&loaded.info.name, kept as u64);
            let effects = Effects {
                writes,
                blobs: spent.pending_blobs,
                index: spent.pending_index,
                checkpoint: spent.checkpoint_request,
            };
            self.effects.push((index, effects));
        }
        Ok(value)
    }

    /// Logs a plugin failure in the session's events (see [`Host::events`]).
    /// Logs an event of `plugin` in the session's log: now, or after the commit when this run
    /// holds a lease (the log's write would wait for the lock the lease holds).
    async fn record_event(&mut self, plugin: &str, hook: &str, kind: crate::EventKind, message: String) {
        match self.lease {
            Some(_) => self.deferred_events.push((plugin.to_owned(), hook.to_owned(), kind, message)),
            None => self.host.record_event(&self.session, plugin, hook, kind, &message).await,
        }
    }

    async fn record_failure<T>(&mut self, index: usize, hook: &str, outcome: &Result<T>) {
        if let Err(Error::Plugin { plugin, failure, .. }) = outcome
            && self.writes
        {
            debug_assert_eq!(*plugin, self.host.inner.plugins[index].info.name);
            let kind = crate::EventKind::Failure(failure.kind());
            let plugin = plugin.clone();
            self.record_event(&plugin, hook, kind, failure.to_string()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_attempts_is_a_retryable_conflict_naming_the_session() {
        let error = conflict("s1");
        assert!(
            matches!(error, Error::Conflict { ref session, attempts } if session == "s1" && attempts == MAX_ATTEMPTS)
        );
        assert!(error.is_retryable() && error.code() == "conflict", "{error}");
        assert!(error.to_string().contains("session `s1`") && error.to_string().contains("retried"), "{error}");
        assert!(!Error::SessionNotFound("s1".into()).is_retryable());
        assert!(!Error::Other(anyhow::anyhow!("disk")).is_retryable(), "a host bug is not a retry");
    }
}
