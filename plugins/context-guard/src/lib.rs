//! The context-guard component: the context-pressure policies, as a swappable
//! component. The agent runtime owns the conversation and the model; this component decides,
//! from the `turn` context the runtime passes (tokens used, context window), what the agent
//! should be told and when:
//!
//! - **memory flush** prompts at 50 / 75 / 90 % of the window, each once per compaction cycle,
//!   delivered into the system prompt or as a (marked) message of its own;
//! - **flushActioned**: after the urgent flush, whether the agent wrote a `memory/` file in that
//!   turn — observed (published as session metadata), never forced;
//! - the **context line** `[Context: 156k/200k tokens (78%)]`;
//! - the **pre-compaction warning** turn when usage reaches window − `reserveTokens`;
//! - **rolling checkpoints** at 25 / 50 / 75 % or every 15 user messages, requested from the
//!   runtime's summarizer through the host (the component never sees the conversation).
//!
//! Token figures: the runtime's (from its API's usage) always win; without them the component
//! estimates with the host's tokenizer (the last figure plus the new message or reply).
//!
//! Files: `config.rs` (keys and defaults), `usage.rs` (figures, thresholds, the context line),
//! `flush.rs`, `checkpoint.rs`, `state.rs` (what is stored), `guard.rs` (the hooks),
//! `component.rs` (the wit-bindgen glue).

#![deny(missing_docs)]

pub mod checkpoint;
pub mod config;
pub mod flush;
pub mod guard;
pub mod state;
pub mod usage;

#[cfg(test)]
mod testing;

#[cfg(target_arch = "wasm32")]
mod component;

pub use config::Config;
pub use guard::{FLUSH_ACTIONED, Guard};
