//! The host's metrics as an operator scrapes them: `scratchpad mcp --http`'s `/metrics` read by
//! a real Prometheus server (Debian's `prometheus`, installed by `.ci/setup/metrics.sh` when
//! missing) after a plugin's timeout, a storage-quota refusal and an over-budget append made
//! through the official MCP Python SDK. The script (tests/clients/metrics_prometheus.py) starts
//! both servers on 127.0.0.1 and kills them by PID.

use std::ffi::OsStr;

use scratchpad_tests::components::PROBE_PATH;
use scratchpad_tests::setup;

use crate::support;

#[test]
fn prometheus_counts_one_timeout_one_quota_refusal_and_one_rejected_append() {
    setup::ensure_commands(&setup::PROMETHEUS, &["prometheus"]);
    let prometheus = which("prometheus");
    support::python_mcp_client("metrics_prometheus.py", &[OsStr::new(PROBE_PATH), prometheus.as_os_str()]);
}

/// The path of `command` on `PATH`.
fn which(command: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(command))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{command} is not on PATH"))
}
