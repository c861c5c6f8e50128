//! The storage contract: everything the host keeps (sessions, each operation's snapshot and
//! its version-checked commit, plugin state and metadata, the blob store, checkpoints, turn
//! bookkeeping, expiry, plugin identities, schema migrations) behind one async trait,
//! [`Backend`] (`backend.rs`; the types that cross it are in `records.rs`), with two
//! implementations:
//!
//! - [`sqlite`]: one WAL file, the embedded default (rusqlite on tokio's blocking pool);
//! - [`postgres`]: fleet mode, many host processes on one PostgreSQL server (tokio-postgres
//!   with a deadpool pool).
//!
//! Concurrency control is the same on both: optimistic and per session. An operation reads a
//! consistent snapshot of its session (one trip), runs the plugins without holding any lock,
//! and commits its writes only if the session's version is unchanged (one trip); if another
//! process committed to the session meanwhile, the caller re-runs the operation on a fresh
//! snapshot (see `crate::transaction`). No behaviour of the host depends on which backend
//! runs: `tests/tests/storage_conformance.rs` runs one suite against both.
//!
//! This file is the store's face and [`Db`], the handle the host holds: it opens a backend
//! and keeps the hot sessions (`hot.rs`) and the known blob entries (`entries.rs`) in front
//! of it. The backends depend on the contract, never on this file.

mod backend;
mod entries;
mod hot;
pub(crate) mod index;
pub(crate) mod location;
pub(crate) mod migrate;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod records;
pub(crate) mod sqlite;
mod stamp;

use std::sync::Arc;

use entries::KnownEntries;
use hot::HotSessions;

pub(crate) use backend::{Backend, INLINE_READ_BYTES, Lease};
pub use index::{IndexFilter, IndexUsage, IndexedDocument};
pub(crate) use index::{IndexQuery, IndexWrite};
pub use location::Location;
pub(crate) use records::*;
pub use records::{
    BlobEntry, EventCount, EventKind, MAX_EVENT_MESSAGE, MAX_EVENTS_PER_SESSION, PluginEvent, SessionRecord,
};
pub(crate) use stamp::{now_ms, record_id};

use crate::Result;

/// A handle to the host's database, whichever backend runs it, with the hot sessions kept in
/// memory; cheap to clone. Every [`Backend`] method is reachable through it; an operation's
/// two trips go through [`Db::begin`] and [`Db::commit`], which use the hot sessions.
#[derive(Clone)]
pub(crate) struct Db {
    backend: Arc<dyn Backend>,
    hot: Arc<HotSessions>,
    entries: Arc<KnownEntries>,
    /// The host's metrics: the begins and commits are counted here, where they happen.
    pub(crate) metrics: Arc<crate::metrics::Metrics>,
}

impl Db {
    /// Opens (creating if needed) the database at `location` and brings its schema up to date,
    /// with the default hot-session budget.
    pub(crate) async fn open(location: &Location) -> Result<Db> {
        Db::open_with(location, crate::config::HOT_SESSION_BYTES).await
    }

    /// [`Db::open`] keeping at most `hot_bytes` of hot sessions' scopes in memory.
    pub(crate) async fn open_with(location: &Location, hot_bytes: u64) -> Result<Db> {
        let backend: Arc<dyn Backend> = match location {
            Location::Sqlite(path) => Arc::new(sqlite::Sqlite::open(path).await?),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Arc::new(postgres::Postgres::open(url).await?),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => {
                return Err(crate::Error::invalid(
                    "database",
                    format!(
                        "`{location}` is a PostgreSQL URL, and this host was built without PostgreSQL (the `postgres` \
                         feature of scratchpad-host); use a SQLite file"
                    ),
                ));
            }
        };
        let budget = if backend.peeks() { usize::try_from(hot_bytes).unwrap_or(usize::MAX) } else { 0 };
        let hot = Arc::new(HotSessions::new(budget));
        Ok(Db { backend, hot, entries: Arc::default(), metrics: Arc::default() })
    }

