//! `scratchpad mcp` driven by a real MCP client library (the official Python SDK, from PyPI):
//! initialize → tools/list → tools/call → resources/read over stdio; then the state it wrote
//! is visible to the next process on the same database.

use std::path::PathBuf;
use std::process::Command;

/// A `python3` command that can import the pinned client packages of
/// `tests/clients/requirements.txt`: when the interpreter lacks them they are installed once
/// into `target/python-deps` (never into the system), so the suite runs on a fresh machine
/// with python3 and pip.
fn python_with_clients() -> Command {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let deps = root.join("target/python-deps");
    let importable = |pythonpath: Option<&PathBuf>| {
        let mut probe = Command::new("python3");
        probe.args(["-c", "import mcp"]);
        if let Some(path) = pythonpath {
            probe.env("PYTHONPATH", path);
        }
        probe.output().map(|o| o.status.success()).unwrap_or(false)
    };
    let mut python = Command::new("python3");
    if importable(None) {
        return python;
    }
    if !importable(Some(&deps)) {
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
            .arg(&deps)
            .arg("-r")
            .arg(root.join("tests/clients/requirements.txt"))
            .status()
            .expect("python3 with pip is required for the embedding tests");
        assert!(status.success(), "installing tests/clients/requirements.txt failed");
    }
    python.env("PYTHONPATH", &deps);
    python
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
