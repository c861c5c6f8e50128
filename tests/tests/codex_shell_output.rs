//! A shell command's whole output reaches the large-observation store in Codex: the real
//! `codex exec` (pinned 0.169.0) against the scripted Responses API, its commands run by Codex
//! itself in its `workspace-write` sandbox. Codex cuts a command's output to about 10,000
//! characters before its hooks see it; the hook rewrites the command to capture the whole
//! output, offloads it, and the model reads the synthetic observation instead of the cut copy.

use std::ffi::OsStr;

use scratchpad_tests::agents::codex::{Codex, NAMESPACE};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

/// 3,000 numbered lines (178,893 bytes), then `exit 3`.
const BIG: &str = "seq 1 3000 | sed 's/.*/line &: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'; exit 3";
/// Quotes, pipes, stderr and a non-zero exit.
const QUOTED: &str = r#"printf '%s\n' "it's \"quoted\"" 'a|b' | tr a-z A-Z; echo 'to stderr' >&2; exit 7"#;
/// The sandbox Codex's interactive sessions use: commands may write the workspace and the
/// temp directory (`codex exec` defaults to read-only).
const SANDBOX: &str = "sandbox_mode = \"workspace-write\"";

fn shell(command: &str) -> Value {
    json!({ "tool_use": { "name": "exec_command", "input": { "cmd": command } } })
}

