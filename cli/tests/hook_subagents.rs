//! `scratchpad hook` for a coding agent's sub-agents: Claude Code 2.1.331's (and Codex
//! 0.169.0's) `SubagentStart`, the sub-agent's tool events and `SubagentStop`, each carrying the
//! parent's `session_id` and the sub-agent's `agent_id`. Each sub-agent works in a session of its
//! own, spawned from its parent's, and hands its notes back when it stops; the MCP server finds
//! that session for the sub-agent's calls. (`tests/tests/claude_code_subagents.rs` and
//! `tests/tests/codex_subagents.rs` run the real agents.)

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support;

const PREFIX: &str = "mcp__plugin_scratchpad_scratchpad__";
const PARENT: &str = "cc-parent";
const AGENT: &str = "a517f44fbe409a9b7";

/// The session of sub-agent [`AGENT`] of [`PARENT`].
fn sub_session() -> String {
    format!("{PARENT}:subagent:{AGENT}")
}

/// Event `name` of session `session` with `fields`.
fn event(session: &str, name: &str, fields: Value) -> Value {
    let mut event = json!({ "session_id": session, "hook_event_name": name, "transcript_path": "/nonexistent.jsonl" });
    event.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    event
}

/// An event of the sub-agent [`AGENT`].
fn of_agent(name: &str, fields: Value) -> Value {
    let mut fields = fields;
    fields
        .as_object_mut()
        .unwrap()
        .extend([("agent_id".to_owned(), json!(AGENT)), ("agent_type".to_owned(), json!("general-purpose"))]);
    event(PARENT, name, fields)
}

fn hook_with(dir: &Path, env: &[(&str, &str)], event: &Value) -> Output {
    support::hook(dir, PREFIX, &["--no-guidance"], env, event.to_string().as_bytes())
}

