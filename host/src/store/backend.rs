//! The storage contract's one trait, [`Backend`]: what a backend (`sqlite/`, `postgres/`) does
//! for the host, one unit of work per method. The types that cross it are in `records.rs`.

use async_trait::async_trait;

use super::index::{IndexFilter, IndexQuery, IndexUsage, IndexedDocument};
use super::records::{
    BlobEntry, Claim, Commit, Head, LiveUsage, PluginEvent, PluginInit, PluginWrites, Read, ScopeToRead, SessionExport,
    SessionRecord,
};
use crate::error::Result;
use crate::types::{Checkpoint, Summary, SummaryRequest};
use crate::types::{Injection, Origin};

/// The largest blob read served on the calling thread ([`Backend::read_known`]): a slice the
/// model reads (2 KB by default) is one `pread` of page-cached bytes, cheaper than the hand-off
/// to the blocking pool and back; larger reads make the trip.
pub(crate) const INLINE_READ_BYTES: usize = 64 << 10;

/// The lock a re-run operation holds from its begin to its commit
/// ([`Backend::begin_leased`]), as the backend that took it keeps it. Dropped without
/// [`Backend::commit_leased`], it releases the lock and nothing of the run is kept.
pub(crate) struct Lease(pub(crate) Box<dyn std::any::Any + Send>);

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
        project: Option<&str>,
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
    /// [`Backend::begin`] for the run of an operation that lost its commit: first takes the
    /// lock every commit to `session` needs (SQLite: the database's write lock, `BEGIN
    /// IMMEDIATE`; PostgreSQL: the session's row, `FOR NO KEY UPDATE`), then reads under it. The
    /// lock is held by the [`Lease`] until [`Backend::commit_leased`] commits through it; no
    /// other process can commit to the session meanwhile, so this run cannot lose. Dropping
    /// the lease releases the lock and keeps nothing. Expired observations are not collected
    /// here (the run that lost did, at its turn's start).
    async fn begin_leased(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<(Read, Lease)>;
    /// Commits through `lease` what [`Backend::commit`] would (with no calls, only the turn
    /// the begin entered, and the version stays), and releases the lock.
    async fn commit_leased(
        &self,
        lease: Lease,
        session: &str,
        expected_version: i64,
        calls: Vec<PluginWrites>,
    ) -> Result<Commit>;
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

    // Projects' search indexes (the `index` import; writes go with an operation's commit).

    /// Document `id` of `plugin` in `project`.
    async fn index_get(&self, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>>;
    /// The `query.limit` best documents of `plugin`'s index of `project` for `query`, each with
    /// its score, best first: for each word, the newest-written documents holding it (at most
    /// [`CANDIDATES_PER_WORD`](super::index::CANDIDATES_PER_WORD)), ranked by the host's one
    /// ranking ([`Candidates`](super::index::Candidates)), so every backend answers alike. A
    /// search still running at `deadline` ends with
    /// [`DeadlineExceeded`](crate::error::DeadlineExceeded).
    async fn index_search(
        &self,
        project: &str,
        plugin: &str,
        query: &IndexQuery,
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<(IndexedDocument, f64)>>;
    /// [`Backend::index_search`] in the index of every plugin that keeps documents in
    /// `project`, plugin by plugin in name order, with no deadline: the operator's search.
    async fn index_search_all(&self, project: &str, query: &IndexQuery) -> Result<Vec<(IndexedDocument, f64)>> {
        let mut hits = Vec::new();
        for usage in self.index_usage(Some(project)).await? {
            hits.extend(self.index_search(project, &usage.plugin, query, None).await?);
        }
        Ok(hits)
    }
    /// The newest documents of `plugin` in `project` (of `kind`; leaving out `not_session`'s).
    async fn index_recent(
        &self,
        project: &str,
        plugin: &str,
        kind: Option<&str>,
        not_session: Option<&str>,
        limit: u32,
    ) -> Result<Vec<IndexedDocument>>;
    /// What each plugin keeps in the index of `project` (of every project when `None`).
    async fn index_usage(&self, project: Option<&str>) -> Result<Vec<IndexUsage>>;
    /// Every document `filter` means, oldest first.
    async fn index_documents(&self, filter: &IndexFilter) -> Result<Vec<IndexedDocument>>;
    /// Removes every document `filter` means, and what is left of them on disk; returns how
    /// many.
    async fn index_forget(&self, filter: &IndexFilter) -> Result<u64>;
    /// Keeps `documents`, each in its own project and plugin, replacing any with its id.
    async fn index_import(&self, documents: Vec<IndexedDocument>) -> Result<u64>;

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
