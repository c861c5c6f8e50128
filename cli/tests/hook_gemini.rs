//! `scratchpad hook --runtime gemini` as Gemini CLI 0.61.0 runs it: its event names and payloads
//! (measured; docs/gemini.md), answers in its shape, and exit status 0 whatever happens — Gemini
//! CLI takes any other status but 1 as a deny that blocks the turn. The end-to-end tests in
//! `tests/tests/gemini_e2e.rs` run the real Gemini CLI.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support;

const PREFIX: &str = "mcp_scratchpad_";

fn hook(dir: &Path, input: &[u8]) -> Output {
    support::hook(dir, PREFIX, &["--runtime", "gemini"], &[], input)
}

/// The common fields of every Gemini CLI payload, with `fields`.
fn event(session: &str, name: &str, fields: Value) -> Value {
    let mut event = json!({
        "session_id": session, "transcript_path": "/nonexistent/chats/session.json", "cwd": "/",
        "hook_event_name": name, "timestamp": "2026-11-28T08:00:00.000Z",
    });
    event.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    event
}

/// The hook's answer to `event`: exit 0, nothing on stderr.
fn answer(dir: &Path, event: Value) -> Option<Value> {
    let output = hook(dir, event.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(0), "{event}: {}", support::text(&output.stderr));
    assert!(output.stderr.is_empty(), "{event}: {}", support::text(&output.stderr));
    let stdout = support::text(&output.stdout);
    (!stdout.trim().is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

fn context(answer: &Option<Value>) -> String {
    answer.as_ref().and_then(|a| a["hookSpecificOutput"]["additionalContext"].as_str()).unwrap_or_default().to_owned()
}

#[test]
fn bad_gemini_events_get_one_line_on_stderr_exit_zero_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(Vec<u8>, &str); 8] = [
        (b"{\"session_id\": \"g\", \"hook_event_name\": \"Before".to_vec(), "not one JSON object"),
        (b"\xff\xfe not utf-8".to_vec(), "not one JSON object"),
        (b"[]".to_vec(), "not an object"),
        (json!({"hook_event_name": "BeforeAgent", "prompt": "hi"}).to_string().into_bytes(), "`session_id` is missing"),
        (event("g", "BeforeAgent", json!({})).to_string().into_bytes(), "`prompt` is missing"),
        (event("g", "BeforeAgent", json!({"prompt": 7})).to_string().into_bytes(), "`prompt` must be a string"),
        (
            event("g", "BeforeTool", json!({"tool_name": "read_file", "tool_input": "x"})).to_string().into_bytes(),
            "`tool_input` must be an object",
        ),
        (
            event("g", "AfterTool", json!({"tool_name": "read_file", "tool_input": {}, "tool_response": "x"}))
                .to_string()
                .into_bytes(),
            "`tool_response` must be an object with `llmContent`",
        ),
    ];
    for (input, expected) in cases {
        let output = hook(dir.path(), &input);
        let stderr = support::text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "any other status is a deny in Gemini CLI: {stderr}");
        assert!(stderr.contains(expected) && stderr.trim().lines().count() == 1, "{expected}: {stderr}");
        assert!(stderr.starts_with("scratchpad hook: bad hook event: "), "{stderr}");
        assert!(output.stdout.is_empty());
    }
    assert!(!dir.path().join("s.db").exists(), "nothing was stored");
    assert!(!dir.path().join("hooks").exists(), "nor any bookkeeping");
    // Events the hook does not act on: no answer, nothing stored.
    for name in ["PreCompress", "SessionEnd", "BeforeModel", "Notification", "NoSuchEvent"] {
        assert_eq!(answer(dir.path(), event("g", name, json!({"trigger": "auto"}))), None, "{name}");
    }
    assert!(!dir.path().join("s.db").exists(), "nothing was stored");
    // A configuration that cannot be read: exit 0 too.
    let output = support::hook(
        dir.path(),
        PREFIX,
        &["--runtime", "gemini"],
        &[("SCRATCHPAD_CONFIG", "/nonexistent/scratchpad.toml")],
        event("g", "BeforeAgent", json!({"prompt": "hi"})).to_string().as_bytes(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", support::text(&output.stderr));
    assert!(support::text(&output.stderr).contains("/nonexistent/scratchpad.toml"));
}

#[test]
fn a_gemini_session_gets_its_plan_and_its_own_tools_calls_name_it() {
    let dir = tempfile::tempdir().unwrap();
    // `--no-guidance`: Gemini CLI has it from the MCP server's instructions.
    let start = event("gem-1", "SessionStart", json!({"source": "startup"}));
    let output =
        support::hook(dir.path(), PREFIX, &["--runtime", "gemini", "--no-guidance"], &[], start.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", support::text(&output.stderr));

    let db = dir.path().join("s.db");
    let set =
        support::run(&db, &["call", "gem-1", "session.scratchpad", r#"{"action":"set_plan","content":"1. GEM-PLAN"}"#]);
    assert!(set.status.success());
    let prompt = answer(dir.path(), event("gem-1", "BeforeAgent", json!({"prompt": "go"})));
    assert_eq!(prompt.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    assert!(context(&prompt).contains("1. GEM-PLAN"), "the plan is injected: {prompt:?}");
    let other = answer(dir.path(), event("gem-2", "BeforeAgent", json!({"prompt": "go"})));
    // Another session of the same project (the same `cwd`) has no plan of its own; recall
    // offers it the first one's, and never adopts it.
    assert!(!context(&other).contains("## Plan\n1. GEM-PLAN"), "sessions are isolated: {other:?}");
    let shown = support::run(&db, &["show", "gem-2"]);
    assert!(!support::text(&shown.stdout).contains("GEM-PLAN"), "nor does it store it");

    // A call of the scratchpad's own tool is given the session and the turn it acts in; a
    // value the model wrote there is replaced.
    let input =
        json!({"action": "set_plan", "content": "x", "scratchpad_turn": {"session_id": "gem-2", "turn_id": "t"}});
    let before = answer(
        dir.path(),
        event("gem-1", "BeforeTool", json!({"tool_name": "mcp_scratchpad_session_scratchpad", "tool_input": input})),
    )
    .expect("an answer");
    let rewritten = &before["hookSpecificOutput"]["tool_input"];
    assert_eq!(before["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    assert_eq!((rewritten["action"].as_str(), rewritten["content"].as_str()), (Some("set_plan"), Some("x")));
    assert_eq!(rewritten["scratchpad_turn"]["session_id"], "gem-1");
    assert!(rewritten["scratchpad_turn"]["turn_id"].as_str().is_some_and(|t| t.starts_with("hook-")), "{before}");
    // Any other tool runs as it is.
    let shell =
        event("gem-1", "BeforeTool", json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}));
    assert_eq!(answer(dir.path(), shell), None);
    let after = event(
        "gem-1",
        "AfterTool",
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"},
               "tool_response": {"llmContent": "Output: a b", "returnDisplay": "a b"}}),
    );
    assert_eq!(answer(dir.path(), after), None);
    let stop =
        event("gem-1", "AfterAgent", json!({"prompt": "go", "prompt_response": "Done.", "stop_hook_active": false}));
    assert_eq!(answer(dir.path(), stop), None);
}

/// The server half: `scratchpad mcp --session-argument scratchpad_turn` (what `setup gemini`
/// starts) acts in the session and turn each call's argument names, which the tool never sees;
/// a call without it, or with one that names no session, does nothing and says why.
#[test]
fn the_mcp_server_acts_in_the_session_each_call_names() {
    use support::Rpc;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut command = support::command();
    command.arg("--db").arg(&db).args([
        "mcp",
        "--session-argument",
        "scratchpad_turn",
        "--api-safe-names",
        "--tool-prefix",
        PREFIX,
        "--declared-tools",
        "--no-project",
    ]);
    let mut server = Rpc::mcp(command, "gemini-cli", "0.61.0");
    let mut call = |arguments: Value| server.call_tool("session_scratchpad", arguments);
    let named = json!({"session_id": "gem-a", "turn_id": "hook-1"});
    let (failed, text) = call(json!({"action": "set_plan", "content": "1. ARG-PLAN", "scratchpad_turn": named}));
    assert!(!failed && text.contains("Plan set."), "{text}");
    let (failed, text) = call(json!({"action": "set_plan", "content": "1. NOWHERE"}));
    assert!(
        failed && text.contains("the call has no `scratchpad_turn`") && text.contains("nothing was done"),
        "{text}"
    );
    let (failed, text) =
        call(json!({"action": "set_plan", "content": "1. NOWHERE", "scratchpad_turn": {"session_id": 7}}));
    assert!(failed && text.contains("`scratchpad_turn` names no session and turn"), "{text}");
    drop(server);

    let shown = support::text(&support::run(&db, &["show", "gem-a"]).stdout);
    assert!(shown.contains("1. ARG-PLAN") && !shown.contains("scratchpad_turn"), "{shown}");
    assert!(!shown.contains("NOWHERE"), "a call naming no session stored nothing: {shown}");
    let listed = support::text(&support::run(&db, &["session", "list"]).stdout);
    let mut sessions: Vec<&str> = listed.lines().filter_map(|line| line.split('\t').next()).collect();
    sessions.sort_unstable();
    assert_eq!(sessions, ["gem-a", "mcp"], "only the named session and the server's own: {listed}");
    assert!(!support::text(&support::run(&db, &["show", "mcp"]).stdout).contains("PLAN"));
}
