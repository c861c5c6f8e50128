//! `scratchpad mcp` driven by a real MCP client library (the official Python SDK, from PyPI):
//! initialize → tools/list → tools/call → resources/read over stdio; then the state it wrote
//! is visible to the next process on the same database.

use std::process::Command;

#[allow(dead_code)] // the Node helpers are for other tests
#[path = "../../tests/src/runtimes.rs"]
mod runtimes;

/// A `python3` command that imports the pinned client packages of
/// `tests/clients/requirements.txt` (the official MCP SDK).
fn python_with_clients() -> Command {
    runtimes::python_with("tests/clients/requirements.txt", "target/python-deps")
}

#[test]
fn the_mcp_python_sdk_uses_the_scratchpad_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mcp.db");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/clients/mcp_session.py");
    let output = python_with_clients()
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_scratchpad"))
        .arg(&db)
        .env("SCRATCHPAD_TEST_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("python3 with the `mcp` package is required (pip install -r tests/clients/requirements.txt)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the MCP client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");

    let shown = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
        .args(["--db", db.to_str().unwrap(), "show", "mcp-py"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("1. speak MCP"));
}