/// The text the model got for each tool call, in the last request.
fn outputs(request: &Value) -> Vec<String> {
    let items = request["input"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| match &item["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// A 3,000-line output: the model reads the synthetic observation, not Codex's cut copy, and
/// reads line 2096 (in the middle Codex cuts out) back with `scratchpad_read`; the command's
/// exit status reaches Codex and the model.
#[test]
fn a_long_shell_output_is_offloaded_whole_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let read = json!({ "tool_use": { "namespace": NAMESPACE, "name": "scratchpad_read",
        "input": { "scratchpad_id": "$1", "mode": "lines", "start_line": 2096, "end_line": 2096 } } });
    let script = json!({ "rules": [
        { "when": "line 2096:", "reply": [{ "text": "FOUND-2096" }] },
        { "when": "SCRIPT:big", "reply": [shell(BIG)] },
        { "when": "scratchpad_id", "capture": "\"scratchpad_id\"\\s*:\\s*\"([^\"]+)\"", "reply": [read] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, SANDBOX);
    let events = codex.events(dir.path(), &[], "SCRIPT:big print the log", None);
    let last = events.iter().rev().find(|e| e["item"]["type"] == "agent_message").unwrap();
    assert_eq!(last["item"]["text"], "FOUND-2096", "line 2096 was read back: {events:?}");
    let commands = Codex::commands(&events);
    assert_eq!(commands[0]["exit_code"], 3, "the command's own exit status: {:?}", commands[0]["exit_code"]);
    assert_eq!(commands[0]["aggregated_output"].as_str().unwrap().lines().count(), 3000, "Codex saw it all");

    let requests = model.turn_requests();
    let after = requests.iter().find(|r| outputs(r).iter().any(|o| o.contains("scratchpad_id"))).expect("an offload");
    let view = outputs(after).into_iter().find(|o| o.contains("scratchpad_id")).unwrap();
    assert!(view.starts_with("Process exited with code 3\n"), "the exit status stays in view: {view}");
    assert!(view.len() < 5_000, "the synthetic observation, not ~10 KB of cut output: {} bytes", view.len());
    assert!(!view.contains("truncated output"), "Codex's cut copy is gone: {view}");
    assert!(!view.contains("line 1500:"), "nor is the middle of the output in context");
    let slice = outputs(requests.last().unwrap()).pop().unwrap();
    assert!(slice.contains("line 2096: xxxx"), "scratchpad_read returned the line: {slice}");
}

/// A command with quotes, pipes, stderr and a non-zero exit runs as written: its output and
/// its exit status reach Codex and the model unchanged (a small output is not offloaded).
#[test]
fn a_rewritten_command_keeps_its_quotes_pipes_output_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:quoted", "reply": [shell(QUOTED)] },
        { "when": "Process exited with code 7", "reply": [{ "text": "EXIT-7-SEEN" }] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, SANDBOX);
    let events = codex.events(dir.path(), &[], "SCRIPT:quoted run it", None);
    let command = &Codex::commands(&events)[0];
    assert_eq!(command["exit_code"], 7, "{command}");
    assert_eq!(command["aggregated_output"], "IT'S \"QUOTED\"\nA|B\nto stderr\n", "{command}");
    let output = outputs(&model.turn_requests().pop().unwrap()).pop().unwrap();
    assert!(output.contains("Process exited with code 7"), "{output}");
    assert!(output.contains("IT'S \"QUOTED\"\nA|B\nto stderr"), "the model read the output: {output}");
    let last = events.iter().rev().find(|e| e["item"]["type"] == "agent_message").unwrap();
    assert_eq!(last["item"]["text"], "EXIT-7-SEEN");
}

/// In `codex exec`'s default read-only sandbox the command cannot write its capture: it runs
/// and answers as it would without the hook (Codex's own cut copy, its exit status), and
/// nothing is offloaded.
#[test]
fn where_the_sandbox_forbids_the_capture_codexs_own_output_stands() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:big", "reply": [shell(BIG)] },
        { "when": "Process exited with code 3", "reply": [{ "text": "CUT-COPY-SEEN" }] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, "");
    let events = codex.events(dir.path(), &[] as &[&OsStr], "SCRIPT:big print the log", None);
    let output = outputs(&model.turn_requests().pop().unwrap()).pop().unwrap();
    assert!(output.contains("Process exited with code 3"), "the exit status: {output}");
    assert!(output.contains("truncated output") && !output.contains("scratchpad_id"), "Codex's own: {output}");
    // What failed to be written says nothing: the output is the command's, line for line.
    assert!(output.contains("Total output lines: 3000\n"), "{output}");
    assert!(output.trim_end().ends_with("line 3000: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), "{output}");
    let thread = events.iter().find_map(|e| e["thread_id"].as_str()).unwrap();
    let shown: Value = serde_json::from_str(&codex.show(thread)).unwrap();
    assert_eq!(shown["observations"], json!([]), "nothing offloaded: {shown}");
}

/// A command still running when Codex yields to the model (`yield_time_ms`) has no exit status
/// yet: the model reads Codex's own answer, which names the process to poll, and nothing is
/// offloaded.
#[test]
fn a_command_still_running_is_left_to_codex() {
    let dir = tempfile::tempdir().unwrap();
    let long = json!({ "tool_use": { "name": "exec_command",
        "input": { "cmd": format!("{}; sleep 4; echo LATE", BIG.trim_end_matches("; exit 3")), "yield_time_ms": 1000 } } });
    let script = json!({ "rules": [
        { "when": "SCRIPT:long", "reply": [long] },
        { "when": "Process running with session ID", "reply": [{ "text": "RUNNING-SEEN" }] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, SANDBOX);
    let events = codex.events(dir.path(), &[], "SCRIPT:long start it", None);
    let last = events.iter().rev().find(|e| e["item"]["type"] == "agent_message").unwrap();
    assert_eq!(last["item"]["text"], "RUNNING-SEEN", "{events:?}");
    let output = outputs(&model.turn_requests().pop().unwrap()).pop().unwrap();
    assert!(!output.contains("scratchpad_id"), "Codex's own answer: {output}");
    let thread = events.iter().find_map(|e| e["thread_id"].as_str()).unwrap();
    let shown: Value = serde_json::from_str(&codex.show(thread)).unwrap();
    assert_eq!(shown["observations"], json!([]), "nothing offloaded: {shown}");
}
