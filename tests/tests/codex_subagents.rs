//! Codex's sub-agents are sessions of their own: the real `codex` (pinned 0.169.0, `[features]
//! multi_agent`, its `spawn_agent` tool) set up with `scratchpad setup codex`, against the
//! scripted Responses API. Codex sends a sub-agent's hooks with its parent's session id, the
//! sub-agent's `agent_id` and its own turn id, and its MCP calls name the parent's session and
//! that turn: the sub-agent gets a session spawned from its parent's, seeded with its plan, its
//! note lands there and reaches the parent when it stops, and a thread of another checkout sees
//! neither.

use std::ffi::OsStr;
use std::process::Command;

use scratchpad_tests::agents::codex::{Codex, NAMESPACE};
use scratchpad_tests::agents::workspace::checkout;
use scratchpad_tests::scratchpad_binary;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const FINDING: &str = "- CX-SUB-FINDING: the lexer is fine";

fn tool_use(namespace: &str, name: &str, input: Value) -> Value {
    json!({ "tool_use": { "namespace": namespace, "name": name, "input": input } })
}

/// Every session of `codex`'s database.
fn sessions(codex: &Codex) -> Vec<Value> {
    let output = Command::new(scratchpad_binary())
        .arg("--db")
        .arg(codex.database())
        .args(["--json", "session", "list"])
        .env("XDG_CACHE_HOME", scratchpad_tests::agents::cache_home())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    listed["sessions"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_codex_sub_agent_works_in_its_own_session_and_its_notes_reach_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [tool_use(NAMESPACE, "session_scratchpad",
            json!({ "action": "set_plan", "content": "1. CX-PARENT-PLAN-42: split the parser" }))] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        { "when": "SCRIPT:delegate", "reply": [tool_use("multi_agent_v1", "spawn_agent",
            json!({ "message": "SUBTASK-CX: check the lexer" }))] },
        // The sub-agent's turn: its prompt, then its tool's result.
        { "when": "SUBTASK-CX: check the lexer", "reply": [tool_use(NAMESPACE, "session_scratchpad",
            json!({ "action": "append_notes", "content": FINDING }))] },
        { "when": "Appended to notes.", "reply": [{ "text": "SUB-CX-DONE" }] },
        // The parent waits for it.
        { "when": "\"agent_id\"", "capture": "\"agent_id\":\\s*\"([^\"]+)\"", "reply": [tool_use("multi_agent_v1",
            "wait_agent", json!({ "targets": ["$1"], "timeout_ms": 60000 }))] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, "");
    let multi_agent = [OsStr::new("-c"), OsStr::new("features.multi_agent=true")];

    let (project, other_project) = (checkout(dir.path(), "p1"), checkout(dir.path(), "p2"));

    let (thread, reply) = codex.exec_with(&project, &multi_agent, "SCRIPT:plan make a plan", None);
    assert_eq!(reply, "PLAN-SAVED");
    codex.exec_with(&project, &multi_agent, "SCRIPT:delegate check the lexer", Some(&thread));

    let all = sessions(&codex);
    let spawned: Vec<&Value> =
        all.iter().filter(|s| s["origin"]["kind"] == "spawn" && s["origin"]["parent"] == thread.as_str()).collect();
    assert_eq!(spawned.len(), 1, "one sub-agent, one spawned session: {all:?}");
    let sub = spawned[0]["id"].as_str().unwrap().to_owned();
    assert!(sub.starts_with(&format!("{thread}:subagent:")), "a reader sees the parent: {sub}");

    let sub_requests: Vec<String> = model
        .turn_requests()
        .iter()
        .map(Value::to_string)
        .filter(|r| r.contains("SUBTASK-CX: check the lexer") && !r.contains("SCRIPT:delegate"))
        .collect();
    assert!(!sub_requests.is_empty(), "the sub-agent's own requests");
    assert!(sub_requests[0].contains("CX-PARENT-PLAN-42"), "its first request carries the parent's plan");

    assert!(codex.show(&sub).contains("CX-SUB-FINDING"), "its tool call landed in its own session");
    let parent = codex.show(&thread);
    assert_eq!(parent.matches("CX-SUB-FINDING").count(), 1, "its notes reached the parent once: {parent}");
    assert!(parent.contains(&sub), "under a line naming its session: {parent}");

    codex.exec_in(&other_project, "SCRIPT:other hello", None);
    let last = model.turn_requests().pop().unwrap().to_string();
    for marker in ["CX-PARENT-PLAN-42", "CX-SUB-FINDING"] {
        let at = last.find(marker).map(|i| &last[i.saturating_sub(600)..(i + 200).min(last.len())]);
        assert_eq!(at, None, "another thread sees {marker}");
    }
}
