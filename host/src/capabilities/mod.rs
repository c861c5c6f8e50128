//! What the host gives a plugin during one call, in layers that point one way: the data a call
//! holds (`scope`, `tokenizer`, `memory`, `output`) ← the call's state (`call`: `CallState`,
//! the wasmtime store's data) ← one module per WIT import, each implementing its host trait
//! on `CallState`. The linker (in `sandbox.rs`) binds those imports.

pub(crate) mod blobs;
pub(crate) mod call;
pub(crate) mod checkpoints;
pub(crate) mod config;
pub(crate) mod index;
pub(crate) mod log;
pub(crate) mod memory;
pub(crate) mod metadata;
pub(crate) mod observation;
pub(crate) mod output;
pub(crate) mod scope;
pub(crate) mod storage;
pub(crate) mod tokenizer;
pub(crate) mod tokens;

/// The `types` interface has no functions: its host trait is empty.
impl crate::bindings::wit::Host for call::CallState {}
