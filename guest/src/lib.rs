//! The session scratchpad component: working memory for an LLM agent that survives context
//! compaction (the session scratchpad, the scratchpad extension and the session notepad).
//!
//! Three spaces — **notes** (the notepad of 003, the scratchpad text of 001), **plan** and
//! **refs** — live in host storage only, so they survive compaction and host restarts, and
//! reach the model as an injection each turn (the user's message is never changed).
//!
//! All logic is plain Rust over the SDK's [`Storage`](scratchpad_plugin_sdk::Storage) and
//! [`Tokenizer`](scratchpad_plugin_sdk::Tokenizer) traits, in [`Scratchpad`], so the same code
//! runs natively (unit tests, the host's benchmark baseline), inside the component, where
//! `component.rs` only binds it to the host's imports, and inside the benchmarks' Extism peer.
//!
//! Tools: the manifest declares all four tools (`session.scratchpad`, `read_notepad`,
//! `write_notepad`, `update_notepad`) whenever the component is enabled, and `call-tool` runs
//! any of them, because the host's sandbox API (003: code outside the model) reads, writes and
//! appends the notepad through them; `list-tools` offers the model only the configured
//! `surfaces`.
//!
//! Recall: what the agent saves is also put in the project's full-text index (the host's
//! `index` import), so a new session of the same project starts with what earlier sessions
//! left (the latest plan, offered and never adopted, and what matches the first message) and
//! can search it with `recall_search` and `recall_read` (see [`recall`]). It needs
//! [`Scratchpad::with_recall`]; without it (the benchmarks) the scratchpad works as before.
//!
//! Files: `config.rs` (keys and defaults), `state.rs` (storage layout), `budget.rs` (limits),
//! `scratchpad_tool.rs`, `notepad_tools.rs`, `schema.rs` (tool specs), `inject.rs` (block,
//! guidance, compaction warning), `nudges.rs` and `plan_detection.rs`, `recall.rs` with
//! `recall/` (`index.rs`: what is indexed, `inject.rs`: the first turn's block, `tools.rs`:
//! the recall tools, `date.rs`), `plugin.rs` (the hooks).

#![deny(missing_docs)]

pub mod budget;
pub mod config;
pub mod inject;
mod notepad_tools;
mod nudges;
pub mod phrases;
pub mod plan_detection;
mod plugin;
pub mod recall;
pub mod schema;
mod scratchpad_tool;
pub mod state;

#[cfg(test)]
mod testing;

// The component glue exists only for the component target (`wasm32-wasip2`): the Extism peer
// (`bench/extism-peer`) builds this crate for `wasm32-unknown-unknown`, where the component's
// exports and imports would end up in its module and the Extism host could not link them.
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
mod component;

pub use config::{Config, Nudges, RecallConfig, Surface};
pub use plugin::{Scratchpad, manifest};
pub use recall::{Clock, SystemClock};
pub use state::Spaces;
