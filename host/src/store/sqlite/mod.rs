//! The embedded default backend: sessions and every plugin's state in one SQLite WAL file.
//!
//! All SQLite work runs on tokio's blocking pool ([`Sqlite::run`]), never on the async
//! executor's threads — except [`Backend::peek_head`]: one indexed row read on the calling
//! thread through a connection that never waits for a lock (busy timeout 0; when it would, or
//! when every such connection is in use, the peek answers `None` and the caller takes the
//! trip). Connections are pooled; each sets a busy timeout so several host
//! processes can share one file (a gateway and the CLI, say). An operation's commit runs in
//! one `BEGIN IMMEDIATE` transaction that checks the session's version first.

mod blobs;
mod busy;
mod checkpoints;
mod contents;
mod events;
mod export;
mod faults;
mod identities;
mod index;
mod operation;
mod schema;
mod scope;
mod sessions;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use async_trait::async_trait;
use contents::Contents;
use rusqlite::Connection;

use super::{
    Claim, Commit, Head, IndexFilter, IndexQuery, IndexUsage, IndexedDocument, LiveUsage, PluginEvent, PluginInit,
    PluginWrites, Read, ScopeToRead, SessionExport,
};
use crate::store::backend::{Backend, Lease};
use crate::types::{Checkpoint, Summary, SummaryRequest};
use crate::types::{Injection, Origin};
use crate::{BlobEntry, Result, SessionRecord};

/// Prepared statements cached per connection.
const STATEMENT_CACHE: usize = 128;
/// Idle connections kept for reuse.
const POOL_SIZE: usize = 16;
/// Connections for [`Backend::peek_head`]; a peek that finds all of them in use gives up.
const PEEKERS: usize = 4;

/// The database file and a pool of connections to it; cheap to share with a blocking task.
pub(crate) struct Sqlite(Arc<Pool>);

/// A re-run's lease on SQLite: a connection inside the `BEGIN IMMEDIATE` that holds the
/// database's write lock. Dropped before its commit, it rolls back (on the blocking pool when
/// a runtime is there) and the connection goes back to the pool.
struct Held {
    conn: Option<Connection>,
    pool: Arc<Pool>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let pool = self.pool.clone();
        let release = move || {
            let _ = conn.execute_batch("ROLLBACK");
            pool.give_back(conn);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(release)),
            Err(_) => release(),
        }
    }
}

impl Pool {
    /// An idle connection, or a new one; a fault of the machine (a full disk, a read-only
    /// file) named as such.
    fn take(&self) -> Result<Connection> {
        match self.idle.lock().unwrap().pop() {
            Some(conn) => Ok(conn),
            None => connect(&self.path).map_err(|error| faults::named(error.into(), &self.path)),
        }
    }

    /// Keeps `conn` for reuse, unless it is inside a transaction (an error left it there) or
    /// the pool is full.
    fn give_back(&self, conn: Connection) {
        if conn.is_autocommit() {
            let mut idle = self.idle.lock().unwrap();
            if idle.len() < POOL_SIZE {
                idle.push(conn);
            }
        }
    }
}

struct Pool {
    path: PathBuf,
    /// The observations' content files.
    contents: Contents,
    idle: Mutex<Vec<Connection>>,
    /// Read-only connections with no busy timeout, for peeks on the calling thread.
    peekers: Vec<Mutex<Connection>>,
}

