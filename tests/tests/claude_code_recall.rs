//! Recall in the real Claude Code (pinned 2.1.331, `claude -p` with the plugin package
//! `integrations/claude-code`, against the scripted Anthropic Messages API): what one session
//! saved in a git checkout reaches the first request of the next session started anywhere in
//! that checkout, never a private span or a key, and never a session of another checkout. The
//! project is the checkout of the agent's working directory, which both the `SessionStart`
//! hook (its `cwd`) and the plugin's MCP server (the directory Claude Code starts it in) name.

use scratchpad_tests::agents::claude_code::{self, Claude, PREFIX, last_tool_results, text_of};
use scratchpad_tests::agents::workspace::{checkout, logging_scratchpad};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const PLAN: &str = "1. reproduce the timezone bug\n2. fix parse_date";
const FINDING: &str = "parse_date drops the offset";
const PRIVATE: &str = "Lisbon";
const KEY: &str = "sk-proj-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu";
const HEADING: &str = "## What earlier sessions of this project left";

fn tool(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// Session A in checkout P1 saves a plan and a note (with a private span and a key); session B,
/// a new `claude` process in a subdirectory of P1, gets A's finding and plan in its first
/// request, without the private span or the key, and finds the note with `recall_search`;
/// session C in checkout P2 gets nothing of P1, and its search finds nothing. One database.
#[test]
fn a_new_claude_code_session_starts_from_what_earlier_sessions_of_its_checkout_left() {
    let dir = tempfile::tempdir().unwrap();
    let (p1, p2) = (checkout(dir.path(), "p1"), checkout(dir.path(), "p2"));
    let note = format!("{FINDING} <private>my home is in {PRIVATE}</private> deploy key {KEY}");
    let script = json!({ "rules": [
        { "when": "SCRIPT:save", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
            "input": { "action": "set_plan", "content": PLAN } } }] },
        { "when": "Plan set.", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
            "input": { "action": "append_notes", "content": note } } }] },
        { "when": "Appended to notes.", "reply": [{ "text": "SAVED" }] },
        // Before the search's answers: B's first prompt quotes the finding too.
        { "when": "SCRIPT:recall", "reply": [{ "tool_use": { "name": tool("recall_search"),
            "input": { "query": "offset" } } }] },
        { "when": FINDING, "reply": [{ "text": "RECALLED" }] },
        { "when": "No match.", "reply": [{ "text": "NOTHING-RECALLED" }] },
    ] });
    let model = Model::start("anthropic", dir.path(), &script);
    let (binary, path) = claude_code::install();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let runs = dir.path().join("runs.log");
    let claude = Claude {
        binary,
        path,
        home,
        model_url: model.url.clone(),
        scratchpad: Some(logging_scratchpad(dir.path(), &runs)),
        database: dir.path().join("scratchpad.db"),
        config: None,
        extra_args: Vec::new(),
        plugin_dir: true,
    };
    let project = |session: &str| claude.show(session)["session"]["project"].clone();

    let a = claude.prompt_in(&p1, "SCRIPT:save remember this", None);
    assert_eq!(a["result"], "SAVED", "both saves succeeded: {a}");
    let a = a["session_id"].as_str().unwrap().to_owned();
    assert_eq!(project(&a), p1.to_str().unwrap(), "A belongs to P1");
    let seen = model.turn_requests().len();

    let deep = p1.join("src/deep");
    let b = claude.prompt_in(&deep, "SCRIPT:recall let's continue on the timezone bug", None);
    assert_eq!(b["result"], "RECALLED", "the search found the note: {b}");
    let b = b["session_id"].as_str().unwrap().to_owned();
    assert_ne!(a, b, "a new session");
    assert_eq!(project(&b), p1.to_str().unwrap(), "B, started in P1/src/deep, belongs to P1's checkout");
    let requests: Vec<Value> = model.turn_requests().split_off(seen);
    assert_eq!(requests.len(), 2, "B's first request and the one with the search's result");
    let first = text_of(&requests[0]);
    assert_eq!(first.matches(HEADING).count(), 1, "the recall block, once, in B's first request: {first}");
    assert!(first.contains(FINDING), "A's finding: {first}");
    assert!(first.contains("reproduce the timezone bug"), "A's plan: {first}");
    assert!(first.contains("offered, not adopted"), "the plan is offered: {first}");
    assert!(first.contains("deploy key [redacted]"), "the key was redacted before it was kept: {first}");
    assert!(first.contains(&tool("recall_search")), "the block names the search tool as the model sees it: {first}");
    let found = last_tool_results(&requests[1]);
    assert!(found.contains(FINDING) && found.contains(&format!("· {a} ·")), "the search's result names A: {found}");
    for request in &requests {
        let text = request.to_string();
        assert!(!text.contains(PRIVATE) && !text.contains(KEY), "no private span, no key reached B: {text}");
    }
    let plan = claude.show(&b)["state"].as_array().unwrap().iter().any(|e| e["key"] == "plan" && e["text"] != "");
    assert!(!plan, "B did not adopt A's plan");
    assert!(claude.show(&a).to_string().contains(PRIVATE), "A's own scratchpad keeps the note as written");

    let c = claude.prompt_in(&p2, "SCRIPT:recall the timezone bug", None);
    assert_eq!(c["result"], "NOTHING-RECALLED", "the search in P2 found nothing: {c}");
    let c = c["session_id"].as_str().unwrap().to_owned();
    assert_eq!(project(&c), p2.to_str().unwrap(), "C belongs to P2");
    let requests: Vec<Value> = model.turn_requests().split_off(seen + 2);
    assert_eq!(requests.len(), 2, "C's first request and the one with the search's result");
    for request in &requests {
        let text = text_of(request);
        assert!(!text.contains("earlier sessions of this project"), "no recall block in P2: {text}");
        assert!(!text.contains("parse_date") && !text.contains(PRIVATE), "nothing of P1 reached C: {text}");
    }

    // Three `claude` processes: each ran one `SessionStart` hook and one MCP server, both in
    // the directory `claude` ran in (so the server names the same checkout as the hook's `cwd`).
    let runs = std::fs::read_to_string(&runs).unwrap();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort_unstable();
    let mut expected: Vec<String> = [&p1, &deep, &p2]
        .iter()
        .flat_map(|d| [format!("hook {}", d.display()), format!("mcp {}", d.display())])
        .collect();
    expected.sort_unstable();
    assert_eq!(lines, expected, "{runs}");
}
