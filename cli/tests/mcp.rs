//! `scratchpad mcp` driven by a real MCP client library (the official Python SDK, from PyPI):
//! initialize → tools/list → tools/call → resources/read over stdio; then the state it wrote
//! is visible to the next process on the same database.

use crate::support;

#[test]
fn the_mcp_python_sdk_uses_the_scratchpad_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mcp.db");
    support::python_mcp_client("mcp_session.py", &[db.as_os_str()]);

    let shown = support::run(&db, &["show", "mcp-py"]);
    assert!(support::text(&shown.stdout).contains("1. speak MCP"));
}
