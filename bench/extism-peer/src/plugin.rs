//! The Extism side: the SDK's [`Storage`] and [`Tokenizer`] over Extism host functions, and the
//! exports, each running [`Scratchpad`] exactly as the component's glue does.

use extism_pdk::{host_fn, plugin_fn, FnResult, Json};
use scratchpad_guest::{Config, Scratchpad};
use scratchpad_plugin_sdk::{Storage, StorageError, Tokenizer};

use crate::wire;

// The names must match `wire`'s constants: the PDK takes the import names from these idents.
#[host_fn]
extern "ExtismHost" {
    fn storage_get(key: &str) -> Vec<u8>;
    fn storage_set(key: &str, value: &[u8]) -> Json<wire::SetResult>;
    fn storage_delete(key: &str) -> bool;
    fn storage_list(prefix: &str) -> Json<Vec<String>>;
    fn count_tokens(text: &str) -> u32;
}

/// A host function's answer. Failing to reach the host is not a value the traits can carry (the
/// WIT imports cannot fail either), so it aborts the call, which the host sees as an error.
fn answer<T>(result: Result<T, extism_pdk::Error>) -> T {
    result.unwrap_or_else(|e| panic!("an Extism host function failed: {e:?}"))
}

/// [`Storage`] through the host functions.
struct ExtismStorage;

impl Storage for ExtismStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        wire::decode_value(&answer(unsafe { storage_get(key) }))
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), StorageError> {
        answer(unsafe { storage_set(key, value) }).0.map_err(StorageError::from)
    }
    fn delete(&mut self, key: &str) -> bool {
        answer(unsafe { storage_delete(key) })
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        answer(unsafe { storage_list(prefix) }).0
    }
}

/// [`Tokenizer`] through the `count_tokens` host function.
struct ExtismTokenizer;

impl Tokenizer for ExtismTokenizer {
    fn count(&self, text: &str) -> u32 {
        answer(unsafe { count_tokens(text) })
    }
}

/// Runs `f` on the scratchpad with the configuration under the plugin's `scratchpad` config key
/// (`{}` when there is none), read on every call as the component reads its `config` import.
fn with<R>(f: impl FnOnce(&mut Scratchpad<'_, ExtismStorage, ExtismTokenizer>) -> R) -> FnResult<R> {
    let text = extism_pdk::config::get("scratchpad")?.unwrap_or_else(|| "{}".to_owned());
    let config = Config::from_json(&text).map_err(extism_pdk::Error::msg)?;
    Ok(f(&mut Scratchpad::new(&mut ExtismStorage, &ExtismTokenizer, &config)))
}

/// `before-query`: the injections for the turn.
#[plugin_fn]
pub fn before_query(Json(input): Json<wire::BeforeQuery>) -> FnResult<Json<Vec<wire::Injection>>> {
    let turn = input.turn.into();
    let injections = with(|pad| pad.before_query(&turn, &input.message))?;
    Ok(Json(injections.into_iter().map(wire::Injection::from).collect()))
}

/// `call-tool`: the tool's content, or its error.
#[plugin_fn]
pub fn call_tool(Json(input): Json<wire::CallTool>) -> FnResult<Json<wire::ToolResult>> {
    let turn = input.turn.into();
    let result = with(|pad| pad.call_tool(&turn, &input.name, &input.arguments))?;
    Ok(Json(result.map(|output| output.content).map_err(|e| format!("{e:?}"))))
}
