//! Fleet mode: the host's data on a PostgreSQL server, shared by any number of host
//! processes on any number of machines.
//!
//! tokio-postgres with a deadpool pool: the client is async and pipelines on one connection,
//! so database work never takes a blocking thread; deadpool is a small, widely used pool that
//! caches each connection's prepared statements (`prepare_cached`), so a hot statement costs
//! one round trip, not a parse and a trip. TLS is not linked in: reach the server over a
//! trusted network, a Unix socket, or a local TLS proxy.
//!
//! Every promise the SQLite backend keeps holds across machines here (see the module docs of
//! each part): an operation reads its session in one statement (one snapshot) and commits in
//! one statement that checks and bumps the session's version, so calls are atomic and no
//! update is lost; blob entries are written in the same transaction as that check; checkpoint
//! ids are unique by key; garbage collection and migrations are serialized by advisory locks.

mod blobs;
mod events;
mod export;
mod index;
mod operation;
mod records;
mod schema;
mod scope;
mod sessions;

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::location::redact;
use super::{
    Claim, Commit, IndexFilter, IndexQuery, IndexUsage, IndexedDocument, LiveUsage, PluginEvent, PluginInit,
    PluginWrites, Read, ScopeToRead, SessionExport,
};
use crate::store::backend::{Backend, Lease};
use crate::types::{Checkpoint, Summary, SummaryRequest};
use crate::types::{Injection, Origin};
use crate::{BlobEntry, Error, Result, SessionRecord};

/// Connections each host process keeps at most.
const POOL_SIZE: usize = 16;
/// How long a new connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an operation waits for a free connection.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A pool of connections to one PostgreSQL database.
pub(crate) struct Postgres {
    pool: Pool,
    /// The URL without its password, for messages.
    shown: String,
}

/// A re-run's lease on PostgreSQL: a pooled connection inside the transaction that holds the
/// session's row locked. Dropped before its commit, the connection leaves the pool and is
/// closed, which ends the transaction (the server rolls it back).
struct Held(Option<Object>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(Object::take(client));
        }
    }
}

impl Postgres {
    /// Connects to the server at `url` and brings the schema up to date.
    pub(crate) async fn open(url: &str) -> Result<Postgres> {
        let shown = redact(url);
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| Error::invalid("database URL", format!("`{shown}` is not a PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("scratchpad");
        }
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(WAIT_TIMEOUT))
            .build()
            .map_err(|e| anyhow::anyhow!("building the connection pool for {shown}: {e}"))?;
        let db = Postgres { pool, shown };
        let mut client = db.client().await?;
        schema::migrate(&mut client)
            .await
            .map_err(|e| anyhow::anyhow!("bringing the schema of {} up to date: {e:#}", db.shown))?;
        Ok(db)
    }

    /// A pooled connection; an unreachable server is [`Error::Unavailable`] naming it and what
    /// to check. (Connections the server closed — a restart — are dropped by the pool's
    /// recycling check and replaced, so the same host recovers when the server is back.)
    async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(|e| {
            let (cause, away) = match e {
                deadpool_postgres::PoolError::Backend(e) => {
                    let away = connection_lost(&e);
                    let cause = match (e.as_db_error(), std::error::Error::source(&e)) {
                        (Some(db), _) => db.message().to_owned(),
                        (None, Some(source)) => format!("{e}: {source}"),
                        (None, None) => e.to_string(),
                    };
                    (cause, away)
                }
                deadpool_postgres::PoolError::Timeout(_) => (e.to_string(), true),
                other => (other.to_string(), false),
            };
            let cause = format!(
                "cannot connect to the PostgreSQL server at {}: {cause}. Check that the server is running and \
                 accepts connections at that host and port, and the URL's user, password and database",
                self.shown
            );
            match away {
                true => Error::Unavailable { cause },
                false => Error::Other(anyhow::anyhow!(cause)),
            }
        })
    }
}

