//! Seams inside the host for the benchmark crate (`bench/`), compiled only with the
//! off-by-default `internals` feature. Nothing here is part of the supported API and none of it
//! follows semver.
//!
//! The benchmarks compare the component with two things that need the host's insides: the same
//! logic compiled natively (or hosted by Extism) over the host's own storage layer, which is
//! [`ScopedStore`], and one instance kept across calls, which is [`KeptInstance`] — what the
//! design's fresh instance per call costs. The benchmark code itself (the native scratchpad, the
//! Extism peer, the drivers) lives in `bench/`.

use wasmtime::Store;

use crate::bindings::Plugin;
use crate::bindings::scratchpad::plugin::storage::StorageError;
use crate::capabilities::call::CallState;
use crate::capabilities::scope::Scope;
use crate::error::{Error, Result};
use crate::host::{Host, from_wit_injection};
use crate::store::{Commit, Db, Location, ScopeToRead};
use crate::transaction::Involved;
use crate::types::{Injection, Origin, TurnContext};

/// One plugin's key-value scopes in the host's database, used the way the host uses them for a
/// component call: a snapshot of the (plugin, session) scope, the caller's code over it, then a
/// commit of its writes guarded by the session's version.
pub struct ScopedStore {
    db: Db,
    plugin: String,
    limits: crate::Limits,
}

/// A call's view of one scope: the snapshot plus the call's own pending writes, with the
/// host's key and quota checks. It is what the component's `storage` import reads and writes.
#[derive(Debug, Default)]
pub struct ScopeStorage(Scope);

/// Why [`ScopeStorage::set`] refused a write: the `storage` import's own errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    /// The write would take the scope over its quota (bytes).
    QuotaExceeded {
        /// Bytes the scope holds.
        used: u64,
        /// Bytes the write asked for.
        requested: u64,
        /// The scope's quota.
        limit: u64,
    },
    /// The key is empty, too long or not text the host accepts.
    InvalidKey(String),
}

impl ScopedStore {
    /// Opens the database at `location` (the schema the host uses) for the scopes of `plugin`,
    /// with the host's default storage quota and key cap.
    pub async fn open(location: impl Into<Location>, plugin: &str) -> Result<Self> {
        let db = Db::open(&location.into()).await?;
        Ok(ScopedStore { db, plugin: plugin.to_owned(), limits: crate::Limits::default() })
    }

    /// Creates session `id` (a new one, no guidance) when it does not exist yet.
    pub async fn create_session(&self, id: &str) -> Result<()> {
        self.db.create_session(id, &Origin::New, None, &[], Vec::new()).await?;
        Ok(())
    }

    /// Runs `f` over a snapshot of this plugin's scope in `session`, in turn `turn_id`, and
    /// commits its writes when `f` says to keep them — the same trips, with the same SQL, as the
    /// host's transaction for a component call (entering the turn, reading the snapshot,
    /// committing under the session's version). On a conflict `f` runs again over a fresh
    /// snapshot, so it must not have effects outside the storage it is given; after as many
    /// lost commits in a row as the host allows, the error is the host's.
    pub async fn run<R>(
        &self,
        session: &str,
        turn_id: &str,
        f: impl Fn(&mut ScopeStorage) -> (R, bool) + Send + Sync,
    ) -> Result<R> {
        for attempt in 1..=crate::transaction::MAX_ATTEMPTS {
            let plugins = vec![ScopeToRead { index: 0, plugin: self.plugin.clone() }];
            // A re-run holds the lock its commit needs from its begin (see `transaction.rs`).
            let (mut read, lease) = match attempt {
                1 => (self.db.begin(session, Some(turn_id), None, plugins).await?, None),
                _ => {
                    let (read, lease) = self.db.begin_leased(session, Some(turn_id), None, plugins).await?;
                    (read, Some(lease))
                }
            };
            let (_, snapshot) = read.snapshots.pop().expect("one scope was read");
            let mut storage = ScopeStorage(Scope::new(snapshot, &self.limits));
            let (value, keep) = f(&mut storage);
            let writes = storage.0.into_writes();
            if writes.is_empty() || !keep {
                if let Some(lease) = lease {
                    self.db.commit(Some(lease), session, read.head.version, Vec::new()).await?;
                }
                return Ok(value);
            }
            let calls = vec![crate::store::PluginWrites {
                plugin: self.plugin.clone(),
                writes,
                blobs: Vec::new(),
                index: Vec::new(),
            }];
            let outcome = self.db.commit(lease, session, read.head.version, calls).await?;
            if outcome == Commit::Done {
                return Ok(value);
            }
        }
        Err(crate::transaction::conflict(session))
    }
}

