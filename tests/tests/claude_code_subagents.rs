//! Claude Code's sub-agents are sessions of their own: the real `claude` (pinned 2.1.331) with
//! the plugin, against the scripted Anthropic API, whose script tells a sub-agent's requests
//! from its parent's by their first message (the prompt the `Agent` tool gave it). A sub-agent,
//! foreground or background, gets a session spawned from its parent's, its first request
//! carries the parent's plan, the notes it writes through the plugin's MCP tool land in its
//! own session and reach the parent when it stops, and a session of another checkout sees
//! neither.

use std::path::Path;

use scratchpad_tests::agents::claude_code::{self, Claude, PREFIX, first_user_text, text_of};
use scratchpad_tests::agents::workspace::checkout;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const PLAN: &str = "1. PARENT-PLAN-42: split the parser\n2. check the lexer";
/// The plan as the scratchpad block injects it.
const INJECTED_PLAN: &str = "## Plan\n1. PARENT-PLAN-42";

fn tool(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// The script of a parent that sets its plan, then delegates to a sub-agent (prompt
/// `SUBTASK-{tag}`, in the background when `background`), which loads the scratchpad's tool
/// (its MCP tools reach it deferred), appends `finding` to its notes and reports `SUB-{tag}-DONE`.
fn script(tag: &str, background: bool, finding: &str) -> Value {
    let subtask = format!("SUBTASK-{tag}");
    let done = format!("SUB-{tag}-DONE");
    json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
            "input": { "action": "set_plan", "content": PLAN } } }] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        { "when": "SCRIPT:delegate", "reply": [{ "tool_use": { "name": "Agent", "input": {
            "description": "check the lexer", "prompt": format!("{subtask}: check the lexer"),
            "subagent_type": "general-purpose", "run_in_background": background } } }] },
        // The sub-agent's requests.
        { "when": subtask, "first": subtask, "reply": [{ "tool_use": { "name": "ToolSearch",
            "input": { "query": format!("select:{}", tool("session_scratchpad")), "max_results": 1 } } }] },
        { "when": "Tool loaded.", "first": subtask, "reply": [{ "tool_use": {
            "name": tool("session_scratchpad"), "input": { "action": "append_notes", "content": finding } } }] },
        { "when": "Appended to notes.", "first": subtask, "reply": [{ "text": done }] },
        // The parent's, after the agent's notification (which quotes its result), its result
        // or its launch.
        { "when": "<task-notification>", "reply": [{ "text": format!("PARENT-{tag}-NOTIFIED") }] },
        { "when": done, "reply": [{ "text": format!("PARENT-{tag}-DONE") }] },
        { "when": "Async agent launched", "reply": [{ "text": "PARENT-WAITING" }] },
    ]})
}

/// The requests of the sub-agent whose prompt holds `subtask`, oldest first.
fn sub_agent_requests(model: &Model, subtask: &str) -> Vec<Value> {
    model.turn_requests().into_iter().filter(|r| first_user_text(r).contains(subtask)).collect()
}

/// The one session spawned from `parent`.
fn spawned_from(claude: &Claude, parent: &str) -> Value {
    let sessions = claude.sessions();
    let spawned: Vec<&Value> =
        sessions.iter().filter(|s| s["origin"]["kind"] == "spawn" && s["origin"]["parent"] == parent).collect();
    assert_eq!(spawned.len(), 1, "one sub-agent, one spawned session: {sessions:?}");
    spawned[0].clone()
}

/// The scratchpad's notes of `session` (empty when none).
fn notes(claude: &Claude, session: &str) -> String {
    let shown = claude.show(session);
    let state = shown["state"].as_array().cloned().unwrap_or_default();
    state.iter().find(|e| e["plugin"] == "scratchpad" && e["key"] == "notes").map(Value::to_string).unwrap_or_default()
}

