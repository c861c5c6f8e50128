//! The CLI's servers on a PostgreSQL server that stops, starts again and restarts under them
//! (a server of the test's own, [`PostgresServer::private`]): while it is away, a call is a
//! retryable error naming the fault and the process keeps running; once it is back, the same
//! process serves again on new connections, with everything written before it went away and
//! nothing of the calls it refused.

use scratchpad_tests::postgres::PostgresServer;
use serde_json::{Value, json};

use crate::support::{self, Process, Rpc};

/// A `tools.call` of the scratchpad's `set_plan` in session `s1`.
fn set_plan(sidecar: &mut Rpc, turn: &str, plan: &str) -> Value {
    sidecar.request(
        "tools.call",
        json!({
            "turn": {"session_id": "s1", "turn_id": turn},
            "name": "session.scratchpad",
            "arguments": {"action": "set_plan", "content": plan},
        }),
    )
}

/// Asserts that `answer` is the sidecar's error for a database server away, and that its
/// message names the server without its password.
fn assert_unavailable(answer: &Value, url: &str) {
    assert_eq!(answer["error"]["code"], -32009, "{answer}");
    assert_eq!(answer["error"]["data"]["retryable"], true, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("database server is unavailable"), "{answer}");
    let password = url.split_once("scratchpad:").and_then(|(_, rest)| rest.split_once('@')).unwrap().0;
    assert!(!message.contains(password), "the password is never shown: {answer}");
}

#[test]
fn the_sidecar_answers_unavailable_while_postgres_is_stopped_and_serves_again_after_a_start_and_a_restart() {
    let server = PostgresServer::private();
    let url = server.fresh_database();
    let mut command = support::command();
    command.arg("--db").arg(&url).arg("serve");
    let mut sidecar = Rpc::new(Process::spawn(command));
    let created = sidecar.request("session.create", json!({"session": "s1"}));
    assert!(created.get("result").is_some(), "{created}");
    let before = set_plan(&mut sidecar, "t1", "1. PLAN-BEFORE");
    assert!(before.get("result").is_some(), "{before}");

    server.stop();
    assert_unavailable(&set_plan(&mut sidecar, "t2", "1. PLAN-WHILE-AWAY"), &url);
    assert_unavailable(&sidecar.request("session.show", json!({"session": "s1"})), &url);

    server.start_again();
    let shown = sidecar.request("session.show", json!({"session": "s1"}));
    let state = shown["result"]["state"].to_string();
    assert!(state.contains("PLAN-BEFORE"), "what was written before the stop is there: {shown}");
    assert!(!state.contains("PLAN-WHILE-AWAY"), "the refused call kept nothing: {shown}");
    let after = set_plan(&mut sidecar, "t3", "1. PLAN-AFTER-START");
    assert!(after.get("result").is_some(), "the same sidecar serves again: {after}");

    // A restart between two calls: the pooled connections the server closed are replaced.
    server.restart();
    let restarted = set_plan(&mut sidecar, "t4", "1. PLAN-AFTER-RESTART");
    assert!(restarted.get("result").is_some(), "served right after a restart: {restarted}");
    let shown = sidecar.request("session.show", json!({"session": "s1"}));
    assert!(shown["result"]["state"].to_string().contains("PLAN-AFTER-RESTART"), "{shown}");
    assert!(sidecar.process.close(), "the sidecar exits 0");
}

#[test]
fn the_mcp_hook_tool_goes_on_without_the_scratchpad_while_postgres_is_stopped() {
    let server = PostgresServer::private();
    let url = server.fresh_database();
    let state = tempfile::tempdir().unwrap();
    let mut command = support::command();
    command
        .arg("--db")
        .arg(&url)
        .args(["mcp", "--session", "cc-1", "--hook-tool"])
        .env("SCRATCHPAD_HOOK_STATE", state.path().join("hooks"));
    let mut mcp = Rpc::new(Process::spawn(command));
    let init = mcp.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    mcp.process.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "cc-1", "prompt": "hello"});
    let hook = |mcp: &mut Rpc| -> Value {
        let answer = mcp.request("tools/call", json!({"name": "hook", "arguments": event.clone()}));
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "the hook tool answers, never fails the turn: {answer}");
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("{}")).unwrap()
    };
    let first = hook(&mut mcp);
    assert!(first.get("systemMessage").is_none(), "{first}");

    server.stop();
    let away = hook(&mut mcp);
    let message = away["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("unavailable") && message.contains("goes on without the scratchpad"), "{away}");
    assert!(away.get("hookSpecificOutput").is_none(), "nothing injected while away: {away}");

    server.start_again();
    let again = hook(&mut mcp);
    assert!(again.get("systemMessage").is_none(), "served again by the same process: {again}");
    assert!(mcp.process.close(), "the MCP server exits 0");
}
