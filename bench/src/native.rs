//! The scratchpad logic compiled natively, over the same SQLite file and the same storage layer
//! as the component: the benchmarks' native baseline. It runs the very code the component runs
//! (`scratchpad-guest`), so the comparison measures the sandbox, not two implementations.

use std::sync::Arc;

use scratchpad_host::internals::{ScopeError, ScopeStorage, ScopedStore};
use scratchpad_host::{Encoding, Error, Result, Tokenizer};
use scratchpad_plugin_sdk as sdk;

/// The host's storage scope as the SDK's storage, so native code stores exactly the way the
/// component does.
pub struct Storage<'a>(pub &'a mut ScopeStorage);

impl sdk::Storage for Storage<'_> {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.0.get(key).map(<[u8]>::to_vec)
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), sdk::StorageError> {
        self.0.set(key, value).map_err(|e| match e {
            ScopeError::QuotaExceeded { used, requested, limit } => {
                sdk::StorageError::QuotaExceeded(sdk::Quota { used, requested, limit })
            }
            ScopeError::InvalidKey(message) => sdk::StorageError::InvalidKey(message),
        })
    }
    fn delete(&mut self, key: &str) -> bool {
        self.0.delete(key)
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        self.0.keys(prefix)
    }
}

/// The host's tokenizer as the SDK's.
struct Tokens(Arc<Tokenizer>);

impl sdk::Tokenizer for Tokens {
    fn count(&self, text: &str) -> u32 {
        self.0.count(text)
    }
}

type Pad<'a, 's> = scratchpad_guest::Scratchpad<'a, Storage<'s>, Tokens>;

/// The scratchpad plugin as native code on the host's database.
pub struct NativeScratchpad {
    store: ScopedStore,
    config: scratchpad_guest::Config,
    tokens: Tokens,
}

impl NativeScratchpad {
    /// Opens the database at `path` (the schema the host uses) with the default configuration.
    pub async fn open(path: &std::path::Path) -> Result<Self> {
        Ok(NativeScratchpad {
            store: ScopedStore::open(path, "scratchpad").await?,
            config: scratchpad_guest::Config::default(),
            tokens: Tokens(Arc::new(Tokenizer::new(Encoding::default()))),
        })
    }

    /// Runs `f` on the scratchpad of `session` through [`ScopedStore::run`], as the host runs
    /// the component.
    async fn run<R>(
        &self,
        session: &str,
        turn_id: &str,
        f: impl Fn(&mut Pad<'_, '_>) -> (R, bool) + Send + Sync,
    ) -> Result<R> {
        self.store
            .run(session, turn_id, |scope| {
                let mut storage = Storage(scope);
                let mut pad = scratchpad_guest::Scratchpad::new(&mut storage, &self.tokens, &self.config);
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
        result.map(|o| o.content).map_err(|e| Error::InvalidInput { what: "tool call", message: format!("{e:?}") })
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
