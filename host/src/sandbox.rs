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

use tokio::sync::{Semaphore, SemaphorePermit};
use tracing::Instrument;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};

use crate::bindings::{Plugin, PluginPre, wit};
use crate::capabilities::call::{CallState, PendingCheckpoint, PluginInfo, SessionScope};
use crate::capabilities::memory::MemoryCapExceeded;
use crate::capabilities::scope::Scope;
use crate::capabilities::tokenizer::Tokenizer;
use crate::config::ITEM_OVERHEAD_BYTES;
use crate::engine::EpochTicker;
use crate::error::{DeadlineExceeded, Error, PluginFailure};
use crate::grants::{Denied, Power};
use crate::store::PendingBlob;
use crate::types::ToolSpec;

/// A boxed future borrowing the call's bindings and store.
pub(crate) type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// The engine, the linker with every host capability, and the instance budget.
pub(crate) struct Sandbox {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<CallState>,
    /// The host's tokenizer, behind every call's `tokens` import.
    pub(crate) tokenizer: Arc<Tokenizer>,
    /// Whether the embedder gave the host a summarizer (what `checkpoints.available` says).
    pub(crate) summarizer_available: bool,
    permits: Semaphore,
    _ticker: EpochTicker,
}

impl Sandbox {
    pub(crate) fn new(engine: Engine, tokenizer: Arc<Tokenizer>, max_concurrent_calls: u32) -> anyhow::Result<Self> {
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        Plugin::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |state| state)?;
        let ticker = EpochTicker::start(&engine);
        let permits = Semaphore::new(max_concurrent_calls as usize);
        Ok(Sandbox { engine, linker, tokenizer, summarizer_available: false, permits, _ticker: ticker })
    }

    /// A fresh instance of `pre`: instantiated, never called. Each serves exactly one call.
    pub(crate) async fn instantiate(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<PluginInfo>,
    ) -> wasmtime::Result<Fresh> {
        let mut store = self.store(plugin);
        let bindings = pre.instantiate_async(&mut store).await?;
        Ok(Fresh { store, bindings })
    }

    /// A store for one call of `plugin`, its deadline armed: instantiation runs the
    /// component's start functions, guest code.
    fn store(&self, plugin: &Arc<PluginInfo>) -> Store<CallState> {
        let mut state = CallState::new(plugin.clone(), Scope::default(), self.tokenizer.clone());
        state.summarizer_available = self.summarizer_available;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        arm_deadline(&mut store, plugin.limits.call_timeout);
        store
    }

    /// Calls the component's `permissions.requested` (the function `export`) in a fresh
    /// instance, within the plugin's limits, and returns the names it asks for.
    pub(crate) async fn ask_permissions(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<PluginInfo>,
        export: &wasmtime::component::ComponentExportIndex,
    ) -> Result<Vec<String>, Error> {
        const HOOK: &str = "permissions";
        let _permit = self.permits.acquire().await.expect("the semaphore is never closed");
        let mut store = self.store(plugin);
        let fail = |error: wasmtime::Error, store: &Store<CallState>| {
            let failure = classify(&error, plugin, store.data().stderr_tail());
            Error::Plugin { plugin: plugin.name.clone(), hook: HOOK.to_owned(), failure }
        };
        let instance = match pre.instance_pre().instantiate_async(&mut store).await {
            Ok(instance) => instance,
            Err(error) => return Err(fail(error, &store)),
        };
        let requested = instance.get_typed_func::<(), (Vec<String>,)>(&mut store, export).map_err(|e| Error::Load {
            plugin: plugin.name.clone(),
            message: format!("its `permissions.requested` export does not have the contract's type: {e:#}"),
        })?;
        let result = requested.call_async(&mut store, ()).await;
        store.data().flush_stdio();
        match result {
            Ok((names,)) => {
                let size = names.iter().map(|name| name.len() + ITEM_OVERHEAD_BYTES).sum::<usize>();
                check_output(plugin, HOOK, size)?;
                Ok(names)
            }
            Err(error) => Err(fail(error, &store)),
        }
    }

    /// Calls the function `export` with no arguments in a fresh instance (an optional export of
    /// a newer contract that the generated bindings do not hold, e.g. `view.describe`), with
    /// `scope` as the plugin's storage, within the plugin's limits, and returns its value.
    /// Whatever the call writes is dropped with its instance. The value's bounds and the
    /// output cap are the caller's to check.
    pub(crate) async fn call_read_only<R>(
        &self,
        pre: &PluginPre<CallState>,
        plugin: &Arc<PluginInfo>,
        scope: Scope,
        session_scope: Option<SessionScope>,
        hook: &str,
        export: &wasmtime::component::ComponentExportIndex,
    ) -> Result<R, Error>
    where
        R: wasmtime::component::ComponentType + wasmtime::component::Lift + Send + Sync + 'static,
    {
        let span = tracing::debug_span!("plugin_call", plugin = %plugin.name, hook);
        async move {
            let _permit = self.permits.acquire().await.expect("the semaphore is never closed");
            let failed = |failure: PluginFailure| {
                tracing::warn!(plugin = %plugin.name, hook, %failure, "plugin call failed");
                Error::Plugin { plugin: plugin.name.clone(), hook: hook.to_owned(), failure }
            };
            let mut store = self.store(plugin);
            let instance = match pre.instance_pre().instantiate_async(&mut store).await {
                Ok(instance) => instance,
                Err(error) => return Err(failed(classify(&error, plugin, store.data().stderr_tail()))),
            };
            let func = instance.get_typed_func::<(), (R,)>(&mut store, export).map_err(|e| {
                failed(PluginFailure::Contract(format!("its `{hook}` export does not have the contract's type: {e:#}")))
            })?;
            let state = store.data_mut();
            state.scope = scope;
            state.session = session_scope;
            arm_deadline(&mut store, plugin.limits.call_timeout);
            let result = func.call_async(&mut store, ()).await;
            store.data().flush_stdio();
            match result {
                Ok((value,)) => Ok(value),
                Err(error) => Err(failed(classify(&error, plugin, store.data().stderr_tail()))),
            }
        }
        .instrument(span)
        .await
    }

    /// Runs `f` on the instance `fresh` gives (or on one made now when it gives none), with
    /// `scope` as the plugin's storage. `fresh` is asked only once the call holds its permit,
    /// so an instance is never held by a call that is still waiting to run. On success returns
    /// its value and what the call leaves behind ([`Spent`]: its writes, to commit); on
    /// failure, the classified error. The call runs in a `plugin_call` span (plugin, hook)
    /// attached to its future, so log lines of other tasks interleaved on the thread are not
    /// tagged with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call<R, F>(
        &self,
        fresh: impl FnOnce() -> Option<Fresh> + Send,
        pre: &PluginPre<CallState>,
        plugin: &Arc<PluginInfo>,
        scope: Scope,
        session_scope: Option<SessionScope>,
        hook: &str,
        f: F,
    ) -> Result<(R, Spent<'_>), Error>
    where
        R: Send,
        F: for<'a> FnOnce(&'a Plugin, &'a mut Store<CallState>) -> CallFuture<'a, R> + Send,
    {
        let span = tracing::debug_span!("plugin_call", plugin = %plugin.name, hook);
        async move {
            let permit = self.permits.acquire().await.expect("the semaphore is never closed");
            let fail = |error: wasmtime::Error, stderr: Option<String>| {
                let failure = classify(&error, plugin, stderr);
                tracing::warn!(plugin = %plugin.name, hook, %failure, "plugin call failed");
                Error::Plugin { plugin: plugin.name.clone(), hook: hook.to_owned(), failure }
            };
            let Fresh { mut store, bindings } = match fresh() {
                Some(fresh) => fresh,
                None => self.instantiate(pre, plugin).await.map_err(|e| fail(e, None))?,
            };
            let state = store.data_mut();
            state.scope = scope;
            state.session = session_scope;
            arm_deadline(&mut store, plugin.limits.call_timeout);
            let result = f(&bindings, &mut store).await;
            store.data().flush_stdio();
            // The used instance leaves with the call's results, and the permit with it: the
            // caller gives the slot back (see `warm.rs`) before another call may take one.
            match result {
                Ok(value) => Ok((value, Spent::new(store, permit))),
                Err(error) => {
                    let error = fail(error, store.data().stderr_tail());
                    drop((store, permit));
                    Err(error)
                }
            }
        }
        .instrument(span)
        .await
    }
}

