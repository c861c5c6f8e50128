//! `scratchpad serve` driven from outside by a real client of another ecosystem: a Python
//! (stdlib) script that spawns the sidecar and runs a whole session over JSON-RPC.

use std::process::Command;

#[test]
fn a_python_client_drives_a_whole_session_over_json_rpc() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/clients/rpc_session.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_scratchpad"))
        .env("SCRATCHPAD_TEST_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("python3 is required for the embedding tests (see .ci/run)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the Python client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
}