impl Sqlite {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub(crate) async fn open(path: &Path) -> anyhow::Result<Sqlite> {
        configure_library();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let contents = || Contents::of(path);
        let db = Sqlite(Arc::new(Pool {
            path: path.to_owned(),
            contents: contents(),
            idle: Mutex::new(Vec::new()),
            peekers: Vec::new(),
        }));
        db.run_in(|conn, pool| {
            schema::migrate(conn)?;
            let swept = pool.contents.sweep(|id| blobs::exists(conn, id))?;
            if swept > 0 {
                tracing::info!(swept, dir = %pool.contents.dir().display(), "removed orphaned observation files");
            }
            Ok(())
        })
        .await
        .map_err(anyhow::Error::from)
        .with_context(|| format!("opening database {}", path.display()))?;
        let owned = path.to_owned();
        let peekers = tokio::task::spawn_blocking(move || {
            (0..PEEKERS).map(|_| Ok(Mutex::new(peeker(&owned)?))).collect::<anyhow::Result<Vec<_>>>()
        })
        .await
        .context("database task panicked")?
        .with_context(|| format!("opening database {}", path.display()))?;
        Ok(Sqlite(Arc::new(Pool {
            path: path.to_owned(),
            contents: contents(),
            idle: Mutex::new(Vec::new()),
            peekers,
        })))
    }

    /// Runs `f` with a connection on the blocking thread pool.
    async fn run<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R> + Send + 'static,
    {
        self.run_in(move |conn, _| f(conn)).await
    }

    /// [`Sqlite::run`], with the pool (for its content files) too.
    async fn run_in<R, F>(&self, f: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection, &Pool) -> Result<R> + Send + 'static,
    {
        let pool = self.0.clone();
        // The bound on lock waits of the work this belongs to, if any, for the busy handler
        // on the blocking thread.
        let until = crate::wait::until_now();
        tokio::task::spawn_blocking(move || {
            let _waits = busy::Bounded::until(until);
            let mut conn = pool.take()?;
            let result = f(&mut conn, &pool).map_err(|error| faults::named(error, &pool.path));
            // A connection left inside a transaction by an error is not reused.
            pool.give_back(conn);
            result
        })
        .await
        .context("database task panicked")?
    }
}

/// SQLite's process-wide settings, made once, before its first connection: no memory
/// statistics. With them on (the bundled build's default) every allocation SQLite makes takes
/// one process-wide mutex to count it — a search over a large index makes thousands — and
/// nothing here reads them. Had something else in the process already started SQLite, it
/// refuses the change and keeps its defaults, which only costs that time.
fn configure_library() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `sqlite3_config` is called before any connection of this process is opened
        // (the `Once` orders every caller after it); were SQLite already initialized it
        // answers SQLITE_MISUSE and changes nothing. The option takes one `int`.
        let code =
            unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int) };
        if code != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(code, "SQLite was already started: its memory statistics stay on");
        }
    });
}

fn connect(path: &Path) -> anyhow::Result<Connection> {
    let mut conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    conn.busy_handler(Some(busy::wait))?;
    // Every statement on a hot path is prepared once per connection and cached; rusqlite keeps
    // 16 by default, fewer than the host uses, and an evicted statement is parsed again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    stable_plans(&conn)?;
    // WAL lets readers proceed while a writer commits; FULL sync makes an acknowledged commit
    // survive a power loss, not only a process crash.
    set_wal(&conn).context("setting the WAL journal mode")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// Sets the WAL journal mode. On a fresh database the first connection to do it turns the file
/// from a rollback journal into WAL; another connection doing the same at that moment holds a
/// shared lock that it would have to upgrade, and SQLite answers such a connection "busy" at
/// once, without its busy handler (which could deadlock). So "busy" is retried here, for as
/// long as the busy timeout allows (several hosts opening one new database at once).
fn set_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = busy::deadline(std::time::Instant::now());
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            done => return done,
        }
    }
}

/// A connection for peeks: read-only, and never waiting for a lock (a busy database makes the
/// peek give up rather than hold the calling thread).
fn peeker(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(Duration::ZERO)?;
    conn.pragma_update(None, "query_only", true)?;
    stable_plans(&conn)?;
    Ok(conn)
}

/// Plans statements without looking at the values bound to them (SQLite's query planner
/// stability guarantee). Otherwise a statement whose plan may depend on a bound value (a
/// `LIMIT ?`) is compiled again on its next run whenever that value is bound anew, and a
/// cached statement is bound anew on every use: each search paid a whole parse and plan
/// (measured: about two fifths of a search's time over a large project).
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Owned copies of borrowed arguments, for a closure that runs on the blocking pool.
fn owned(s: &str) -> String {
    s.to_owned()
}