/// An instance instantiated and never called (see [`Sandbox::instantiate`]).
pub(crate) struct Fresh {
    store: Store<CallState>,
    bindings: Plugin,
}

/// What a successful call leaves behind besides its value.
pub(crate) struct Spent<'s> {
    /// The plugin's storage scope, holding the call's writes.
    pub(crate) scope: Scope,
    /// Blob entries the call stored.
    pub(crate) pending_blobs: Vec<PendingBlob>,
    /// The call's writes to its project's search index.
    pub(crate) pending_index: Vec<crate::store::IndexWrite>,
    /// Its reads of the index and the documents they answered.
    pub(crate) index_reads: (u32, u32),
    /// The checkpoint the call asked for.
    pub(crate) checkpoint_request: Option<PendingCheckpoint>,
    /// Linear memory (at instantiation, peak), bytes.
    pub(crate) memory: (u64, u64),
    /// The used instance. Dropping it resets its memory and gives its slot back to the pool.
    pub(crate) used: Store<CallState>,
    /// The call's permit, held until the used instance has been handed on.
    pub(crate) permit: SemaphorePermit<'s>,
}

impl<'s> Spent<'s> {
    fn new(mut store: Store<CallState>, permit: SemaphorePermit<'s>) -> Self {
        let state = store.data_mut();
        Spent {
            scope: std::mem::take(&mut state.scope),
            pending_blobs: std::mem::take(&mut state.pending_blobs),
            pending_index: std::mem::take(&mut state.pending_index),
            index_reads: state.index_reads,
            checkpoint_request: state.checkpoint_request.take(),
            memory: state.limiter.usage(),
            used: store,
            permit,
        }
    }
}

