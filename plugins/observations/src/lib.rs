//! The observations component: the large-observation store, streamed so that size
//! never matters.
//!
//! A tool result larger than `thresholdBytes` (4096 by default) is stored whole by the host's
//! blob store and the model sees a short synthetic observation instead: `ok`, the entry's
//! `scratchpad_id`, `size_bytes`, `kind`, a head-and-tail `summary`, the tool's `metadata` and
//! a `_note` pointing at `scratchpad_read`. The model then reads slices with `scratchpad_read`
//! (`full`, `head`, `tail`, `range`, `lines`, `grep`), and a later call may reference a stored
//! observation as `{{stepN.content}}` (or another field), resolved from the stored content in
//! `before-tool-call`.
//!
//! **The observation's bytes never cross into guest memory whole.** Offloading reads only the
//! summary's two ends (a few KiB); reads go through the blob store in chunks and return only
//! what was asked for. The one exception is `{{stepN.content}}`, whose whole point is to put the
//! content into a call's arguments; it is limited to `maxReadBytes`.
//!
//! All logic is plain Rust over two small traits, [`Source`] (the observation) and [`Blobs`]
//! (the store), so it runs natively in unit tests with in-memory fakes; `component.rs` binds
//! them to the host's imports.
//!
//! Files: `config.rs` (keys and defaults), `store.rs` (the traits), `text.rs` (UTF-8
//! boundaries), `reader.rs` (chunked reads of an entry by characters, bytes and lines),
//! `offload.rs` (summary and synthetic observation), `read_tool.rs` and `grep.rs`
//! (`scratchpad_read`), `references.rs` (`{{stepN.field}}`), `schema.rs` (the tool spec),
//! `plugin.rs` (the hooks).

#![deny(missing_docs)]

pub mod config;
pub mod fixtures;
pub mod grep;
pub mod offload;
mod plugin;
mod read_tool;
pub mod reader;
pub mod references;
pub mod schema;
pub mod store;
pub mod text;

#[cfg(test)]
mod testing;

#[cfg(target_arch = "wasm32")]
mod component;

pub use config::Config;
pub use plugin::{Observations, manifest};
pub use store::{Blobs, Source};