#[async_trait]
impl Backend for Sqlite {
    async fn create_session(
        &self,
        id: &str,
        origin: &Origin,
        project: Option<&str>,
        guidance: &[Injection],
        inits: Vec<PluginInit>,
    ) -> Result<()> {
        let (id, origin, project, guidance) = (owned(id), origin.clone(), project.map(owned), guidance.to_vec());
        self.run(move |conn| sessions::create(conn, &id, &origin, project.as_deref(), &guidance, &inits)).await
    }

    async fn session_exists(&self, id: &str) -> Result<bool> {
        let id = owned(id);
        self.run(move |conn| sessions::exists(conn, &id)).await
    }

    async fn session(&self, id: &str) -> Result<Option<SessionRecord>> {
        let id = owned(id);
        self.run(move |conn| sessions::get(conn, &id)).await
    }

    async fn sessions(&self) -> Result<Vec<SessionRecord>> {
        self.run(|conn| sessions::list(conn)).await
    }

    async fn record_compaction(&self, id: &str) -> Result<()> {
        let id = owned(id);
        self.run(move |conn| sessions::record_compaction(conn, &id)).await
    }

    async fn record_counters(&self, id: &str, compactions: Option<i64>, tokens: Option<i64>) -> Result<bool> {
        let id = owned(id);
        self.run(move |conn| sessions::record_counters(conn, &id, compactions, tokens)).await
    }

