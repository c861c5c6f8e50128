//! The scratchpad logic compiled natively into the host, over the same SQLite file and the
//! same storage layer as the component: the benchmarks' native baseline. It runs the very code
//! the component runs (`scratchpad-guest`), so the comparison measures the sandbox, not two
//! implementations. Not part of the supported API.

use std::sync::Arc;

use scratchpad_plugin_sdk as sdk;

use crate::capabilities::storage::Scope;
use crate::capabilities::tokens::Tokenizer;
use crate::db::Db;
use crate::db::state::{self, Commit};
use crate::{Encoding, Error, Result};

/// The scratchpad plugin as native code on the host's database.
pub struct NativeScratchpad {
    db: Db,
    config: scratchpad_guest::Config,
    tokenizer: Arc<Tokenizer>,
    quota: u64,
}

struct ScopeStorage<'a>(&'a mut Scope);

impl sdk::Storage for ScopeStorage<'_> {
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

impl sdk::Tokenizer for Tokenizer {
    fn count(&self, text: &str) -> u32 {
        Tokenizer::count(self, text)
    }
}

impl NativeScratchpad {
    /// Opens the database at `path` (the schema the host uses) with the default configuration.
    pub async fn open(path: &std::path::Path) -> Result<Self> {
        Ok(NativeScratchpad {
            db: Db::open(path).await?,
            config: scratchpad_guest::Config::default(),
            tokenizer: Arc::new(Tokenizer::new(Encoding::default())),
            quota: crate::Limits::default().storage_quota_bytes,
        })
    }

    /// Runs `f` over a snapshot of the `scratchpad` scope of `session` and commits its writes,
    /// exactly as the host does for the component (optimistic, per-session version).
    async fn run<R>(
        &self,
        session: &str,
        f: impl Fn(&mut sdk_scratchpad::Pad<'_>) -> (R, bool) + Send + Sync,
    ) -> Result<R> {
        loop {
            let probe = session.to_owned();
            let snapshot = self.db.run(move |conn| state::load(conn, "scratchpad", &probe)).await?;
            let version = snapshot.version;
            let mut scope = Scope::new(snapshot, self.quota);
            let (value, keep) = {
                let mut storage = ScopeStorage(&mut scope);
                let mut pad = scratchpad_guest::Scratchpad::new(&mut storage, &*self.tokenizer, &self.config);
                f(&mut pad)
            };
            let writes = scope.into_writes();
            if writes.is_empty() || !keep {
                return Ok(value);
            }
            let probe = session.to_owned();
            let outcome = self
                .db
                .run(move |conn| state::commit(conn, &probe, version, &[("scratchpad".to_owned(), writes, Vec::new())]))
                .await?;
            if outcome == Commit::Done {
                return Ok(value);
            }
        }
    }

    /// `before-query` for turn `index` of `session`: the injected texts.
    pub async fn before_query(&self, session: &str, turn_id: &str, index: u32) -> Result<Vec<String>> {
        let turn = turn(session, turn_id, index);
        self.run(session, |pad| (pad.before_query(&turn, "").into_iter().map(|i| i.text).collect(), true)).await
    }

    /// A tool call in turn `index` of `session`, committed when it succeeds.
    pub async fn call_tool(&self, session: &str, turn_id: &str, index: u32, name: &str, args: &str) -> Result<String> {
        let turn = turn(session, turn_id, index);
        let result = self
            .run(session, |pad| {
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
    pub(super) type Pad<'a> = scratchpad_guest::Scratchpad<'a, super::ScopeStorage<'a>, super::Tokenizer>;
}
