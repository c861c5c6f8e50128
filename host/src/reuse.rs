//! One plugin instance kept across calls, and instantiation alone — only for the benchmarks.
//!
//! The host's design instantiates every call fresh from a cached `InstancePre`: a plugin's state
//! lives only in host storage, so a call that trapped or ran out of memory cannot leave a broken
//! instance behind for the next one, and nothing a call leaves in linear memory leaks into a later
//! call of another session. This type measures what that guarantee costs: it instantiates once
//! and runs `before-query` on the same instance again and again, with the same snapshot and
//! commit as a normal call (without its deadline and the checks of the returned value). Not
//! part of the supported API.

use wasmtime::Store;

use crate::bindings::Plugin;
use crate::capabilities::CallState;
use crate::capabilities::storage::Scope;
use crate::error::{Error, Result};
use crate::host::{Host, from_wit_injection};
use crate::transaction::Involved;
use crate::types::{Injection, TurnContext};

/// An instance of one plugin, reused for every call.
pub struct ReusedInstance {
    host: Host,
    index: usize,
    store: Store<CallState>,
    bindings: Plugin,
}

impl ReusedInstance {
    /// Instantiates plugin `name` of `host` once.
    pub async fn new(host: &Host, name: &str) -> Result<ReusedInstance> {
        let index = plugin_index(host, name)?;
        let loaded = &host.inner.plugins[index];
        let state = CallState::new(loaded.info.clone(), Scope::default(), host.inner.sandbox.tokenizer.clone());
        let mut store = Store::new(&host.inner.sandbox.engine, state);
        store.limiter(|state| &mut state.limiter);
        // No deadline: this instance is only driven by benchmarks of well-behaved plugins.
        store.set_epoch_deadline(u64::MAX / 2);
        let bindings = loaded.pre.instantiate_async(&mut store).await.map_err(|e| Error::Other(e.into()))?;
        Ok(ReusedInstance { host: host.clone(), index, store, bindings })
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
/// a fresh instance costs on its own (for the benchmarks' instantiation rows).
pub async fn instantiate_once(host: &Host, name: &str) -> Result<()> {
    let loaded = &host.inner.plugins[plugin_index(host, name)?];
    host.inner.sandbox.instantiate(&loaded.pre, &loaded.info).await.map_err(|e| Error::Other(e.into()))?;
    Ok(())
}

fn plugin_index(host: &Host, name: &str) -> Result<usize> {
    host.plugin_index(name).ok_or_else(|| Error::invalid("plugin", format!("no plugin is named `{name}`")))
}