    async fn begin(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<Read> {
        let (session, turn_id) = (owned(session), turn_id.map(owned));
        self.run_in(move |conn, pool| {
            operation::begin(conn, &pool.contents, &session, turn_id.as_deref(), tokens, &plugins)
        })
        .await
    }

    async fn commit(&self, session: &str, expected_version: i64, calls: Vec<PluginWrites>) -> Result<Commit> {
        let session = owned(session);
        self.run_in(move |conn, pool| operation::commit(conn, &pool.contents, &session, expected_version, &calls)).await
    }

    async fn begin_leased(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<(Read, Lease)> {
        let (session, turn_id) = (owned(session), turn_id.map(owned));
        let pool = self.0.clone();
        let until = crate::wait::until_now();
        tokio::task::spawn_blocking(move || {
            let _waits = busy::Bounded::until(until);
            let conn = pool.take()?;
            let read = operation::begin_leased(&conn, &session, turn_id.as_deref(), tokens, &plugins)
                .map_err(|error| faults::named(error, &pool.path))?;
            Ok((read, Lease(Box::new(Held { conn: Some(conn), pool }))))
        })
        .await
        .context("database task panicked")?
    }

    async fn commit_leased(
        &self,
        lease: Lease,
        session: &str,
        expected_version: i64,
        calls: Vec<PluginWrites>,
    ) -> Result<Commit> {
        let mut held = lease.0.downcast::<Held>().map_err(|_| anyhow::anyhow!("a lease of another backend"))?;
        let session = owned(session);
        tokio::task::spawn_blocking(move || {
            let conn = held.conn.take().expect("a lease commits once");
            let outcome = operation::commit_leased(&conn, &held.pool.contents, &session, expected_version, &calls)
                .map_err(|error| faults::named(error, &held.pool.path));
            held.pool.give_back(conn);
            outcome
        })
        .await
        .context("database task panicked")?
    }

    fn peek_head(&self, session: &str) -> Option<Head> {
        let conn = self.0.peekers.iter().find_map(|peeker| peeker.try_lock().ok())?;
        match sessions::head(&conn, session) {
            Ok(head) => head,
            Err(error) => {
                tracing::debug!(%error, "peek at a session's head gave up; reading it with a trip");
                None
            }
        }
    }

    fn peeks(&self) -> bool {
        true
    }

    fn read_known(&self, entry: &BlobEntry, offset: u64, len: usize) -> Option<Result<Vec<u8>>> {
        let (start, end) = blobs::clamp(entry.size_bytes, offset, len);
        self.0.contents.read_present(&entry.id, start as u64, end - start)
    }

    async fn state(&self, session: &str) -> Result<Vec<(String, String, Vec<u8>)>> {
        let session = owned(session);
        self.run(move |conn| scope::dump(conn, &session)).await
    }

    async fn metadata(&self, session: &str) -> Result<Vec<(String, String, String)>> {
        let session = owned(session);
        self.run(move |conn| scope::dump_metadata(conn, &session)).await
    }

    async fn blob_stat(&self, plugin: &str, session: &str, id: &str) -> Result<Option<BlobEntry>> {
        let (plugin, session, id) = (owned(plugin), owned(session), owned(id));
        self.run(move |conn| blobs::stat(conn, &plugin, &session, &id)).await
    }

    async fn blob_usage(&self, plugin: &str, session: &str, now_ms: u64) -> Result<LiveUsage> {
        let (plugin, session) = (owned(plugin), owned(session));
        self.run(move |conn| blobs::live_usage(conn, &plugin, &session, now_ms)).await
    }

    async fn blob_list(&self, plugin: Option<&str>, session: &str, turn_id: Option<&str>) -> Result<Vec<BlobEntry>> {
        let (plugin, session, turn_id) = (plugin.map(owned), owned(session), turn_id.map(owned));
        self.run(move |conn| blobs::list(conn, plugin.as_deref(), &session, turn_id.as_deref())).await
    }

    async fn blob_read(
        &self,
        plugin: &str,
        session: &str,
        id: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        let (plugin, session, id) = (owned(plugin), owned(session), owned(id));
        self.run_in(move |conn, pool| blobs::read(conn, &pool.contents, &plugin, &session, &id, offset, len)).await
    }

    async fn blob_gc(&self, scope: Option<(&str, &str)>, now_ms: u64) -> Result<u32> {
        let scope = scope.map(|(plugin, session)| (owned(plugin), owned(session)));
        self.run_in(move |conn, pool| {
            blobs::gc(conn, &pool.contents, scope.as_ref().map(|(p, s)| (p.as_str(), s.as_str())), now_ms)
        })
        .await
    }

    async fn checkpoint_insert(&self, request: &SummaryRequest, summary: &Summary) -> Result<Checkpoint> {
        let (request, summary) = (request.clone(), summary.clone());
        self.run(move |conn| checkpoints::insert(conn, &request, &summary)).await
    }

    async fn checkpoints(&self, session: &str) -> Result<Vec<Checkpoint>> {
        let session = owned(session);
        self.run(move |conn| checkpoints::list(conn, &session)).await
    }

    async fn latest_checkpoint(&self, session: &str) -> Result<Option<Checkpoint>> {
        let session = owned(session);
        self.run(move |conn| checkpoints::latest(conn, &session)).await
    }

    async fn record_event(&self, session: &str, event: PluginEvent) -> Result<()> {
        let session = owned(session);
        self.run(move |conn| events::record(conn, &session, &event)).await
    }

    async fn events(&self, session: &str) -> Result<Vec<PluginEvent>> {
        let session = owned(session);
        self.run(move |conn| events::list(conn, &session)).await
    }

    async fn event_counts(&self) -> Result<Vec<(String, String, u64)>> {
        self.run(|conn| events::counts(conn)).await
    }

    async fn index_get(&self, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>> {
        let (project, plugin, id) = (owned(project), owned(plugin), owned(id));
        self.run(move |conn| index::get(conn, &project, &plugin, &id)).await
    }

    async fn index_search(
        &self,
        project: &str,
        plugin: &str,
        query: &IndexQuery,
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<(IndexedDocument, f64)>> {
        let (project, plugin, query) = (owned(project), owned(plugin), query.clone());
        self.run(move |conn| index::search(conn, &project, &plugin, &query, deadline)).await
    }

    async fn index_search_all(&self, project: &str, query: &IndexQuery) -> Result<Vec<(IndexedDocument, f64)>> {
        // One trip to the blocking pool for every plugin's search, not one each and one more
        // for the list of plugins.
        let (project, query) = (owned(project), query.clone());
        self.run(move |conn| {
            let mut hits = Vec::new();
            for usage in index::usage(conn, Some(&project))? {
                hits.extend(index::search(conn, &project, &usage.plugin, &query, None)?);
            }
            Ok(hits)
        })
        .await
    }

    async fn index_recent(
        &self,
        project: &str,
        plugin: &str,
        kind: Option<&str>,
        not_session: Option<&str>,
        limit: u32,
    ) -> Result<Vec<IndexedDocument>> {
        let (project, plugin, kind, not_session) =
            (owned(project), owned(plugin), kind.map(owned), not_session.map(owned));
        self.run(move |conn| index::recent(conn, &project, &plugin, kind.as_deref(), not_session.as_deref(), limit))
            .await
    }

    async fn index_usage(&self, project: Option<&str>) -> Result<Vec<IndexUsage>> {
        let project = project.map(owned);
        self.run(move |conn| index::usage(conn, project.as_deref())).await
    }

    async fn index_documents(&self, filter: &IndexFilter) -> Result<Vec<IndexedDocument>> {
        let filter = filter.clone();
        self.run(move |conn| index::documents(conn, &filter)).await
    }

    async fn index_forget(&self, filter: &IndexFilter) -> Result<u64> {
        let filter = filter.clone();
        self.run(move |conn| index::forget(conn, &filter)).await
    }

    async fn index_import(&self, documents: Vec<IndexedDocument>) -> Result<u64> {
        self.run(move |conn| index::import(conn, &documents)).await
    }

    async fn claim_identities(&self, claims: Vec<(String, String, bool)>) -> Result<Vec<Claim>> {
        self.run(move |conn| identities::claim(conn, &claims)).await
    }

    async fn export_session(&self, id: &str) -> Result<Option<SessionExport>> {
        let id = owned(id);
        self.run_in(move |conn, pool| export::session(conn, &pool.contents, &id)).await
    }

    async fn import_session(&self, session: SessionExport) -> Result<bool> {
        self.run_in(move |conn, pool| export::import(conn, &pool.contents, &session)).await
    }

    async fn identities(&self) -> Result<Vec<(String, String, i64)>> {
        self.run(|conn| identities::list(conn)).await
    }

    async fn import_identities(&self, identities: Vec<(String, String, i64)>) -> Result<()> {
        self.run(move |conn| identities::import(conn, &identities)).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use super::*;

    /// Connections opened at the same moment on a database that does not exist yet all get
    /// one: the race to turn the new file to WAL mode is waited out, never an error.
    #[test]
    fn connections_racing_to_set_up_a_new_database_all_open() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..20 {
            let path = dir.path().join(format!("new-{round}.db"));
            let start = Barrier::new(8);
            std::thread::scope(|scope| {
                let opening: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            connect(&path)
                        })
                    })
                    .collect();
                for connection in opening {
                    let conn = connection.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e:#}"));
                    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
                    assert_eq!(mode, "wal");
                }
            });
        }
    }

    /// A cached statement whose plan could depend on a bound value (`LIMIT ?`) runs as
    /// prepared, every time, on both kinds of connection: never parsed and planned again.
    #[test]
    fn a_cached_statement_is_never_prepared_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db");
        let conn = connect(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);").unwrap();
        for conn in [conn, peeker(&path).unwrap()] {
            for limit in [2, 2, 3, 1, 2] {
                let mut stmt = conn.prepare_cached("SELECT n FROM t ORDER BY n DESC LIMIT ?1").unwrap();
                let rows: Vec<i64> = stmt.query_map([limit], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
                assert_eq!(rows, (4 - limit..=3).rev().collect::<Vec<i64>>());
                assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0, "limit {limit}");
            }
        }
    }
}