/// Starts `timeout` of wall-clock time for the guest code `store` runs next, checked at every
/// epoch tick.
fn arm_deadline(store: &mut Store<CallState>, timeout: std::time::Duration) {
    let started = Instant::now();
    store.data_mut().deadline = started.checked_add(timeout);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if started.elapsed() >= timeout { Err(DeadlineExceeded.into()) } else { Ok(UpdateDeadline::Yield(1)) }
    });
}

/// What an out-of-bounds memory access most often means in a plugin, said with the trap.
pub(crate) const OUT_OF_BOUNDS_CAUSE: &str = "a read or write outside the plugin's memory; in a plugin compiled from Rust or C, most \
     often unbounded recursion running off the stack those languages keep in linear memory";

/// Turns a wasmtime error into the failure users read.
fn classify(error: &wasmtime::Error, plugin: &PluginInfo, stderr: Option<String>) -> PluginFailure {
    if error.downcast_ref::<DeadlineExceeded>().is_some() {
        return PluginFailure::Timeout { limit_ms: plugin.limits.call_timeout.as_millis() as u64 };
    }
    if let Some(cap) = error.downcast_ref::<MemoryCapExceeded>() {
        return PluginFailure::MemoryCap { limit_bytes: cap.limit_bytes };
    }
    if let Some(Denied(power)) = error.downcast_ref::<Denied>() {
        return PluginFailure::Denied { power: power.name().to_owned() };
    }
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return PluginFailure::Exited { success: exit.0 == 0 };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => PluginFailure::StackOverflow,
        Some(Trap::MemoryOutOfBounds) => {
            PluginFailure::Trap(format!("{} ({OUT_OF_BOUNDS_CAUSE})", Trap::MemoryOutOfBounds))
        }
        Some(Trap::Interrupt) => PluginFailure::Timeout { limit_ms: plugin.limits.call_timeout.as_millis() as u64 },
        trap => {
            let mut message = match trap {
                // A trap's own text already starts with "wasm trap: ".
                Some(trap) => trap.to_string(),
                None => format!("{error:#}"),
            };
            if let Some(stderr) = stderr {
                message = format!("{stderr} ({message})");
            }
            PluginFailure::Trap(message)
        }
    }
}

/// Most injections one call may return (`before-query`, `before-session-create`).
pub(crate) const MAX_INJECTIONS_PER_CALL: usize = 64;

/// What a hook or tool hands back, as the output cap and the commit rule see it. The host
/// checks both *before* it commits the call's writes, so a refused call keeps nothing.
pub(crate) trait CallOutput {
    /// Most items of this kind one call may return in a list, and what they are called.
    const MAX_ITEMS: (usize, &'static str) = (usize::MAX, "items");

    /// Bytes the call returns as the output cap counts them: text (injections, tool output,
    /// specs, error messages) plus [`ITEM_OVERHEAD_BYTES`] per list item.
    fn output_bytes(&self) -> usize;

    /// Whether the call's writes are committed: a tool error changes nothing.
    fn commits(&self) -> bool {
        true
    }

    /// Why the value breaks the contract given the plugin's manifest (`declared`), if it does.
    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        let _ = declared;
        None
    }
}

