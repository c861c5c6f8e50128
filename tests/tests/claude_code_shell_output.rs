//! A Bash command's whole output reaches the large-observation store in Claude Code: the real
//! `claude -p` (pinned 2.1.331) with the plugin, against the scripted Anthropic API. Claude Code
//! hands `PostToolUse` the first 30,000 characters and the model a `<persisted-output>` stub;
//! the hook offloads the whole output from the file the result names and replaces the stub with
//! the synthetic observation, in Bash's output shape.

use scratchpad_tests::agents::claude_code::{Claude, PREFIX, last_tool_results};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

/// 3,000 numbered lines, 178,893 bytes.
const BIG: &str = "seq 1 3000 | sed 's/.*/line &: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'";
/// Quotes, pipes, stderr and a non-zero exit.
const QUOTED: &str = r#"printf '%s\n' "it's \"quoted\"" 'a|b' | tr a-z A-Z; echo 'to stderr' >&2; exit 7"#;

fn bash(command: &str) -> Value {
    json!({ "tool_use": { "name": "Bash", "input": { "command": command, "description": "print" } } })
}

/// A 170 KB output: the model reads the synthetic observation instead of Claude Code's stub,
/// and line 2096 back with `scratchpad_read`; the store holds the whole output.
#[test]
fn a_long_bash_output_is_offloaded_whole_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let read = json!({ "tool_use": { "name": format!("{PREFIX}scratchpad_read"),
        "input": { "scratchpad_id": "$1", "mode": "lines", "start_line": 2096, "end_line": 2096 } } });
    let script = json!({ "rules": [
        { "when": "line 2096:", "reply": [{ "text": "FOUND-2096" }] },
        { "when": "SCRIPT:big", "reply": [bash(BIG)] },
        { "when": "scratchpad_id", "capture": "\"scratchpad_id\"\\s*:\\s*\"([^\"]+)\"", "reply": [read] },
    ] });
    let model = Model::start("anthropic", dir.path(), &script);
    let claude = Claude::with_plugin(dir.path(), &model);
    let result = claude.prompt("SCRIPT:big print the log", None);
    assert_eq!(result["result"], "FOUND-2096", "line 2096 was read back: {result}");

    let requests = model.turn_requests();
    let view = requests.iter().map(last_tool_results).find(|r| r.contains("scratchpad_id")).expect("an offload");
    assert!(view.len() < 5_000, "the synthetic observation: {} bytes", view.len());
    assert!(!view.contains("persisted-output"), "Claude Code's stub is replaced: {view}");
    assert!(!view.contains("line 1500:"), "the middle of the output is not in context");
    let slice = last_tool_results(requests.last().unwrap());
    assert!(slice.contains("line 2096: xxxx"), "scratchpad_read returned the line: {slice}");
    let session = result["session_id"].as_str().unwrap();
    let stored = claude.show(session)["observations"].clone();
    assert_eq!(stored[0]["size_bytes"], 178_893, "the whole output is stored: {stored}");
}

/// A command with quotes, pipes, stderr and a non-zero exit: its output and exit status reach
/// the model as Claude Code gives them.
#[test]
fn a_failing_bash_command_keeps_its_output_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:quoted", "reply": [bash(QUOTED)] },
        { "when": "A|B", "reply": [{ "text": "OUTPUT-SEEN" }] },
    ] });
    let model = Model::start("anthropic", dir.path(), &script);
    let claude = Claude::with_plugin(dir.path(), &model);
    let result = claude.prompt("SCRIPT:quoted run it", None);
    assert_eq!(result["result"], "OUTPUT-SEEN", "{result}");
    let output = last_tool_results(&model.turn_requests().pop().unwrap());
    assert!(output.contains("IT'S \"QUOTED\"\nA|B") && output.contains("to stderr"), "{output}");
    assert!(output.contains("Exit code 7"), "the exit status: {output}");
}
