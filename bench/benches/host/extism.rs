//! The Extism peer: the scratchpad logic (`scratchpad-guest`) built as an Extism plugin
//! (`bench/extism-peer`, a `wasm32-unknown-unknown` module), hosted the way Extism's users
//! host a plugin, over the same SQLite file and the same storage layer as the native baseline.
//!
//! What one call measures, from the caller's side: [`ScopedStore::run`] reads the session's
//! scope (one read transaction on the blocking pool, as for native and the component), then,
//! inline on the calling task, the input is serialised to JSON, the one `extism::Plugin` is
//! locked and called (Extism copies the input into its kernel memory, arms its timeout timer
//! thread, runs the export in the instance it keeps between calls, and the plugin reaches the
//! scope through the host functions below, each a copy across the boundary and a lock of the
//! user data), the output is parsed, and the scope's writes are committed with the session
//! version check. Not measured: compiling the module and creating the plugin (once, in
//! [`ExtismScratchpad::open`]).

use std::path::Path;
use std::sync::Mutex;

use extism::convert::Json;
use extism::{Error, Manifest, PTR, Plugin, PluginBuilder, UserData, Wasm, host_fn};
use extism_peer::wire;
use scratchpad_bench::native::Storage as Scope;
use scratchpad_host::internals::{ScopeStorage, ScopedStore};
use scratchpad_host::{Encoding, Tokenizer};
use scratchpad_plugin_sdk::Storage;
use serde::Serialize;
use serde::de::DeserializeOwned;

mod peers {
    include!(concat!(env!("OUT_DIR"), "/peers.rs"));
}

/// What the host functions reach: the scope of the call in progress (none between calls) and
/// the host's tokenizer.
struct Call {
    scope: Option<ScopeStorage>,
    tokenizer: Tokenizer,
}

/// Runs `f` on the scope of the call in progress.
fn with_scope<R>(call: &UserData<Call>, f: impl FnOnce(&mut Scope<'_>) -> R) -> Result<R, Error> {
    let call = call.get()?;
    let mut call = call.lock().map_err(|_| Error::msg("the call state is poisoned"))?;
    let scope = call.scope.as_mut().ok_or_else(|| Error::msg("storage used outside a call"))?;
    Ok(f(&mut Scope(scope)))
}

host_fn!(storage_get(call: Call; key: String) -> Vec<u8> {
    with_scope(&call, |scope| wire::encode_value(scope.get(&key).as_deref()))
});

host_fn!(storage_set(call: Call; key: String, value: Vec<u8>) -> Json<wire::SetResult> {
    with_scope(&call, |scope| Json(scope.set(&key, &value).map_err(wire::SetError::from)))
});

host_fn!(storage_delete(call: Call; key: String) -> bool {
    with_scope(&call, |scope| scope.delete(&key))
});

host_fn!(storage_list(call: Call; prefix: String) -> Json<Vec<String>> {
    with_scope(&call, |scope| Json(scope.list(&prefix)))
});

host_fn!(count_tokens(call: Call; text: String) -> u32 {
    let call = call.get()?;
    let call = call.lock().map_err(|_| Error::msg("the call state is poisoned"))?;
    Ok(call.tokenizer.count(&text))
});

/// The scratchpad as an Extism plugin on the host's database: one `Plugin` (one instance, kept
/// between calls, as Extism does) behind a mutex, the way a host shares one plugin between
/// tasks.
pub struct ExtismScratchpad {
    store: ScopedStore,
    plugin: Mutex<Plugin>,
    call: UserData<Call>,
}

impl ExtismScratchpad {
    /// Compiles the peer and opens the database at `path` for the `scratchpad` scopes.
    pub async fn open(path: &Path) -> Result<Self, Error> {
        let wasm = std::fs::read(peers::EXTISM_PEER_PATH)?;
        let call = UserData::new(Call { scope: None, tokenizer: Tokenizer::new(Encoding::default()) });
        let plugin = PluginBuilder::new(Manifest::new([Wasm::data(wasm)]))
            .with_cache_disabled()
            .with_function(wire::STORAGE_GET, [PTR], [PTR], call.clone(), storage_get)
            .with_function(wire::STORAGE_SET, [PTR, PTR], [PTR], call.clone(), storage_set)
            .with_function(wire::STORAGE_DELETE, [PTR], [PTR], call.clone(), storage_delete)
            .with_function(wire::STORAGE_LIST, [PTR], [PTR], call.clone(), storage_list)
            .with_function(wire::COUNT_TOKENS, [PTR], [PTR], call.clone(), count_tokens)
            .build()?;
        Ok(ExtismScratchpad { store: ScopedStore::open(path, "scratchpad").await?, plugin: Mutex::new(plugin), call })
    }

    /// Calls `export` with `input` over the scope of `session`, committing the writes when
    /// `keep` accepts the output. The scope moves into the host functions' reach for the call
    /// and back out after it (a move, not a copy).
    async fn run<R: DeserializeOwned + Send>(
        &self,
        session: &str,
        turn_id: &str,
        export: &str,
        input: &impl Serialize,
        keep: impl Fn(&R) -> bool + Send + Sync,
    ) -> Result<R, Error> {
        let input = serde_json::to_vec(input)?;
        let call = self.call.get()?;
        self.store
            .run(session, turn_id, |storage| {
                let mut plugin = self.plugin.lock().expect("a previous call panicked");
                call.lock().expect("a previous call panicked").scope = Some(std::mem::take(storage));
                let output = plugin
                    .call::<&[u8], &[u8]>(export, &input)
                    .and_then(|bytes| serde_json::from_slice::<R>(bytes).map_err(Error::from));
                *storage = call.lock().expect("a previous call panicked").scope.take().expect("the call's scope");
                let commit = output.as_ref().is_ok_and(&keep);
                (output, commit)
            })
            .await?
    }

    /// `before_query` for turn `index` of `session`: the injections.
    pub async fn before_query(&self, session: &str, turn_id: &str, index: u32) -> Result<Vec<wire::Injection>, Error> {
        let input = wire::BeforeQuery { turn: wire::Turn::new(session, turn_id, index), message: String::new() };
        self.run(session, turn_id, wire::BEFORE_QUERY, &input, |_| true).await
    }

    /// A tool call in turn `index` of `session`, committed when it succeeds.
    pub async fn call_tool(
        &self,
        session: &str,
        turn_id: &str,
        index: u32,
        name: &str,
        args: &str,
    ) -> Result<String, Error> {
        let turn = wire::Turn::new(session, turn_id, index);
        let input = wire::CallTool { turn, name: name.to_owned(), arguments: args.to_owned() };
        let result: wire::ToolResult =
            self.run(session, turn_id, wire::CALL_TOOL, &input, |r: &wire::ToolResult| r.is_ok()).await?;
        result.map_err(Error::msg)
    }
}