/// Whether `error` says the server is away — the connection is closed or broke, the server
/// refused it or is shutting down, starting up or restarting (SQLSTATE class 08, 57P01–57P03)
/// — rather than that it refused the statement.
fn connection_lost(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(db) = error.as_db_error() {
        let code = db.code().code();
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Self {
        match connection_lost(&error) {
            true => Error::Unavailable { cause: format!("the connection to the PostgreSQL server broke: {error}") },
            false => Error::Other(anyhow::Error::new(error).context("database error")),
        }
    }
}

#[async_trait]
impl Backend for Postgres {
    async fn create_session(
        &self,
        id: &str,
        origin: &Origin,
        project: Option<&str>,
        guidance: &[Injection],
        inits: Vec<PluginInit>,
    ) -> Result<()> {
        sessions::create(&mut self.client().await?, id, origin, project, guidance, &inits).await
    }

    async fn index_get(&self, project: &str, plugin: &str, id: &str) -> Result<Option<IndexedDocument>> {
        index::get(&self.client().await?, project, plugin, id).await
    }

    async fn index_search(
        &self,
        project: &str,
        plugin: &str,
        query: &IndexQuery,
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<(IndexedDocument, f64)>> {
        index::search(&mut self.client().await?, project, plugin, query, deadline).await
    }

    async fn index_recent(
        &self,
        project: &str,
        plugin: &str,
        kind: Option<&str>,
        not_session: Option<&str>,
        limit: u32,
    ) -> Result<Vec<IndexedDocument>> {
        index::recent(&self.client().await?, project, plugin, kind, not_session, limit).await
    }

    async fn index_usage(&self, project: Option<&str>) -> Result<Vec<IndexUsage>> {
        index::usage(&self.client().await?, project).await
    }

    async fn index_documents(&self, filter: &IndexFilter) -> Result<Vec<IndexedDocument>> {
        index::documents(&self.client().await?, filter).await
    }

    async fn index_forget(&self, filter: &IndexFilter) -> Result<u64> {
        index::forget(&mut self.client().await?, filter).await
    }

    async fn index_import(&self, documents: Vec<IndexedDocument>) -> Result<u64> {
        index::import(&mut self.client().await?, &documents).await
    }

    async fn session_exists(&self, id: &str) -> Result<bool> {
        sessions::exists(&self.client().await?, id).await
    }

    async fn session(&self, id: &str) -> Result<Option<SessionRecord>> {
        sessions::get(&self.client().await?, id).await
    }

    async fn sessions(&self) -> Result<Vec<SessionRecord>> {
        sessions::list(&self.client().await?).await
    }

    async fn record_compaction(&self, id: &str) -> Result<()> {
        sessions::record_compaction(&self.client().await?, id).await
    }

    async fn record_counters(&self, id: &str, compactions: Option<i64>, tokens: Option<i64>) -> Result<bool> {
        sessions::record_counters(&self.client().await?, id, compactions, tokens).await
    }

    async fn begin(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<Read> {
        operation::begin(&mut self.client().await?, session, turn_id, tokens, &plugins).await
    }

    async fn commit(&self, session: &str, expected_version: i64, calls: Vec<PluginWrites>) -> Result<Commit> {
        operation::commit(&mut self.client().await?, session, expected_version, &calls).await
    }

    async fn begin_leased(
        &self,
        session: &str,
        turn_id: Option<&str>,
        tokens: Option<u64>,
        plugins: Vec<ScopeToRead>,
    ) -> Result<(Read, Lease)> {
        let client = self.client().await?;
        let read = operation::begin_leased(&client, session, turn_id, tokens, &plugins).await?;
        Ok((read, Lease(Box::new(Held(Some(client))))))
    }

    async fn commit_leased(
        &self,
        lease: Lease,
        session: &str,
        expected_version: i64,
        calls: Vec<PluginWrites>,
    ) -> Result<Commit> {
        let mut held = lease.0.downcast::<Held>().map_err(|_| anyhow::anyhow!("a lease of another backend"))?;
        let client = held.0.take().expect("a lease commits once");
        operation::commit_leased(&client, session, expected_version, &calls).await
    }

    async fn state(&self, session: &str) -> Result<Vec<(String, String, Vec<u8>)>> {
        scope::dump(&self.client().await?, session).await
    }

    async fn metadata(&self, session: &str) -> Result<Vec<(String, String, String)>> {
        scope::dump_metadata(&self.client().await?, session).await
    }

    async fn blob_stat(&self, plugin: &str, session: &str, id: &str) -> Result<Option<BlobEntry>> {
        blobs::stat(&self.client().await?, plugin, session, id).await
    }

    async fn blob_usage(&self, plugin: &str, session: &str, now_ms: u64) -> Result<LiveUsage> {
        blobs::live_usage(&self.client().await?, plugin, session, now_ms).await
    }

    async fn blob_list(&self, plugin: Option<&str>, session: &str, turn_id: Option<&str>) -> Result<Vec<BlobEntry>> {
        blobs::list(&self.client().await?, plugin, session, turn_id).await
    }

    async fn blob_read(
        &self,
        plugin: &str,
        session: &str,
        id: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        blobs::read(&self.client().await?, plugin, session, id, offset, len).await
    }

    async fn blob_gc(&self, scope: Option<(&str, &str)>, now_ms: u64) -> Result<u32> {
        blobs::gc(&mut self.client().await?, scope, now_ms).await
    }

    async fn checkpoint_insert(&self, request: &SummaryRequest, summary: &Summary) -> Result<Checkpoint> {
        records::insert_checkpoint(&mut self.client().await?, request, summary).await
    }

    async fn checkpoints(&self, session: &str) -> Result<Vec<Checkpoint>> {
        records::checkpoints(&self.client().await?, session, false).await
    }

    async fn latest_checkpoint(&self, session: &str) -> Result<Option<Checkpoint>> {
        Ok(records::checkpoints(&self.client().await?, session, true).await?.pop())
    }

    async fn claim_identities(&self, claims: Vec<(String, String, bool)>) -> Result<Vec<Claim>> {
        records::claim(&mut self.client().await?, &claims).await
    }

    async fn export_session(&self, id: &str) -> Result<Option<SessionExport>> {
        export::session(&mut self.client().await?, id).await
    }

    async fn import_session(&self, session: SessionExport) -> Result<bool> {
        export::import(&mut self.client().await?, &session).await
    }

    async fn record_event(&self, session: &str, event: PluginEvent) -> Result<()> {
        events::record(&self.client().await?, session, &event).await
    }

    async fn events(&self, session: &str) -> Result<Vec<PluginEvent>> {
        events::list(&self.client().await?, session).await
    }

    async fn event_counts(&self) -> Result<Vec<(String, String, u64)>> {
        events::counts(&self.client().await?).await
    }

    async fn identities(&self) -> Result<Vec<(String, String, i64)>> {
        records::identities(&self.client().await?).await
    }

    async fn import_identities(&self, identities: Vec<(String, String, i64)>) -> Result<()> {
        records::import_identities(&mut self.client().await?, &identities).await
    }
}
