//! Rolling checkpoints for a runtime that is not written in Rust: a Python client (stdlib)
//! of `scratchpad serve --summarize` answers the server's `summarize` requests with a scripted
//! model, and declines one.

use std::process::Command;

#[test]
fn a_python_client_writes_checkpoints_by_answering_summarize() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/clients/rpc_checkpoints.py");
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
