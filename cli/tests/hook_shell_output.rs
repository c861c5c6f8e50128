//! Whole shell outputs through `scratchpad hook`, in the shapes Claude Code 2.1.331 and Codex
//! 0.169.0 send: a Bash result Claude Code persisted is offloaded from its file and replaced in
//! Bash's own output shape; a Codex shell command is rewritten to capture its output, runs
//! unchanged (its output, its exit status), and its whole output is offloaded. Anything wrong
//! on that path is one line on stderr, exit status 0, no answer and nothing stored: the
//! runtime's own result stands. (The end-to-end tests run the real agents:
//! `tests/tests/codex_shell_output.rs`, `tests/tests/claude_code_shell_output.rs`.)

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support;

const PREFIX: &str = "mcp__plugin_scratchpad_scratchpad__";

/// 3,000 numbered lines, about 170 KB.
fn log() -> String {
    (1..=3000).map(|n| format!("line {n}: {}\n", "x".repeat(48))).collect()
}

fn hook(dir: &Path, runtime: &str, event: &Value) -> Output {
    support::hook(dir, PREFIX, &["--runtime", runtime], &[], event.to_string().as_bytes())
}

/// The answer to `event`, which must succeed with no word on stderr.
fn answer(dir: &Path, runtime: &str, event: &Value) -> Option<Value> {
    let output = hook(dir, runtime, event);
    assert!(output.status.success(), "{event}: {}", support::text(&output.stderr));
    let stdout = support::text(&output.stdout);
    (!stdout.trim().is_empty()).then(|| serde_json::from_str(&stdout).unwrap())
}

/// Starts `session` as the agent does before any tool call.
fn start(dir: &Path, runtime: &str, session: &str) {
    answer(dir, runtime, &json!({ "session_id": session, "hook_event_name": "SessionStart", "source": "startup" }));
}

/// The observations stored for `session`.
fn observations(dir: &Path, session: &str) -> Vec<Value> {
    let shown = support::run(dir.join("s.db"), &["--json", "show", session]);
    if !shown.status.success() {
        return Vec::new();
    }
    support::json_of(&shown)["observations"].as_array().cloned().unwrap_or_default()
}

