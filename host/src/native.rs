//! The scratchpad logic compiled natively into the host, over the same SQLite file and the
//! same storage layer as the component: the benchmarks' native baseline. It runs the very code
//! the component runs (`scratchpad-guest`), so the comparison measures the sandbox, not two
//! implementations. [`ScopedStore`] is that storage layer on its own, so another plugin system
//! hosting the same logic (the benchmarks' Extism peer) stores exactly the way the host does.
//! Not part of the supported API.

use std::sync::Arc;

use scratchpad_plugin_sdk as sdk;

use crate::capabilities::storage::Scope;
use crate::capabilities::tokens::Tokenizer;
use crate::store::{Commit, Db, Location, ScopeToRead};
use crate::{Encoding, Error, Result};

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

impl ScopedStore {
    /// Opens the database at `location` (the schema the host uses) for the scopes of `plugin`,
    /// with the host's default storage quota and key cap.
    pub async fn open(location: impl Into<Location>, plugin: &str) -> Result<Self> {
        let db = Db::open(&location.into()).await?;
        Ok(ScopedStore { db, plugin: plugin.to_owned(), limits: crate::Limits::default() })
    }

    /// Runs `f` over a snapshot of this plugin's scope in `session`, in turn `turn_id`, and
    /// commits its writes when `f` says to keep them — the same two trips, with the same SQL, as
    /// the host's transaction for a component call (entering the turn, reading the snapshot,
    /// committing under the session's version). On a conflict `f` runs again over a fresh
    /// snapshot, so it must not have effects outside the storage it is given; after as many
    /// lost commits in a row as the host allows, the error is the host's.
    pub async fn run<R>(
        &self,
        session: &str,
        turn_id: &str,
        f: impl Fn(&mut ScopeStorage) -> (R, bool) + Send + Sync,
    ) -> Result<R> {
        for _ in 0..crate::transaction::MAX_ATTEMPTS {
            let plugins = vec![ScopeToRead { index: 0, plugin: self.plugin.clone() }];
            let mut read = self.db.begin(session, turn_id, None, plugins).await?;
            let (_, snapshot) = read.snapshots.pop().expect("one scope was read");
            let mut storage = ScopeStorage(Scope::new(snapshot, &self.limits));
            let (value, keep) = f(&mut storage);
            let writes = storage.0.into_writes();
            if writes.is_empty() || !keep {
                return Ok(value);
            }
            let calls = vec![(self.plugin.clone(), writes, Vec::new())];
            let outcome = self.db.commit(session, read.head.version, calls).await?;
            if outcome == Commit::Done {
                return Ok(value);
            }
        }
        Err(crate::transaction::conflict(session))
    }
}

impl sdk::Storage for ScopeStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.0.get(key).map(<[u8]>::to_vec)
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), sdk::StorageError> {
        use crate::bindings::scratchpad::plugin::storage::StorageError as Host;
        self.0.set(key.to_owned(), value.to_vec()).map_err(|e| match e {
            Host::QuotaExceeded(q) => {
                sdk::StorageError::QuotaExceeded(sdk::Quota { used: q.used, requested: q.requested, limit: q.limit })
            }
            Host::InvalidKey(m) => sdk::StorageError::InvalidKey(m),
        })
    }
    fn delete(&mut self, key: &str) -> bool {
        self.0.delete(key)
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        self.0.keys(prefix)
    }
}

/// The scratchpad plugin as native code on the host's database.
pub struct NativeScratchpad {
    store: ScopedStore,
    config: scratchpad_guest::Config,
    tokenizer: Arc<Tokenizer>,
}

impl sdk::Tokenizer for Tokenizer {
    fn count(&self, text: &str) -> u32 {
        Tokenizer::count(self, text)
    }
}

impl NativeScratchpad {
    /// Opens the database at `path` (the schema the host uses) with the default configuration.
    pub async fn open(path: &std::path::Path) -> Result<Self> {
        Ok(NativeScratchpad {
            store: ScopedStore::open(path, "scratchpad").await?,
            config: scratchpad_guest::Config::default(),
            tokenizer: Arc::new(Tokenizer::new(Encoding::default())),
        })
    }

    /// Runs `f` on the scratchpad of `session` through [`ScopedStore::run`], as the host runs
    /// the component.
    async fn run<R>(
        &self,
        session: &str,
        turn_id: &str,
        f: impl Fn(&mut sdk_scratchpad::Pad<'_>) -> (R, bool) + Send + Sync,
    ) -> Result<R> {
        self.store
            .run(session, turn_id, |storage| {
                let mut pad = scratchpad_guest::Scratchpad::new(storage, &*self.tokenizer, &self.config);
                f(&mut pad)
            })
            .await
    }

    /// `before-query` for turn `index` of `session`: the injected texts.
    pub async fn before_query(&self, session: &str, turn_id: &str, index: u32) -> Result<Vec<String>> {
        let turn = turn(session, turn_id, index);
        self.run(session, turn_id, |pad| (pad.before_query(&turn, "").into_iter().map(|i| i.text).collect(), true))
            .await
    }

    /// A tool call in turn `index` of `session`, committed when it succeeds.
    pub async fn call_tool(&self, session: &str, turn_id: &str, index: u32, name: &str, args: &str) -> Result<String> {
        let turn = turn(session, turn_id, index);
        let result = self
            .run(session, turn_id, |pad| {
                let result = pad.call_tool(&turn, name, args);
                let ok = result.is_ok();
                (result, ok)
            })
            .await?;
        result.map(|o| o.content).map_err(|e| Error::invalid("tool call", format!("{e:?}")))
    }
}

fn turn(session: &str, turn_id: &str, index: u32) -> sdk::Turn {
    sdk::Turn {
        session_id: session.to_owned(),
        turn_id: turn_id.to_owned(),
        turn_index: index,
        tokens_used: None,
        context_window: None,
    }
}

mod sdk_scratchpad {
    /// The scratchpad over the host's scope, as the native baseline runs it.
    pub(super) type Pad<'a> = scratchpad_guest::Scratchpad<'a, super::ScopeStorage, super::Tokenizer>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Origin;

    /// A hot session's begin needs no trip and so never waits: a task looping over one must
    /// still give the runtime back its thread now and then, or a one-thread runtime never runs
    /// anything else (here: the timer that ends the loop).
    #[test]
    fn a_loop_of_operations_on_a_hot_session_lets_other_tasks_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hot.db");
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let store = Arc::new(ScopedStore::open(path.as_path(), "p").await.unwrap());
                store.db.create_session("s", &Origin::New, &[], Vec::new()).await.unwrap();
                let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
                let (looping, flag) = (store.clone(), stop.clone());
                let calls = tokio::spawn(async move {
                    let mut calls = 0u64;
                    while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                        looping.run("s", "t", |_| ((), false)).await.unwrap();
                        calls += 1;
                    }
                    calls
                });
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let calls = calls.await.unwrap();
                done.send(calls).unwrap();
            });
        });
        let calls = finished.recv_timeout(std::time::Duration::from_secs(60)).expect("the timer never ran: starved");
        assert!(calls > 2, "the loop ran hot operations ({calls})");
    }
}
