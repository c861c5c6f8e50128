//! The integration tests, one module per behaviour, in one test binary: each binary links the
//! whole host (Wasmtime and Cranelift among it), so one instead of one per file saves a link of
//! ~100 MB per file, in time and in disk. A module's tests run as `cargo test -p scratchpad-tests
//! --test integration -- MODULE::`.

mod bad_input;
mod claude_code_e2e;
mod claude_code_recall;
mod claude_code_shell_output;
mod claude_code_subagents;
mod codex_e2e;
mod codex_recall;
mod codex_shell_output;
mod codex_subagents;
mod context_guard;
mod distribution;
mod durability_concurrency;
mod durability_crash;
mod embedding_examples;
mod fleet;
mod foundation;
mod gemini_e2e;
mod grants;
mod hardening;
mod large_observations;
mod node_host;
mod oci_registry;
mod openclaw_e2e;
mod openclaw_interop;
mod opencode_e2e;
mod plugin_authoring;
mod plugin_views;
mod postgres_harness;
mod postgres_outage;
mod project_index;
mod published_crates;
mod python_wheel;
mod recall;
mod release_rehearsal;
mod sandbox_hostile;
mod sandbox_isolation;
mod scratchpad_extension;
mod scratchpad_nudges;
mod session_notepad;
mod session_scratchpad;
mod shared_vectors;
mod storage_conformance;
mod third_party_plugins;
mod tool_names;