fn claude_post(session: &str, response: Value) -> Value {
    json!({ "session_id": session, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": { "command": "cat app.log" }, "tool_use_id": "toolu_1", "tool_response": response })
}

#[test]
fn a_persisted_bash_output_is_offloaded_whole_and_replaced_in_bashs_shape() {
    let dir = tempfile::tempdir().unwrap();
    let (log, file) = (log(), dir.path().join("persisted.txt"));
    std::fs::write(&file, &log).unwrap();
    start(dir.path(), "claude-code", "cc-1");
    let response = json!({ "stdout": &log[..30_000], "stderr": "", "interrupted": false, "isImage": false,
        "noOutputExpected": false, "persistedOutputPath": file, "persistedOutputSize": log.len() });
    let answer = answer(dir.path(), "claude-code", &claude_post("cc-1", response)).expect("a replacement");
    let output = &answer["hookSpecificOutput"]["updatedToolOutput"];
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let view = output["stdout"].as_str().unwrap();
    assert!(view.contains("scratchpad_id") && view.len() < 5_000, "the synthetic observation: {view}");
    assert!(view.contains(&format!("{PREFIX}scratchpad_read")), "naming the read tool as the model sees it");
    assert!(!view.contains("line 2096:"), "not the middle of the output");
    assert_eq!((&output["stderr"], &output["interrupted"]), (&json!(""), &json!(false)), "Bash's shape");
    assert!(output.get("persistedOutputPath").is_none() && output.get("persistedOutputSize").is_none());
    let stored = observations(dir.path(), "cc-1");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["size_bytes"], log.len(), "the whole output, not the 30,000 characters: {stored:?}");
}

#[test]
fn a_codex_shell_command_runs_unchanged_and_its_whole_output_is_offloaded() {
    let dir = tempfile::tempdir().unwrap();
    let command = r#"seq 1 3000 | sed 's/.*/line &: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'; echo "it's \"done\"" >&2; exit 3"#;
    let event = |name: &str, mode: &str, extra: Value| {
        let mut event = json!({ "session_id": "cx-1", "turn_id": "t-1", "hook_event_name": name, "permission_mode": mode,
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "call_1" });
        event.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        event
    };
    start(dir.path(), "codex", "cx-1");
    // Where Codex asks the user before running a command, the hook leaves it alone.
    assert_eq!(answer(dir.path(), "codex", &event("PreToolUse", "default", json!({}))), None);

    let rewrite = answer(dir.path(), "codex", &event("PreToolUse", "bypassPermissions", json!({}))).unwrap();
    let specific = &rewrite["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "allow", "Codex takes a rewrite only when allowed");
    let wrapped = specific["updatedInput"]["command"].as_str().unwrap();
    // Codex runs it as `bash -lc COMMAND`.
    let ran = Command::new("bash").arg("-lc").arg(wrapped).output().unwrap();
    let expected = Command::new("bash").arg("-lc").arg(command).output().unwrap();
    assert_eq!(ran.status.code(), Some(3), "the exit status is the command's");
    let joined = format!("{}{}", support::text(&expected.stdout), support::text(&expected.stderr));
    assert_eq!(support::text(&ran.stdout), joined, "the same output (stderr joined to stdout)");

    // Codex hands the hook its cut copy; the hook offloads the whole one.
    let cut = json!({ "tool_response": "Warning: truncated output\nline 1: …" });
    let post = answer(dir.path(), "codex", &event("PostToolUse", "bypassPermissions", cut.clone())).unwrap();
    assert_eq!(post["decision"], "block", "{post}");
    let reason = post["reason"].as_str().unwrap();
    assert!(reason.starts_with("Process exited with code 3\n"), "{reason}");
    assert!(reason.contains("scratchpad_id") && reason.len() < 5_000, "the synthetic observation: {reason}");
    let stored = observations(dir.path(), "cx-1");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["size_bytes"], joined.len(), "the whole output: {stored:?}");
    // Its files are gone: the same call again takes the usual path (the cut copy).
    let again = answer(dir.path(), "codex", &event("PostToolUse", "bypassPermissions", cut));
    assert!(again.as_ref().is_none_or(|a| a.get("decision").is_none()), "{again:?}");
}

#[test]
fn bad_whole_output_input_leaves_the_runtime_alone_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.txt");
    std::fs::File::create(&huge).unwrap().set_len((16 << 20) + 1).unwrap();
    let cases = [
        (
            "claude-code",
            claude_post("bad-1", json!({ "stdout": "cut", "persistedOutputPath": dir.path().join("gone") })),
            "gone",
        ),
        (
            "claude-code",
            claude_post("bad-2", json!({ "stdout": "cut", "persistedOutputPath": 7 })),
            "must be a file's path",
        ),
        ("claude-code", claude_post("bad-3", json!({ "stdout": "cut", "persistedOutputPath": huge })), "over 16 MiB"),
        (
            "codex",
            json!({ "session_id": "bad-4", "turn_id": "t", "hook_event_name": "PreToolUse", "permission_mode": "bypassPermissions",
                "tool_name": "Bash", "tool_input": { "command": ["ls"] }, "tool_use_id": "call_1" }),
            "`tool_input.command` is not a string",
        ),
        (
            "codex",
            json!({ "session_id": "bad-5", "turn_id": "t", "hook_event_name": "PreToolUse", "permission_mode": "bypassPermissions",
                "tool_name": "Bash", "tool_input": { "command": "ls" } }),
            "the shell call has no id",
        ),
    ];
    for (runtime, event, expected) in cases {
        let session = event["session_id"].as_str().unwrap();
        start(dir.path(), runtime, session);
        let output = hook(dir.path(), runtime, &event);
        let stderr = support::text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "the runtime's turn goes on untouched: {stderr}");
        assert!(stderr.contains(expected) && stderr.trim().lines().count() == 1, "{expected}: {stderr}");
        assert!(output.stdout.is_empty(), "no answer: {}", support::text(&output.stdout));
        assert_eq!(observations(dir.path(), session), Vec::<Value>::new(), "nothing stored for {session}");
    }
}

/// A capture whose status file holds no exit status (written by something else than the
/// rewritten command) is not offloaded: one line on stderr, no answer, nothing stored.
#[test]
fn a_capture_without_an_exit_status_is_left_to_codex() {
    let dir = tempfile::tempdir().unwrap();
    start(dir.path(), "codex", "cx-2");
    let event = |name: &str| {
        json!({ "session_id": "cx-2", "turn_id": "t-1", "hook_event_name": name, "permission_mode": "bypassPermissions",
            "tool_name": "Bash", "tool_input": { "command": "seq 1 3000" }, "tool_use_id": "call_9",
            "tool_response": "1\n2\n…" })
    };
    let rewrite = answer(dir.path(), "codex", &event("PreToolUse")).unwrap();
    let wrapped = rewrite["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap().to_owned();
    let status = wrapped.split("2>/dev/null > '").nth(1).and_then(|rest| rest.split('\'').next()).unwrap();
    std::fs::write(status, "not a number").unwrap();
    let output = hook(dir.path(), "codex", &event("PostToolUse"));
    let stderr = support::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("holds no exit status") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(output.stdout.is_empty(), "Codex's own result stands: {}", support::text(&output.stdout));
    assert_eq!(observations(dir.path(), "cx-2"), Vec::<Value>::new(), "nothing stored");
    assert!(!Path::new(status).exists(), "the capture's files are removed");
}
