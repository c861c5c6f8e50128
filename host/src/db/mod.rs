//! The host's SQLite database: sessions and every plugin's state, in one WAL file.
//!
//! All SQLite work runs on tokio's blocking pool ([`Db::run`]), never on the async executor's
//! threads. Connections are pooled; each sets a busy timeout so several host processes can
//! share one file (a gateway and the CLI, say).
//!
//! Concurrency control is optimistic and per session (see [`state`]): a call reads a
//! consistent snapshot of its scope, runs the plugin without holding any lock, and commits its
//! writes only if the session's version is unchanged, in one `BEGIN IMMEDIATE` transaction.
//! If another process committed to the session meanwhile, the caller re-runs the call on a
//! fresh snapshot. No update is lost, across threads or processes.

pub(crate) mod blobs;
pub(crate) mod checkpoints;
pub(crate) mod identities;
mod schema;
pub(crate) mod sessions;
pub(crate) mod state;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use rusqlite::Connection;

/// How long a connection waits for another writer's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Prepared statements cached per connection.
const STATEMENT_CACHE: usize = 128;
/// Idle connections kept for reuse.
const POOL_SIZE: usize = 16;

/// A handle to the database file, cheap to clone.
#[derive(Clone)]
pub(crate) struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Db {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub(crate) async fn open(path: &Path) -> anyhow::Result<Db> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let db = Db { inner: Arc::new(Inner { path: path.to_owned(), idle: Mutex::new(Vec::new()) }) };
        db.run(|conn| Ok(schema::migrate(conn)?))
            .await
            .map_err(anyhow::Error::from)
            .with_context(|| format!("opening database {}", path.display()))?;
        Ok(db)
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` with a connection on the blocking thread pool.
    pub(crate) async fn run<R, F>(&self, f: F) -> crate::Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> crate::Result<R> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = match inner.idle.lock().unwrap().pop() {
                Some(conn) => conn,
                None => connect(&inner.path)?,
            };
            let result = f(&mut conn);
            // A connection left inside a transaction by an error is not reused.
            if conn.is_autocommit() {
                let mut idle = inner.idle.lock().unwrap();
                if idle.len() < POOL_SIZE {
                    idle.push(conn);
                }
            }
            result
        })
        .await
        .context("database task panicked")?
    }
}

fn connect(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Every statement on a hot path is prepared once per connection and cached; rusqlite keeps
    // 16 by default, fewer than the host uses, and an evicted statement is parsed again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // WAL lets readers proceed while a writer commits; FULL sync makes an acknowledged commit
    // survive a power loss, not only a process crash.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A record id in seed 002's format, `{unix_ms}_{4 hex}`: the time, and four hex digits of a
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
