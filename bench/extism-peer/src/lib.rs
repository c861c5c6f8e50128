//! The session scratchpad as an [Extism](https://extism.org) plugin: the benchmarks' peer
//! baseline, the plugin system users would most likely pick instead of components.
//!
//! It runs the component's own logic, [`scratchpad_guest::Scratchpad`], with the SDK's
//! `Storage` and `Tokenizer` traits implemented over Extism host functions instead of the WIT
//! imports; there is no second copy of the logic. Exports (JSON in, JSON out, see [`wire`]):
//! `before_query` and `call_tool`. Host functions (namespace `extism:host/user`):
//! `storage_get`, `storage_set`, `storage_delete`, `storage_list` and `count_tokens`; the host
//! (`bench/benches/host/extism.rs`) backs them with the host's own storage layer.
//!
//! Built for `wasm32-unknown-unknown` by `bench/build.rs`. The native build is only
//! [`wire`], which the benchmark uses to talk to the plugin.

pub mod wire;

#[cfg(target_arch = "wasm32")]
mod plugin;