impl ScopeStorage {
    /// The value of `key`, with this call's writes applied.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.0.get(key)
    }

    /// Writes `key`, within the scope's quota and key rules.
    pub fn set(&mut self, key: &str, value: &[u8]) -> std::result::Result<(), ScopeError> {
        self.0.set(key.to_owned(), value.to_vec()).map_err(|e| match e {
            StorageError::QuotaExceeded(q) => {
                ScopeError::QuotaExceeded { used: q.used, requested: q.requested, limit: q.limit }
            }
            StorageError::InvalidKey(message) => ScopeError::InvalidKey(message),
        })
    }

    /// Deletes `key`; whether it was there.
    pub fn delete(&mut self, key: &str) -> bool {
        self.0.delete(key)
    }

    /// The keys that start with `prefix`, in order.
    pub fn keys(&self, prefix: &str) -> Vec<String> {
        self.0.keys(prefix)
    }
}

/// An instance of one plugin, kept for every call: instantiated once, then `before-query` runs
/// on it again and again with the same snapshot and commit as a normal call (without its
/// deadline and the checks of the returned value). The host itself never does this: a call
/// that trapped or ran out of memory could leave a broken instance behind, and what a call
/// leaves in linear memory would reach a later call of another session.
pub struct KeptInstance {
    host: Host,
    index: usize,
    store: Store<CallState>,
    bindings: Plugin,
}

impl KeptInstance {
    /// Instantiates plugin `name` of `host` once.
    pub async fn new(host: &Host, name: &str) -> Result<KeptInstance> {
        let index = plugin_index(host, name)?;
        let loaded = &host.inner.plugins[index];
        let state = CallState::new(loaded.info.clone(), Scope::default(), host.inner.sandbox.tokenizer.clone());
        let mut store = Store::new(&host.inner.sandbox.engine, state);
        store.limiter(|state| &mut state.limiter);
        // No deadline: this instance is only driven by benchmarks of well-behaved plugins.
        store.set_epoch_deadline(u64::MAX / 2);
        let bindings = loaded.pre.instantiate_async(&mut store).await.map_err(|e| Error::Other(e.into()))?;
        Ok(KeptInstance { host: host.clone(), index, store, bindings })
    }

    /// `before-query` on the kept instance, with the session's snapshot and commit as usual.
    pub async fn before_query(&mut self, turn: &TurnContext, message: &str) -> Result<Vec<Injection>> {
        let host = self.host.clone();
        let _guard = host.lock(&turn.session_id).await;
        let mut tx = host.begin(turn, Involved::One(self.index)).await?;
        let loaded = &host.inner.plugins[self.index];
        let snapshot = tx.take_snapshot(self.index);
        self.store.data_mut().scope = Scope::new(snapshot, &loaded.info.limits);
        let wit_turn = tx.turn.clone();
        let injections = self
            .bindings
            .scratchpad_plugin_hooks()
            .call_before_query(&mut self.store, &wit_turn, message)
            .await
            .map_err(|e| Error::Other(e.into()))?;
        let writes = std::mem::take(&mut self.store.data_mut().scope).into_writes();
        tx.keep_writes(self.index, writes);
        host.finish(tx).await?;
        Ok(injections.into_iter().map(|i| from_wit_injection(&loaded.info.name, i)).collect())
    }
}

/// Instantiates plugin `name` of `host` once and drops the instance without calling it: what
/// a fresh instance costs on its own.
pub async fn instantiate_once(host: &Host, name: &str) -> Result<()> {
    let loaded = &host.inner.plugins[plugin_index(host, name)?];
    host.inner.sandbox.instantiate(&loaded.pre, &loaded.info).await.map_err(|e| Error::Other(e.into()))?;
    Ok(())
}

fn plugin_index(host: &Host, name: &str) -> Result<usize> {
    host.plugin_index(name).ok_or_else(|| Error::invalid("plugin", format!("no plugin is named `{name}`")))
}