/// The hook's answer to `event`, which must succeed with nothing on stderr.
fn answer(dir: &Path, event: Value) -> Option<Value> {
    let output = hook_with(dir, &[], &event);
    let stderr = support::text(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "{event}: {stderr}");
    let stdout = support::text(&output.stdout);
    (!stdout.trim().is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

fn context(answer: &Option<Value>) -> String {
    answer.as_ref().and_then(|a| a["hookSpecificOutput"]["additionalContext"].as_str()).unwrap_or_default().to_owned()
}

/// `scratchpad --db DIR/s.db ARGS…`, which must succeed: its JSON.
fn cli(dir: &Path, args: &[&str]) -> Value {
    let output = support::run(dir.join("s.db"), &[&["--json"], args].concat());
    assert!(output.status.success(), "{args:?}: {}", support::text(&output.stderr));
    support::json_of(&output)
}

fn call(dir: &Path, session: &str, arguments: Value) {
    cli(dir, &["call", session, "session.scratchpad", &arguments.to_string()]);
}

/// The notes of `session` as the scratchpad keeps them.
fn notes(dir: &Path, session: &str) -> String {
    let shown = cli(dir, &["show", session]);
    let state = shown["state"].as_array().cloned().unwrap_or_default();
    let entry = state.iter().find(|e| e["plugin"] == "scratchpad" && e["key"] == "notes");
    entry.map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn a_sub_agent_starts_from_its_parents_plan_works_in_its_own_session_and_hands_its_notes_back() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    answer(dir, event(PARENT, "SessionStart", json!({ "source": "startup" })));
    call(dir, PARENT, json!({ "action": "set_plan", "content": "1. PARENT-PLAN-7: split the parser" }));
    call(dir, PARENT, json!({ "action": "append_notes", "content": "- PARENT-NOTE" }));
    answer(dir, event(PARENT, "UserPromptSubmit", json!({ "prompt": "delegate" })));

    let start = answer(dir, of_agent("SubagentStart", json!({})));
    assert_eq!(start.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"], "SubagentStart");
    let injected = context(&start);
    assert!(injected.contains("1. PARENT-PLAN-7"), "the sub-agent starts with its parent's plan: {injected}");
    assert!(
        injected.contains(&format!("{PREFIX}session_scratchpad")),
        "and the guidance, naming the tool as the model sees it (its system prompt has no MCP instructions): {injected}"
    );
    let sessions = cli(dir, &["session", "list"]);
    let sub = sessions["sessions"].as_array().unwrap().iter().find(|s| s["id"] == sub_session().as_str());
    let sub = sub.unwrap_or_else(|| panic!("an ordinary session, listed: {sessions}"));
    assert_eq!(sub["origin"], json!({ "kind": "spawn", "parent": PARENT, "copy": true }));

    // The sub-agent's call of the scratchpad's own tool names its session for the MCP server.
    let input = json!({ "action": "append_notes", "content": "- SUB-FINDING: the lexer is fine" });
    let pre = answer(
        dir,
        of_agent(
            "PreToolUse",
            json!({ "tool_name": format!("{PREFIX}session_scratchpad"), "tool_input": input, "tool_use_id": "toolu_9" }),
        ),
    );
    let updated = &pre.as_ref().expect("the call is rewritten")["hookSpecificOutput"]["updatedInput"];
    assert_eq!(updated["action"], "append_notes");
    assert_eq!(updated["scratchpad_turn"]["session_id"], sub_session().as_str(), "{updated}");
    // The parent's own calls stay as they are.
    let parent_pre = answer(
        dir,
        event(
            PARENT,
            "PreToolUse",
            json!({ "tool_name": format!("{PREFIX}session_scratchpad"), "tool_input": input, "tool_use_id": "toolu_1" }),
        ),
    );
    assert_eq!(parent_pre, None);
    // What the MCP server then does with the call.
    call(dir, &sub_session(), input.clone());
    // A sub-agent's other tools act in its session too (numbered in its own turn).
    let bash = json!({ "tool_name": "Bash", "tool_input": { "command": "ls" }, "tool_use_id": "toolu_10" });
    answer(dir, of_agent("PreToolUse", bash.clone()));
    let mut post = bash.clone();
    post["tool_response"] = json!({ "stdout": "src", "stderr": "" });
    answer(dir, of_agent("PostToolUse", post));
    assert!(!notes(dir, PARENT).contains("SUB-FINDING"), "until it stops, its notes are its own");

    let stop = answer(dir, of_agent("SubagentStop", json!({ "last_assistant_message": "The lexer is fine." })));
    assert_eq!(stop, None);
    let handed = notes(dir, PARENT);
    assert!(handed.contains("SUB-FINDING: the lexer is fine"), "its notes reach the parent: {handed}");
    assert!(handed.contains(&sub_session()), "under a line naming its session: {handed}");
    assert_eq!(handed.matches("PARENT-NOTE").count(), 1, "the copy it started with is not handed back: {handed}");
    let next = context(&answer(dir, event(PARENT, "UserPromptSubmit", json!({ "prompt": "go on" }))));
    assert!(next.contains("SUB-FINDING"), "the parent's next prompt carries them: {next}");

    // Stopping again with nothing new (a continued agent) hands nothing back twice.
    answer(dir, of_agent("SubagentStart", json!({})));
    answer(dir, of_agent("SubagentStop", json!({ "last_assistant_message": "Nothing more." })));
    assert_eq!(notes(dir, PARENT).matches("SUB-FINDING").count(), 1);

    let other = context(&answer(dir, event("cc-other", "UserPromptSubmit", json!({ "prompt": "hello" }))));
    assert!(
        !other.contains("PARENT-PLAN-7") && !other.contains("SUB-FINDING"),
        "another session sees neither: {other}"
    );
}

#[test]
fn notes_over_the_parents_budget_come_back_as_a_reference_to_the_sub_agents_session() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    answer(dir, event(PARENT, "SessionStart", json!({ "source": "startup" })));
    answer(dir, of_agent("SubagentStart", json!({})));
    // Within the sub-agent's budget (4,000 chars), but not with the heading beside the parent's.
    let long = format!("- LONG-FINDING {}", "x".repeat(3_900));
    call(dir, &sub_session(), json!({ "action": "set_notes", "content": long }));
    answer(dir, of_agent("SubagentStop", json!({})));
    let handed = notes(dir, PARENT);
    assert!(!handed.contains("LONG-FINDING"), "{handed}");
    assert!(handed.contains(&format!("scratchpad show {}", sub_session())), "a reference to the session: {handed}");
    assert!(notes(dir, &sub_session()).contains("LONG-FINDING"), "which keeps them");
}

#[test]
fn with_copying_off_a_sub_agent_starts_with_an_empty_scratchpad() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = dir.join("config.toml");
    std::fs::write(&config, "[subagents]\ncopy = false\n").unwrap();
    let env = [("SCRATCHPAD_CONFIG", config.to_str().unwrap())];
    answer(dir, event(PARENT, "SessionStart", json!({ "source": "startup" })));
    call(dir, PARENT, json!({ "action": "set_plan", "content": "1. PARENT-PLAN-7" }));
    let output = hook_with(dir, &env, &of_agent("SubagentStart", json!({})));
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    let start: Value = serde_json::from_slice(&output.stdout).unwrap();
    let injected = context(&Some(start));
    assert!(injected.contains(&format!("{PREFIX}session_scratchpad")), "the guidance still: {injected}");
    assert!(!injected.contains("PARENT-PLAN-7"), "but not the parent's plan: {injected}");
    let sessions = cli(dir, &["session", "list"]);
    assert!(sessions.to_string().contains(r#""copy":false"#), "{sessions}");
}

#[test]
fn events_of_a_sub_agent_the_hook_cannot_place_are_a_line_on_stderr_exit_0_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let tool = json!({ "tool_name": format!("{PREFIX}session_scratchpad"),
        "tool_input": { "action": "append_notes", "content": "- STRAY" }, "tool_use_id": "toolu_1" });
    let cases = [
        (event(PARENT, "SubagentStart", json!({ "agent_type": "general-purpose" })), "names no `agent_id`"),
        (event(PARENT, "SubagentStart", json!({ "agent_id": "" })), "names no `agent_id`"),
        (event(PARENT, "SubagentStop", json!({ "last_assistant_message": "done" })), "names no `agent_id`"),
        (of_agent("PreToolUse", tool.clone()), "never started"),
        (of_agent("SubagentStop", json!({ "last_assistant_message": "done" })), "never started"),
    ];
    for (event, expected) in cases {
        let output = hook_with(dir, &[], &event);
        let stderr = support::text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{event}: {stderr}");
        assert!(stderr.contains(expected) && stderr.trim().lines().count() == 1, "{event}: {stderr}");
        assert!(stderr.contains("nothing was done"), "{stderr}");
        assert!(output.stdout.is_empty(), "{}", support::text(&output.stdout));
    }
    let sessions = cli(dir, &["session", "list"]);
    assert_eq!(sessions["sessions"], json!([]), "nothing was stored");
    let ledgers = std::fs::read_dir(dir.join("hooks")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(ledgers, 0, "nor any bookkeeping");

    // A parent that exists does not make an unknown agent's events its own.
    answer(dir, event(PARENT, "SessionStart", json!({ "source": "startup" })));
    let output = hook_with(dir, &[], &of_agent("PreToolUse", tool));
    assert_eq!(output.status.code(), Some(0));
    assert!(support::text(&output.stderr).contains("never started"));
    assert_eq!(cli(dir, &["session", "list"])["sessions"].as_array().unwrap().len(), 1);
    assert!(!notes(dir, PARENT).contains("STRAY"));
}

/// `scratchpad mcp --agent-argument`, as the Claude Code plugin runs it for the parent's session:
/// a call naming a sub-agent's session (the hook's rewrite) acts there; one naming any session
/// not spawned from the server's does nothing and says why; one without it acts in the
/// server's session.
#[test]
fn the_mcp_server_acts_in_a_sub_agents_session_only_when_it_was_spawned_from_its_own() {
    use support::Rpc;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    answer(dir, event(PARENT, "SessionStart", json!({ "source": "startup" })));
    answer(dir, of_agent("SubagentStart", json!({})));
    answer(dir, event("cc-other", "SessionStart", json!({ "source": "startup" })));
    let mut command = support::command();
    command.arg("--db").arg(dir.join("s.db")).args([
        "mcp",
        "--session",
        PARENT,
        "--agent-argument",
        "scratchpad_turn",
        "--api-safe-names",
        "--tool-prefix",
        PREFIX,
        "--declared-tools",
        "--no-project",
    ]);
    let mut server = Rpc::mcp(command, "claude-code", "2.1.331");
    let mut call = |arguments: Value| server.call_tool("session_scratchpad", arguments);
    let named = |session: &str| json!({ "session_id": session, "turn_id": "hook-1" });
    let (failed, text) =
        call(json!({"action": "append_notes", "content": "- IN-SUB", "scratchpad_turn": named(&sub_session())}));
    assert!(!failed && text.contains("Appended to notes."), "{text}");
    let (failed, text) = call(json!({"action": "append_notes", "content": "- IN-PARENT"}));
    assert!(!failed, "{text}");
    for forged in ["cc-other", "nowhere", PARENT] {
        let (failed, text) =
            call(json!({"action": "append_notes", "content": "- FORGED", "scratchpad_turn": named(forged)}));
        assert!(failed && text.contains("no sub-agent of this session") && text.contains("nothing was done"), "{text}");
    }
    let (failed, text) = call(json!({"action": "append_notes", "content": "- FORGED", "scratchpad_turn": 7}));
    assert!(failed && text.contains("`scratchpad_turn` names no session and turn"), "{text}");
    drop(server);

    assert!(notes(dir, &sub_session()).contains("IN-SUB") && !notes(dir, &sub_session()).contains("IN-PARENT"));
    assert!(notes(dir, PARENT).contains("IN-PARENT") && !notes(dir, PARENT).contains("IN-SUB"));
    for session in [PARENT.to_owned(), sub_session(), "cc-other".to_owned()] {
        assert!(!notes(dir, &session).contains("FORGED"), "{session}");
    }
    let sessions = cli(dir, &["session", "list"]);
    assert_eq!(sessions["sessions"].as_array().unwrap().len(), 3, "no session created: {sessions}");
}

/// Codex names a sub-agent's MCP calls by its parent's session and the sub-agent's own turn
/// (`x-codex-turn-metadata`), the turn its hooks carry: `scratchpad mcp --codex-turns` acts in
/// the session spawned from the parent whose current turn that is.
#[test]
fn codex_calls_in_a_sub_agents_turn_act_in_its_session() {
    use support::Rpc;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let codex = |name: &str, turn: &str, fields: Value| {
        let mut fields = fields;
        fields["turn_id"] = json!(turn);
        event(PARENT, name, fields)
    };
    answer(dir, codex("UserPromptSubmit", "t-parent", json!({ "prompt": "delegate" })));
    answer(dir, codex("SubagentStart", "t-sub", json!({ "agent_id": AGENT, "agent_type": "default" })));
    answer(dir, codex("UserPromptSubmit", "t-sub", json!({ "prompt": "check the lexer", "agent_id": AGENT })));
    let mut command = support::command();
    command.arg("--db").arg(dir.join("s.db")).args([
        "mcp",
        "--codex-turns",
        "--api-safe-names",
        "--tool-prefix",
        "mcp__scratchpad__",
        "--declared-tools",
        "--no-project",
    ]);
    let mut server = Rpc::mcp(command, "codex", "0.169.0");
    let mut call = |turn: &str, content: &str| {
        let meta = json!({ "x-codex-turn-metadata": { "session_id": PARENT, "turn_id": turn } });
        let params = json!({ "name": "session_scratchpad", "arguments": { "action": "append_notes", "content": content }, "_meta": meta });
        let result = server.request("tools/call", params)["result"].clone();
        assert_ne!(result["isError"], true, "{result}");
    };
    call("t-sub", "- IN-SUB");
    call("t-parent", "- IN-PARENT");
    drop(server);
    let (sub, parent) = (notes(dir, &sub_session()), notes(dir, PARENT));
    assert!(sub.contains("IN-SUB") && !sub.contains("IN-PARENT"), "{sub}");
    assert!(parent.contains("IN-PARENT") && !parent.contains("IN-SUB"), "{parent}");
}
