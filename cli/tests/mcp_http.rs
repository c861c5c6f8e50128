//! `scratchpad mcp --http` driven by a real MCP client library (the official Python SDK over
//! Streamable HTTP, pinned in tests/clients/requirements.txt): the token, Host and Origin
//! checks, two sessions at once, the prompt, subscriptions notified after another process's
//! write, log notifications, and checkpoints written through the client's model by sampling.
//! The script starts the server on 127.0.0.1 (a port the system picks) and kills it by PID.

use std::process::Command;

use crate::support;

#[test]
fn the_mcp_python_sdk_uses_the_http_server_with_its_token_on_isolated_sessions() {
    support::python_mcp_client("mcp_http.py", &[]);
}

#[test]
fn off_loopback_the_server_refuses_to_start_without_a_token_and_never_shows_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let bare = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
        .args(["--db", db.to_str().unwrap(), "mcp", "--http", "0.0.0.0:0"])
        .env_remove("SCRATCHPAD_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!bare.status.success());
    let message = String::from_utf8_lossy(&bare.stderr);
    assert!(message.contains("needs a bearer token") && message.contains("SCRATCHPAD_MCP_TOKEN"), "{message}");
    assert!(!db.exists(), "a refused start changes nothing");

    let short = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
        .args(["--db", db.to_str().unwrap(), "mcp", "--http", "0.0.0.0:0"])
        .env("SCRATCHPAD_MCP_TOKEN", "tiny-secret")
        .output()
        .unwrap();
    assert!(!short.status.success());
    let message = String::from_utf8_lossy(&short.stderr);
    assert!(message.contains("at least 16 characters"), "{message}");
    assert!(!message.contains("tiny-secret"), "the token never appears in an error: {message}");
}
