//! Running one hook or tool call of one plugin, inside its limits.
//!
//! Every call gets a fresh instance from the plugin's cached `InstancePre` (cheap with the
//! pooling allocator), a deadline enforced with epoch interruption, a memory cap enforced by a
//! resource limiter, and a scope of storage whose writes the caller commits only on success.
//! Whatever the guest does, the outcome is a value: a result, or a [`PluginFailure`] naming
//! the plugin and the hook.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};

use crate::bindings::{Plugin, PluginPre};
use crate::capabilities::storage::Scope;
use crate::capabilities::tokens::Tokenizer;
use crate::capabilities::{CallState, MemoryCapExceeded, PluginInfo};
use crate::db::Db;
use crate::engine::EpochTicker;
use crate::error::{Error, PluginFailure};

/// A boxed future borrowing the call's bindings and store.
pub(crate) type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// The engine, the linker with every host capability, and the instance budget.
pub(crate) struct Sandbox {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<CallState>,
    /// The host's tokenizer, behind every call's `tokens` import.
    pub(crate) tokenizer: Arc<Tokenizer>,
    permits: Semaphore,
    _ticker: EpochTicker,
}

/// The deadline error the epoch callback traps with.
#[derive(Debug, thiserror::Error)]
#[error("deadline exceeded")]
struct DeadlineExceeded;

impl Sandbox {
    pub(crate) fn new(engine: Engine, tokenizer: Arc<Tokenizer>, max_concurrent_calls: u32) -> anyhow::Result<Self> {
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        Plugin::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |state| state)?;
        let ticker = EpochTicker::start(&engine);
        let permits = Semaphore::new(max_concurrent_calls as usize);
        Ok(Sandbox { engine, linker, tokenizer, permits, _ticker: ticker })
    }

    /// Runs `f` against a fresh instance of `pre`. On success returns its value and the call's
    /// state (whose scope holds the writes to commit); on failure, the classified error.
    pub(crate) async fn call<R, F>(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<PluginInfo>,
        scope: Scope,
        blob_scope: Option<(Db, String, String)>,
        hook: &str,
        f: F,
    ) -> Result<(R, CallState), Error>
    where
        R: Send,
        F: for<'a> FnOnce(&'a Plugin, &'a mut Store<CallState>) -> CallFuture<'a, R> + Send,
    {
        let _permit = self.permits.acquire().await.expect("the semaphore is never closed");
        let span = tracing::debug_span!("plugin_call", plugin = %plugin.name, hook);
        let _enter = span.enter();

        let mut state = CallState::new(plugin.clone(), scope, self.tokenizer.clone());
        state.blob_scope = blob_scope;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        let timeout = plugin.limits.call_timeout;
        let started = Instant::now();
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if started.elapsed() >= timeout { Err(DeadlineExceeded.into()) } else { Ok(UpdateDeadline::Yield(1)) }
        });

        let result = match pre.instantiate_async(&mut store).await {
            Ok(bindings) => f(&bindings, &mut store).await,
            Err(error) => Err(error),
        };
        store.data().flush_stdio();
        match result {
            Ok(value) => Ok((value, store.into_data())),
            Err(error) => {
                let failure = classify(&error, plugin, store.data().stderr_tail());
                tracing::warn!(plugin = %plugin.name, hook, %failure, "plugin call failed");
                Err(Error::Plugin { plugin: plugin.name.clone(), hook: hook.to_owned(), failure })
            }
        }
    }
}

/// Turns a wasmtime error into the failure users read.
fn classify(error: &wasmtime::Error, plugin: &PluginInfo, stderr: Option<String>) -> PluginFailure {
    if error.downcast_ref::<DeadlineExceeded>().is_some() {
        return PluginFailure::Timeout { limit_ms: plugin.limits.call_timeout.as_millis() as u64 };
    }
    if let Some(cap) = error.downcast_ref::<MemoryCapExceeded>() {
        return PluginFailure::MemoryCap { limit_bytes: cap.limit_bytes };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => PluginFailure::StackOverflow,
        Some(Trap::Interrupt) => PluginFailure::Timeout { limit_ms: plugin.limits.call_timeout.as_millis() as u64 },
        trap => {
            let mut message = match trap {
                Some(trap) => format!("wasm trap: {trap}"),
                None => format!("{error:#}"),
            };
            if let Some(stderr) = stderr {
                message = format!("{stderr} ({message})");
            }
            PluginFailure::Trap(message)
        }
    }
}

/// Checks a call's output against the plugin's output cap.
pub(crate) fn check_output(plugin: &PluginInfo, hook: &str, size: usize) -> Result<(), Error> {
    let limit_bytes = plugin.limits.output_bytes;
    if size as u64 > limit_bytes {
        return Err(Error::Plugin {
            plugin: plugin.name.clone(),
            hook: hook.to_owned(),
            failure: PluginFailure::OutputTooLarge { size: size as u64, limit_bytes },
        });
    }
    Ok(())
}