    /// An operation's begin ([`Backend::begin`]): from memory when the session is hot, its head
    /// still at the kept version and already in `turn_id`; otherwise one trip, whose read is
    /// then kept.
    pub(crate) async fn begin(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<Read> {
        if self.hot.has(session)
            && let Some(head) = self.backend.peek_head(session)
            && turn_id.is_none_or(|turn_id| head.turn_id.as_deref() == Some(turn_id))
            && let Some(snapshots) = self.hot.get(session, head.version, &plugins)
        {
            // Nothing above awaited: count against the task's cooperative budget, so a caller
            // running hot operations in a loop still lets the runtime's other tasks (and its
            // timers) run.
            tokio::task::consume_budget().await;
            self.metrics.begin(true);
            return Ok(Read { head, snapshots });
        }
        self.metrics.begin(false);
        if !self.hot.enabled() {
            return self.backend.begin(session, turn_id, tokens, plugins).await;
        }
        let names: Vec<(usize, String)> = plugins.iter().map(|p| (p.index, p.plugin.clone())).collect();
        let read = self.backend.begin(session, turn_id, tokens, plugins).await?;
        self.hot.keep_read(session, &read, &names);
        Ok(read)
    }

    /// [`Backend::begin_leased`]: the begin of an operation's re-run, under the lock its
    /// commit needs; never served from memory.
    pub(crate) async fn begin_leased(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<(Read, Lease)> {
        self.metrics.begin(false);
        let names: Vec<(usize, String)> = plugins.iter().map(|p| (p.index, p.plugin.clone())).collect();
        let (read, lease) = self.backend.begin_leased(session, turn_id, tokens, plugins).await?;
        if self.hot.enabled() {
            self.hot.keep_read(session, &read, &names);
        }
        Ok((read, lease))
    }

    /// An operation's version-checked commit ([`Backend::commit`], or through the lease of a
    /// re-run, [`Backend::commit_leased`]); a commit that lands moves the session's hot scopes
    /// to the new version with its writes applied.
    pub(crate) async fn commit(
        &self,
        lease: Option<Lease>,
        session: &str,
        expected_version: i64,
        calls: Vec<PluginWrites>,
    ) -> Result<Commit> {
        if calls.is_empty() {
            // Only a lease's: its turn is kept, the version (and what is hot) stays.
            return match lease {
                Some(lease) => self.backend.commit_leased(lease, session, expected_version, calls).await,
                None => Ok(Commit::Done),
            };
        }
        let next = self.hot.prepare_commit(session, expected_version, &calls);
        let outcome = match lease {
            Some(lease) => self.backend.commit_leased(lease, session, expected_version, calls).await,
            None => self.backend.commit(session, expected_version, calls).await,
        };
        if let Ok(commit) = &outcome {
            self.metrics.commit(*commit == Commit::Done);
        }
        match outcome {
            Ok(Commit::Done) => self.hot.committed(session, next),
            _ => self.hot.forget(session),
        }
        outcome
    }

    /// [`Backend::blob_read`]; a small read of an entry known to exist is served on the calling
    /// thread when the backend can ([`Backend::read_known`]).
    pub(crate) async fn blob_read(
        &self,
        plugin: &str,
        session: &str,
        id: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        if len <= INLINE_READ_BYTES
            && let Some(entry) = self.entries.get(plugin, session, id, now_ms() as u64)
            && let Some(read) = self.backend.read_known(&entry, offset, len)
        {
            // Nothing above awaited: let the runtime's other tasks run (as a hot begin does).
            tokio::task::consume_budget().await;
            return read.map(Some);
        }
        self.backend.blob_read(plugin, session, id, offset, len).await
    }

    /// [`Backend::blob_stat`], from memory for an entry read before that has not expired
    /// (`entries.rs`).
    pub(crate) async fn blob_stat(&self, plugin: &str, session: &str, id: &str) -> Result<Option<BlobEntry>> {
        if let Some(entry) = self.entries.get(plugin, session, id, now_ms() as u64) {
            return Ok(Some(entry));
        }
        let entry = self.backend.blob_stat(plugin, session, id).await?;
        if let Some(entry) = &entry {
            self.entries.keep(session, entry);
        }
        Ok(entry)
    }
}

impl std::ops::Deref for Db {
    type Target = dyn Backend;

    fn deref(&self) -> &Self::Target {
        &*self.backend
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::types::Origin;

    /// A hot session's begin needs no trip and so never waits: a task looping over one must
    /// still give the runtime back its thread now and then, or a one-thread runtime never runs
    /// anything else (here: the timer that ends the loop).
    #[test]
    fn a_loop_of_begins_on_a_hot_session_lets_other_tasks_run() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(dir.path().join("hot.db"));
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let db = Arc::new(Db::open(&location).await.unwrap());
                db.create_session("s", &Origin::New, None, &[], Vec::new()).await.unwrap();
                let scope = || vec![ScopeToRead { index: 0, plugin: "p".into() }];
                // The first begin enters the turn and keeps the read: every later one is hot.
                db.begin("s", Some("t"), None, scope()).await.unwrap();
                assert!(db.hot.has("s"), "the session is hot after its first begin");
                let stop = Arc::new(AtomicBool::new(false));
                let (looping, flag) = (db.clone(), stop.clone());
                let calls = tokio::spawn(async move {
                    let mut calls = 0u64;
                    while !flag.load(Ordering::Relaxed) {
                        looping.begin("s", Some("t"), None, scope()).await.unwrap();
                        calls += 1;
                    }
                    calls
                });
                tokio::time::sleep(Duration::from_millis(50)).await;
                stop.store(true, Ordering::Relaxed);
                done.send(calls.await.unwrap()).unwrap();
            });
        });
        let calls = finished.recv_timeout(Duration::from_secs(60)).expect("the timer never ran: starved");
        assert!(calls > 2, "the loop ran hot begins ({calls})");
    }
}