/// What both tests check once the sub-agent stopped: its session, named after the parent and
/// seeded from its plan; its first request carrying the plan; its notes in its own session and
/// handed back to the parent's, once.
fn the_sub_agent_worked_in_its_own_session(claude: &Claude, model: &Model, parent: &str, tag: &str, finding: &str) {
    let sub = spawned_from(claude, parent);
    let sub_id = sub["id"].as_str().unwrap().to_owned();
    assert!(sub_id.starts_with(&format!("{parent}:subagent:")), "a reader sees the parent: {sub_id}");
    assert_eq!(sub["origin"]["copy"], true, "seeded from the parent's state: {sub}");

    let requests = sub_agent_requests(model, &format!("SUBTASK-{tag}"));
    assert!(requests.len() >= 3, "the sub-agent's own requests: {}", requests.len());
    let first = text_of(&requests[0]);
    assert!(first.contains(INJECTED_PLAN), "its first request carries the parent's plan: {first}");
    assert!(first.contains(&tool("session_scratchpad")), "and the guidance naming the tool: {first}");

    let own = notes(claude, &sub_id);
    assert!(own.contains(finding), "its tool call landed in its own session: {own}");
    let handed = notes(claude, parent);
    assert_eq!(handed.matches(finding).count(), 1, "its notes reached the parent once: {handed}");
    assert!(handed.contains(&sub_id), "under a line naming its session: {handed}");
}

/// A session of another checkout (a new `claude` there) sees neither the parent's plan nor the
/// sub-agent's notes.
fn another_session_sees_neither(claude: &Claude, model: &Model, dir: &Path, finding: &str) {
    claude.prompt_in(&checkout(dir, "other"), "SCRIPT:other hello", None);
    let last = text_of(&model.turn_requests().pop().unwrap());
    for marker in ["PARENT-PLAN-42", finding] {
        let at = last.find(marker).map(|i| &last[i.saturating_sub(400)..(i + 100).min(last.len())]);
        assert_eq!(at, None, "another session sees {marker}");
    }
}

#[test]
fn a_foreground_sub_agent_works_in_its_own_session_and_its_notes_reach_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let finding = "- SUB-FG-FINDING: the lexer is fine";
    let model = Model::start("anthropic", dir.path(), &script("FG", false, finding));
    let claude = Claude::with_plugin(dir.path(), &model);
    let project = checkout(dir.path(), "project");

    let first = claude.prompt_in(&project, "SCRIPT:plan make a plan", None);
    let parent = first["session_id"].as_str().expect("a session id").to_owned();
    assert_eq!(first["result"], "PLAN-SAVED", "{first}");
    let delegated = claude.prompt_in(&project, "SCRIPT:delegate check the lexer", Some(&parent));
    assert_eq!(delegated["result"], "PARENT-FG-DONE", "the parent read the sub-agent's result: {delegated}");

    the_sub_agent_worked_in_its_own_session(&claude, &model, &parent, "FG", finding);
    claude.prompt_in(&project, "SCRIPT:next go on", Some(&parent));
    let next = text_of(&model.turn_requests().pop().unwrap());
    assert!(next.contains("SUB-FG-FINDING"), "the parent's next turn carries the sub-agent's notes: {next}");
    another_session_sees_neither(&claude, &model, dir.path(), "SUB-FG-FINDING");
}

#[test]
fn a_background_sub_agent_works_in_its_own_session_and_its_notes_reach_the_parent_with_its_notification() {
    let dir = tempfile::tempdir().unwrap();
    let finding = "- SUB-BG-FINDING: the lexer is fine";
    let model = Model::start("anthropic", dir.path(), &script("BG", true, finding));
    let claude = Claude::with_plugin(dir.path(), &model);
    let project = checkout(dir.path(), "project");

    let first = claude.prompt_in(&project, "SCRIPT:plan make a plan", None);
    let parent = first["session_id"].as_str().expect("a session id").to_owned();
    // `claude -p` waits for its background agent, whose end wakes the parent with a
    // notification: the run ends with the parent's answer to it.
    let delegated = claude.prompt_in(&project, "SCRIPT:delegate check the lexer", Some(&parent));
    assert_eq!(delegated["result"], "PARENT-BG-NOTIFIED", "{delegated}");

    the_sub_agent_worked_in_its_own_session(&claude, &model, &parent, "BG", finding);
    let notified = model
        .turn_requests()
        .into_iter()
        .find(|r| claude_code::last_user_text(r).contains("<task-notification>"))
        .expect("the parent was woken by the notification");
    let seen = text_of(&notified);
    assert!(seen.contains("SUB-BG-FINDING"), "the parent's request after the notification carries its notes: {seen}");
    another_session_sees_neither(&claude, &model, dir.path(), "SUB-BG-FINDING");
}
