//! `scratchpad hook` as a coding agent runs it: one event on stdin, the answer on stdout. The
//! events here are the shapes Claude Code 2.1.331 and Codex 0.169.0 send (the end-to-end tests
//! in `tests/tests/claude_code_e2e.rs` run the real Claude Code).

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support;

const PREFIX: &str = "mcp__plugin_scratchpad_scratchpad__";

/// Runs `scratchpad --db DB hook --tool-prefix PREFIX` with `input` on stdin.
fn hook(dir: &Path, input: &[u8]) -> Output {
    support::hook(dir, PREFIX, &[], &[], input)
}

/// The hook's answer to `event`, which must succeed.
fn answer(dir: &Path, event: Value) -> Option<Value> {
    let output = hook(dir, event.to_string().as_bytes());
    assert!(output.status.success(), "{event}: {}", support::text(&output.stderr));
    let stdout = support::text(&output.stdout);
    (!stdout.trim().is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

fn context(answer: &Option<Value>) -> String {
    answer.as_ref().and_then(|a| a["hookSpecificOutput"]["additionalContext"].as_str()).unwrap_or_default().to_owned()
}

#[test]
fn malformed_events_get_one_line_on_stderr_a_non_blocking_status_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[u8], &str); 4] = [
        (b"{\"session_id\": \"s\", \"hook_event_name\": \"UserPr", "not one JSON object"),
        (b"[]", "not an object"),
        (br#"{"hook_event_name":"UserPromptSubmit","prompt":"hi"}"#, "`session_id` is missing"),
        (br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash"}"#, "`tool_input` is missing"),
    ];
    for (input, expected) in cases {
        let output = hook(dir.path(), input);
        let stderr = support::text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "never 2, which would block the agent: {stderr}");
        assert!(stderr.contains(expected) && stderr.trim().lines().count() == 1, "{stderr}");
        assert!(output.stdout.is_empty());
    }
    assert!(!dir.path().join("s.db").exists(), "nothing was stored");
    assert!(!dir.path().join("hooks").exists(), "nor any bookkeeping");
    let unknown = answer(dir.path(), json!({ "session_id": "s", "hook_event_name": "Notification", "message": "m" }));
    assert_eq!(unknown, None, "an event the hook does not act on gets no answer");
}

