//! `scratchpad mcp --hook-tool`: hook events answered by the running server, as Claude Code
//! 2.1.331's `mcp_tool` hooks send them (every field interpolated into a string: an object as
//! its JSON text, an absent field as ""). The answers are `scratchpad hook`'s, and the two share
//! the session's ledger. The real Claude Code drives it in `tests/tests/claude_code_e2e.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support;

use support::Process;

const PREFIX: &str = "mcp__plugin_scratchpad_scratchpad__";

/// `scratchpad mcp` as the Claude Code plugin starts it, initialized, on `dir`'s database.
struct Server {
    process: Process,
    next_id: i64,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut command = support::command();
        command
            .arg("--db")
            .arg(dir.join("s.db"))
            .args(["mcp", "--session", "cc-1", "--api-safe-names", "--tool-prefix", PREFIX, "--declared-tools"])
            .args(["--follow-turn"])
            .args(extra)
            .env("SCRATCHPAD_HOOK_STATE", dir.join("hooks"));
        let mut server = Server { process: Process::spawn(command), next_id: 0 };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.process.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        server
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.process.send(format!("{line}\n").as_bytes());
        let answer = self.process.read();
        assert_eq!(answer["id"], self.next_id, "{answer}");
        answer
    }

    /// The `hook` tool's result for an event with `fields` (strings, as interpolated).
    fn hook(&mut self, fields: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": "hook", "arguments": fields}));
        answer["result"].clone()
    }

    /// The hook's JSON output in a successful result, if it has one.
    fn output(&mut self, fields: Value) -> Option<Value> {
        let result = self.hook(fields);
        assert_ne!(result["isError"], true, "{result}");
        let text = result["content"].as_array().unwrap().first().map(|c| c["text"].as_str().unwrap().to_owned());
        text.map(|t| serde_json::from_str(&t).unwrap())
    }
}

/// Claude Code's interpolation of `event` for a hook whose `input` names `fields`.
fn interpolated(event: &Value, fields: &[&str]) -> Value {
    let mut input = json!({});
    for field in fields {
        input[*field] = match &event[*field] {
            Value::Null => json!(""),
            Value::String(text) => json!(text),
            other => json!(other.to_string()),
        };
    }
    input
}

fn context(output: &Option<Value>) -> String {
    output.as_ref().and_then(|o| o["hookSpecificOutput"]["additionalContext"].as_str()).unwrap_or_default().to_owned()
}

#[test]
fn the_hook_tool_answers_as_the_hook_command_would_and_shares_its_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["--hook-tool"]);
    let listed = server.request("tools/list", json!({}));
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"session_scratchpad") && !names.contains(&"hook"),
        "the model is never offered it: {names:?}"
    );

    let set = server.request(
        "tools/call",
        json!({"name": "session_scratchpad", "arguments": {"action": "set_plan", "content": "1. TOOL-PLAN"}}),
    );
    assert_ne!(set["result"]["isError"], true, "{set}");
    let fields = ["hook_event_name", "session_id", "prompt", "transcript_path"];
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "cc-1", "prompt": "read the log"});
    let injected = context(&server.output(interpolated(&prompt, &fields)));
    assert!(injected.contains("1. TOOL-PLAN"), "the plan is injected: {injected}");

    // A large MCP result offloaded in this turn, as step 1.
    let tool_fields = ["hook_event_name", "session_id", "tool_name", "tool_input", "tool_use_id", "tool_response"];
    let pre = json!({"hook_event_name": "PreToolUse", "session_id": "cc-1", "tool_name": "mcp__files__read",
        "tool_input": {"path": "/var/log/app.log"}, "tool_use_id": "call-1"});
    assert_eq!(server.output(interpolated(&pre, &tool_fields)), None, "nothing to say about this call");
    let log = "INFO line\n".repeat(20_000);
    let mut post = pre.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!([{"type": "text", "text": log}]);
    let replaced = server.output(interpolated(&post, &tool_fields)).expect("the large result is replaced");
    let view = replaced["hookSpecificOutput"]["updatedMCPToolOutput"][0]["text"].as_str().unwrap().to_owned();
    assert!(view.contains("scratchpad_id") && view.len() < 20_000, "the synthetic observation: {} bytes", view.len());
    assert!(view.contains(&format!("{PREFIX}scratchpad_read")), "naming the read tool as the model sees it");

    // The same turn's next call, answered by a `scratchpad hook` process: its step numbering
    // continues from the tool's (`{{step1.path}}` is the offloaded call's path).
    let event = json!({"session_id": "cc-1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "tail {{step1.path}}"}, "tool_use_id": "call-2"});
    let output = support::hook(dir.path(), PREFIX, &[], &[], event.to_string().as_bytes());
    assert!(output.status.success(), "{}", support::text(&output.stderr));
    let rewrite: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rewrite["hookSpecificOutput"]["updatedInput"], json!({"command": "tail /var/log/app.log"}));

    // After a compaction the scratchpad comes back at once, without the guidance: the agent has
    // it as this server's instructions.
    let compact = json!({"hook_event_name": "SessionStart", "session_id": "cc-1", "source": "compact"});
    let back = context(
        &server.output(interpolated(&compact, &["hook_event_name", "session_id", "source", "transcript_path"])),
    );
    assert!(back.contains("1. TOOL-PLAN") && !back.contains("## Session Scratchpad"), "{back}");

    // The turn ends (`Stop`, with the fields it lacks interpolated as ""): nothing to say.
    let stop = json!({"hook_event_name": "Stop", "session_id": "cc-1", "last_assistant_message": "done"});
    assert_eq!(
        server.output(interpolated(
            &stop,
            &["hook_event_name", "session_id", "last_assistant_message", "transcript_path"]
        )),
        None
    );
}

#[test]
fn a_bad_event_is_an_error_result_that_stores_nothing_and_the_tool_is_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["--hook-tool"]);
    let cases = [
        (json!({"hook_event_name": "UserPromptSubmit", "session_id": "", "prompt": "hi"}), "`session_id` is missing"),
        (
            json!({"hook_event_name": "PreToolUse", "session_id": "cc-9", "tool_name": "Bash", "tool_input": "{\"command\":"}),
            "`tool_input` is not JSON text",
        ),
        (json!({"session_id": "cc-9", "prompt": "hi"}), "`hook_event_name` is missing"),
    ];
    for (fields, expected) in cases {
        let result = server.hook(fields);
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text} vs {expected}");
    }
    assert!(server.process.close(), "the server kept serving and exited cleanly");
    let shown = support::run(dir.path().join("s.db"), &["show", "cc-9"]);
    assert!(!shown.status.success(), "no session was created for a bad event");
    assert!(!dir.path().join("hooks").exists(), "nor any bookkeeping");

    // Without --hook-tool the server has no such tool.
    let mut plain = Server::start(dir.path(), &[]);
    let answer = plain.request("tools/call", json!({"name": "hook", "arguments": {"hook_event_name": "Stop"}}));
    assert!(answer["error"]["message"].as_str().unwrap_or_default().contains("no tool named `hook`"), "{answer}");

    // And it is for stdio only.
    let refused = support::run(dir.path().join("s.db"), &["mcp", "--hook-tool", "--http", "127.0.0.1:0"]);
    assert!(!refused.status.success());
    assert!(support::text(&refused.stderr).contains("--hook-tool"), "{}", support::text(&refused.stderr));
}
