//! The storage contract: everything the host keeps (sessions, each operation's snapshot and
//! its version-checked commit, plugin state and metadata, the blob store, checkpoints, turn
//! bookkeeping, expiry, plugin identities, schema migrations) behind one async trait,
//! [`Backend`], with two implementations:
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

mod entries;
mod hot;
pub(crate) mod location;
pub(crate) mod migrate;
pub(crate) mod postgres;
pub(crate) mod records;
pub(crate) mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use entries::KnownEntries;
use hot::HotSessions;

pub use location::Location;
pub(crate) use records::*;
pub use records::{BlobEntry, MAX_EVENT_MESSAGE, MAX_EVENTS_PER_SESSION, PluginEvent, SessionRecord};

use crate::Result;
use crate::types::{Checkpoint, Summary, SummaryRequest};
use crate::types::{Injection, Origin};

/// The largest blob read served on the calling thread ([`Backend::read_known`]): a slice the
/// model reads (2 KB by default) is one `pread` of page-cached bytes, cheaper than the hand-off
/// to the blocking pool and back; larger reads make the trip.
pub(crate) const INLINE_READ_BYTES: usize = 64 << 10;

/// What a storage backend does for the host. Every method is one unit of work on the
/// database: atomic, and either done whole or not at all.
#[async_trait]
pub(crate) trait Backend: Send + Sync + 'static {
    // Sessions.

    /// Creates session `id` with its standing guidance and every plugin's initial state (the
    /// parent's state copied first where asked) atomically. A taken id is
    /// [`Error::SessionExists`](crate::Error::SessionExists); a missing parent,
    /// [`Error::SessionNotFound`](crate::Error::SessionNotFound).
    async fn create_session(
        &self,
        id: &str,
        origin: &Origin,
        guidance: &[Injection],
        inits: Vec<PluginInit>,
    ) -> Result<()>;
    /// Whether session `id` exists.
    async fn session_exists(&self, id: &str) -> Result<bool>;
    /// Session `id`, if it exists.
    async fn session(&self, id: &str) -> Result<Option<SessionRecord>>;
    /// Every session, oldest first.
    async fn sessions(&self) -> Result<Vec<SessionRecord>>;
    /// Counts one more compaction of session `id`.
    async fn record_compaction(&self, id: &str) -> Result<()>;
    /// Sets the compaction count and token total of session `id` where given; returns whether
    /// either changed.
    async fn record_counters(&self, id: &str, compactions: Option<i64>, tokens: Option<i64>) -> Result<bool>;

    // An operation's two trips.

    /// Enters `turn_id` in `session` (a new turn id is counted, with the runtime's token
    /// figure, and expired observations are collected) and reads the session's head and each
    /// named plugin's scope, all at one session version. With no `turn_id`, enters nothing
    /// and writes nothing: a read of the session as it is (the viewer's preview).
    async fn begin(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<Read>;
    /// Commits the effects of one operation's calls if `session` is still at
    /// `expected_version`, bumping the version once; otherwise writes nothing.
    async fn commit(&self, session: &str, expected_version: i64, calls: Vec<PluginWrites>) -> Result<Commit>;
    /// The head of `session` as it is now, when the backend can tell without a trip and
    /// without waiting for anything (SQLite: a row read on the calling thread that gives up
    /// instead of waiting for a lock). `None` when it cannot, or the session is not there:
    /// then an operation begins with [`Backend::begin`]. What lets the host serve a hot
    /// session's scopes from memory (`hot.rs`).
    fn peek_head(&self, session: &str) -> Option<Head> {
        let _ = session;
        None
    }
    /// Whether [`Backend::peek_head`] ever answers (else nothing is kept hot).
    fn peeks(&self) -> bool {
        false
    }
    /// [`Backend::blob_read`] of an `entry` known to exist (its `stat` is served from memory,
    /// `entries.rs`), on the calling thread without a trip, when the backend can; `None` when it
    /// cannot, and then the read makes its trip. Called only for reads of at most
    /// [`INLINE_READ_BYTES`], so the thread it holds is held for one small read.
    fn read_known(&self, entry: &BlobEntry, offset: u64, len: usize) -> Option<Result<Vec<u8>>> {
        let _ = (entry, offset, len);
        None
    }

    // Reads for the embedder.

    /// Every stored pair of a session, as (plugin, key, value), ordered.
    async fn state(&self, session: &str) -> Result<Vec<(String, String, Vec<u8>)>>;
    /// Every metadata pair of a session, as (plugin, key, JSON text), ordered.
    async fn metadata(&self, session: &str) -> Result<Vec<(String, String, String)>>;

    // The blob store.

    /// The entry `id` of `plugin` in `session`.
    async fn blob_stat(&self, plugin: &str, session: &str, id: &str) -> Result<Option<BlobEntry>>;
    /// What `plugin`'s entries in `session` unexpired at `now_ms` take.
    async fn blob_usage(&self, plugin: &str, session: &str, now_ms: u64) -> Result<LiveUsage>;
    /// Entries in `session` (of one plugin and one turn when given), oldest first.
    async fn blob_list(&self, plugin: Option<&str>, session: &str, turn_id: Option<&str>) -> Result<Vec<BlobEntry>>;
    /// Up to `len` bytes of an entry from `offset`, reading only the chunks that hold them.
    async fn blob_read(
        &self,
        plugin: &str,
        session: &str,
        id: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>>;
    /// Removes entries expired at `now_ms` (of one plugin and session when given); returns
    /// how many. Idempotent: several processes may run it at once.
    async fn blob_gc(&self, scope: Option<(&str, &str)>, now_ms: u64) -> Result<u32>;

    // Checkpoints.

    /// Stores `summary` as the newest checkpoint of the request's session, linked to the
    /// previous one, under a fresh unique id.
    async fn checkpoint_insert(&self, request: &SummaryRequest, summary: &Summary) -> Result<Checkpoint>;
    /// Every checkpoint of `session`, oldest first.
    async fn checkpoints(&self, session: &str) -> Result<Vec<Checkpoint>>;
    /// The newest checkpoint of `session`.
    async fn latest_checkpoint(&self, session: &str) -> Result<Option<Checkpoint>>;

    // Plugin identities.

    /// For each `(name, identity, upgrade)`, records `identity` as the owner of `name` when the
    /// name is free (or `upgrade` says so), all in one transaction; nothing is recorded when
    /// any claim is refused.
    async fn claim_identities(&self, claims: Vec<(String, String, bool)>) -> Result<Vec<Claim>>;

    // The session's event log (failures, refusals), for the viewer.

    /// Appends `event` to `session`'s log and drops its events beyond
    /// [`MAX_EVENTS_PER_SESSION`], oldest first.
    async fn record_event(&self, session: &str, event: PluginEvent) -> Result<()>;
    /// `session`'s events, oldest first.
    async fn events(&self, session: &str) -> Result<Vec<PluginEvent>>;
    /// How many kept events each (plugin, kind) has across every session, by plugin and kind.
    async fn event_counts(&self) -> Result<Vec<(String, String, u64)>>;

    // Moving a store (`scratchpad migrate`).

    /// Everything stored about session `id`, for copying it into another store.
    async fn export_session(&self, id: &str) -> Result<Option<SessionExport>>;
    /// Stores an exported session unless it is already present; returns whether it was written.
    async fn import_session(&self, session: SessionExport) -> Result<bool>;
    /// Every recorded plugin identity, as (name, identity, recorded at unix ms).
    async fn identities(&self) -> Result<Vec<(String, String, i64)>>;
    /// Records identities copied from another store, keeping any already recorded here.
    async fn import_identities(&self, identities: Vec<(String, String, i64)>) -> Result<()>;
}

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
            Location::Postgres(url) => Arc::new(postgres::Postgres::open(url).await?),
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

    /// An operation's version-checked commit ([`Backend::commit`]); a commit that lands moves
    /// the session's hot scopes to the new version with its writes applied.
    pub(crate) async fn commit(
        &self,
        session: &str,
        expected_version: i64,
        calls: Vec<PluginWrites>,
    ) -> Result<Commit> {
        let next = self.hot.prepare_commit(session, expected_version, &calls);
        let outcome = self.backend.commit(session, expected_version, calls).await;
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

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A record id in the context-pressure policy's format, `{unix_ms}_{4 hex}`: the time, and four hex digits of a
/// hash of `salt`, this process and a per-process sequence number, so ids made in the same
/// millisecond differ (four hex digits can still collide: a caller storing ids under a unique
/// key asks again until it has a free one).
pub(crate) fn record_id(now_ms: i64, salt: &str) -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let digest = Sha256::digest(format!("{salt}/{now_ms}/{}/{sequence}", std::process::id()));
    format!("{now_ms}_{:02x}{:02x}", digest[0], digest[1])
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
                db.create_session("s", &Origin::New, &[], Vec::new()).await.unwrap();
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