#[test]
fn a_session_gets_its_guidance_and_its_plan_under_the_names_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let start =
        answer(dir.path(), json!({ "session_id": "cc-1", "hook_event_name": "SessionStart", "source": "startup" }));
    let guidance = context(&start);
    assert_eq!(start.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(guidance.contains(&format!("{PREFIX}session_scratchpad")), "{guidance}");
    assert!(!guidance.contains("session.scratchpad"), "{guidance}");

    let db = dir.path().join("s.db");
    let set =
        support::run(&db, &["call", "cc-1", "session.scratchpad", r#"{"action":"set_plan","content":"1. HOOK-PLAN"}"#]);
    assert!(set.status.success());
    let prompt =
        answer(dir.path(), json!({ "session_id": "cc-1", "hook_event_name": "UserPromptSubmit", "prompt": "go" }));
    let injected = context(&prompt);
    assert!(injected.contains("1. HOOK-PLAN"), "the plan is injected: {injected}");
    assert!(!injected.contains("## Session Scratchpad"), "the standing guidance is not repeated every turn");

    let other =
        answer(dir.path(), json!({ "session_id": "cc-2", "hook_event_name": "UserPromptSubmit", "prompt": "go" }));
    assert!(!context(&other).contains("HOOK-PLAN"), "sessions are isolated");

    // `--no-guidance`: the agent has the guidance from the MCP server's instructions.
    let event = json!({ "session_id": "cc-3", "hook_event_name": "SessionStart", "source": "startup" });
    let output = support::hook(dir.path(), PREFIX, &["--no-guidance"], &[], event.to_string().as_bytes());
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    assert!(output.stdout.is_empty(), "no guidance, nothing else to say: {}", support::text(&output.stdout));
    let created = support::run(&db, &["show", "cc-3"]);
    assert!(created.status.success(), "the session was still created");

    // On resume the scratchpad comes back at once; the guidance once (with it) or not at all.
    let set =
        support::run(&db, &["call", "cc-3", "session.scratchpad", r#"{"action":"set_plan","content":"1. RESUMED"}"#]);
    assert!(set.status.success());
    let resume = json!({ "session_id": "cc-3", "hook_event_name": "SessionStart", "source": "resume" });
    let with_guidance = context(&answer(dir.path(), resume.clone()));
    assert!(with_guidance.contains("1. RESUMED"), "{with_guidance}");
    assert_eq!(with_guidance.matches("## Session Scratchpad").count(), 1, "{with_guidance}");
    let output = support::hook(dir.path(), PREFIX, &["--no-guidance"], &[], resume.to_string().as_bytes());
    let without: Value = serde_json::from_slice(&output.stdout).unwrap();
    let without = context(&Some(without));
    assert!(without.contains("1. RESUMED") && !without.contains("## Session Scratchpad"), "{without}");
}

#[test]
fn tool_calls_are_numbered_per_turn_so_step_references_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let session = json!({ "session_id": "cc-3" });
    let event = |fields: Value| {
        let mut event = session.clone();
        event.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        event
    };
    answer(dir.path(), event(json!({ "hook_event_name": "UserPromptSubmit", "prompt": "read the log" })));
    let log = "INFO line\n".repeat(20_000);
    answer(
        dir.path(),
        event(json!({ "hook_event_name": "PreToolUse", "tool_name": "mcp__files__read",
        "tool_input": { "path": "/var/log/app.log" }, "tool_use_id": "call-1" })),
    );
    let post = answer(
        dir.path(),
        event(json!({ "hook_event_name": "PostToolUse", "tool_name": "mcp__files__read",
        "tool_input": { "path": "/var/log/app.log" }, "tool_response": [{ "type": "text", "text": log }],
        "tool_use_id": "call-1" })),
    );
    let replaced = post.expect("a large MCP result is replaced");
    let view = replaced["hookSpecificOutput"]["updatedMCPToolOutput"][0]["text"].as_str().unwrap().to_owned();
    assert!(view.contains("scratchpad_id") && view.len() < 20_000, "the synthetic observation: {} bytes", view.len());
    assert!(view.contains(&format!("{PREFIX}scratchpad_read")), "it names the read tool as the model sees it");

    let rewrite = answer(
        dir.path(),
        event(json!({ "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": "tail {{step1.path}}" }, "tool_use_id": "call-2" })),
    );
    assert_eq!(rewrite.unwrap()["hookSpecificOutput"]["updatedInput"], json!({ "command": "tail /var/log/app.log" }));

    // A new turn numbers from 1 again: step 1 of the next turn has no result yet.
    answer(dir.path(), event(json!({ "hook_event_name": "UserPromptSubmit", "prompt": "again" })));
    let stale = hook(
        dir.path(),
        event(json!({ "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": "tail {{step1.path}}" }, "tool_use_id": "call-3" }))
        .to_string()
        .as_bytes(),
    );
    let stale_answer = support::text(&stale.stdout);
    assert!(!stale_answer.contains("/var/log/app.log"), "turns are isolated: {stale_answer}");
}

/// The Claude Code plugin's launcher exports its version: another version than the binary's
/// is one `systemMessage` line at session start, beside the guidance; the same version, none.
#[test]
fn a_plugin_of_another_version_is_named_once_at_session_start() {
    let dir = tempfile::tempdir().unwrap();
    let start = |version: &str| {
        let event = json!({ "session_id": "cc-v", "hook_event_name": "SessionStart", "source": "startup" });
        let output = support::hook(
            dir.path(),
            PREFIX,
            &[],
            &[("SCRATCHPAD_PLUGIN_VERSION", version)],
            event.to_string().as_bytes(),
        );
        assert!(output.status.success(), "{}", support::text(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let other = start("0.0.1");
    let line = other["systemMessage"].as_str().expect("a systemMessage for another version");
    assert!(line.contains("plugin is version 0.0.1") && line.contains(env!("CARGO_PKG_VERSION")), "{line}");
    assert!(other["hookSpecificOutput"]["additionalContext"].as_str().is_some(), "the guidance still comes");
    assert!(start(env!("CARGO_PKG_VERSION")).get("systemMessage").is_none(), "same version, no message");
}