impl CallOutput for () {
    fn output_bytes(&self) -> usize {
        0
    }
}

impl CallOutput for String {
    fn output_bytes(&self) -> usize {
        self.len()
    }
}

impl<T: CallOutput> CallOutput for Option<T> {
    fn output_bytes(&self) -> usize {
        self.as_ref().map_or(0, T::output_bytes)
    }

    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        self.as_ref().and_then(|value| value.breach(declared))
    }
}

impl<T: CallOutput> CallOutput for Vec<T> {
    fn output_bytes(&self) -> usize {
        self.iter().map(|item| item.output_bytes().saturating_add(ITEM_OVERHEAD_BYTES)).fold(0, usize::saturating_add)
    }

    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        let (most, what) = T::MAX_ITEMS;
        if self.len() > most {
            return Some(format!("it returned {} {what}; one call may return at most {most}", self.len()));
        }
        self.iter().find_map(|item| item.breach(declared))
    }
}

impl<T: CallOutput> CallOutput for Result<T, wit::ToolError> {
    fn output_bytes(&self) -> usize {
        match self {
            Ok(value) => value.output_bytes(),
            Err(error) => error.output_bytes(),
        }
    }

    fn commits(&self) -> bool {
        self.is_ok()
    }

    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        self.as_ref().ok().and_then(|value| value.breach(declared))
    }
}

impl CallOutput for wit::ToolError {
    fn output_bytes(&self) -> usize {
        match self {
            wit::ToolError::UnknownTool(m)
            | wit::ToolError::InvalidArguments(m)
            | wit::ToolError::Rejected(m)
            | wit::ToolError::NotFound(m)
            | wit::ToolError::Failed(m) => m.len(),
        }
    }
}

impl CallOutput for wit::Injection {
    const MAX_ITEMS: (usize, &'static str) = (MAX_INJECTIONS_PER_CALL, "injections");

    fn output_bytes(&self) -> usize {
        self.text.len()
    }
}

impl CallOutput for wit::SessionSetup {
    fn output_bytes(&self) -> usize {
        self.injections.output_bytes()
    }

    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        self.injections.breach(declared)
    }
}

impl CallOutput for wit::ToolOutput {
    fn output_bytes(&self) -> usize {
        self.content.len()
    }
}

impl CallOutput for wit::ToolSpec {
    const MAX_ITEMS: (usize, &'static str) = (crate::config::MAX_TOOLS, "tools");

    fn output_bytes(&self) -> usize {
        self.name.len() + self.description.len() + self.parameters.len()
    }

    /// A plugin offers only tools its manifest declares, within the manifest's bounds.
    fn breach(&self, declared: &[ToolSpec]) -> Option<String> {
        if !declared.iter().any(|t| t.name == self.name) {
            return Some(format!("it offered the tool `{}`, which its manifest does not declare", self.name));
        }
        use crate::config::{MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES};
        (self.description.len() > MAX_DESCRIPTION_BYTES || self.parameters.len() > MAX_SCHEMA_BYTES).then(|| {
            format!(
                "it offered the tool `{}` with a description or schema over the manifest's bounds ({} and {} bytes)",
                self.name, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES
            )
        })
    }
}

/// Checks a call's value against the contract and the plugin's output cap, before anything
/// it wrote is committed.
pub(crate) fn check_value(
    plugin: &PluginInfo,
    declared: &[ToolSpec],
    hook: &str,
    value: &impl CallOutput,
) -> Result<(), Error> {
    if let Some(message) = value.breach(declared) {
        let failure = PluginFailure::Contract(message);
        return Err(Error::Plugin { plugin: plugin.name.clone(), hook: hook.to_owned(), failure });
    }
    check_output(plugin, hook, value.output_bytes())
}

/// Checks a call's output against the plugin's output cap.
fn check_output(plugin: &PluginInfo, hook: &str, size: usize) -> Result<(), Error> {
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

/// Refuses a hook's answer that needs a power the plugin does not hold (`needs`, from the
/// answer), before anything the call wrote is committed.
pub(crate) fn check_power(plugin: &PluginInfo, hook: &str, needs: Option<Power>) -> Result<(), Error> {
    match needs.map(|power| plugin.grants.require(power)) {
        Some(Err(Denied(power))) => Err(Error::Plugin {
            plugin: plugin.name.clone(),
            hook: hook.to_owned(),
            failure: PluginFailure::Denied { power: power.name().to_owned() },
        }),
        _ => Ok(()),
    }
}
