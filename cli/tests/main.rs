//! The CLI's integration tests, one module per behaviour, in one test binary (one link of the
//! host instead of one per file). A module's tests run as `cargo test -p scratchpad-cli --test
//! integration -- MODULE::`. The modules that use Unix APIs are compiled on Unix only (the
//! Windows CI job runs the servers' modules).

mod support;

#[cfg(unix)]
mod bad_input_cli;
#[cfg(unix)]
mod cli;
mod doctor;
mod fleet_cli;
mod hardening_cli;
mod hook_cli;
mod hook_gemini;
#[cfg(unix)]
mod hook_shell_output;
mod hook_subagents;
mod locked_database;
mod mcp;
mod mcp_bad_input;
mod mcp_conformance;
mod mcp_hook_tool;
mod mcp_http;
mod mcp_inspector;
mod metrics_prometheus;
#[cfg(unix)]
mod postgres_outage;
mod recall_cli;
mod serve;
mod serve_bad_input;
mod serve_checkpoints;
mod setup_cli;
mod setup_gemini;
#[cfg(unix)]
mod shutdown;
#[cfg(unix)]
mod storage_faults;
#[cfg(unix)]
mod third_party_plugins_cli;
mod viewer_browser;
