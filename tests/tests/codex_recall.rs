//! Recall in the real Codex CLI (pinned 0.169.0, `codex exec` set up by `scratchpad setup
//! codex`, against the scripted Responses API): what one thread saved in a git checkout
//! reaches the first request of the next thread started anywhere in that checkout, never a
//! private span or a key, and never a thread of another checkout.

use std::path::Path;
use std::process::Command;

use scratchpad_tests::agents::codex::{Codex, NAMESPACE};
use scratchpad_tests::agents::workspace::{checkout, logging_scratchpad, new_lines};
use scratchpad_tests::runtimes::run;
use scratchpad_tests::scratchpad_binary;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const PLAN: &str = "1. reproduce the timezone bug\n2. fix parse_date";
const FINDING: &str = "parse_date drops the offset";
const PRIVATE: &str = "Lisbon";
const KEY: &str = "sk-proj-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu";
const HEADING: &str = "## What earlier sessions of this project left";

fn tool_use(name: &str, input: Value) -> Value {
    json!({ "tool_use": { "namespace": NAMESPACE, "name": name, "input": input } })
}

fn session(codex: &Codex, thread: &str) -> Value {
    serde_json::from_str(&codex.show(thread)).unwrap()
}

/// The text of the tool results (`function_call_output` items) in a request's input.
fn tool_outputs(request: &Value) -> String {
    let items = request["input"].as_array().cloned().unwrap_or_default();
    items.iter().filter(|i| i["type"] == "function_call_output").map(|i| i["output"].to_string()).collect()
}

/// Every `scratchpad` one `codex exec` ran, its MCP server once and its hooks, ran in `dir`.
fn all_ran_in(runs: &[String], dir: &Path) {
    let dir = dir.display();
    assert_eq!(runs.iter().filter(|r| **r == format!("mcp {dir}")).count(), 1, "one MCP server, in {dir}: {runs:?}");
    assert!(runs.iter().any(|r| *r == format!("hook {dir}")), "hooks, in {dir}: {runs:?}");
    assert!(runs.iter().all(|r| r.ends_with(&format!(" {dir}"))), "nothing ran elsewhere than {dir}: {runs:?}");
}

/// Thread A in checkout P1 saves a plan and a note (with a private span and a key); thread B, a
/// new `codex exec -C P1/src/deep` started outside any checkout, gets A's finding and plan in
/// its first request, without the private span or the key, and finds the note with
/// `recall_search`; thread C in checkout P2 gets nothing of P1, and its search finds nothing.
/// One database. Codex runs the hooks and starts the MCP server in its working directory (the
/// directory it runs in, or `-C`'s), so the project is that checkout whichever of them creates
/// the session (the `SessionStart` hook, from the event's `cwd`, before any tool call).
#[test]
fn a_new_codex_thread_starts_from_what_earlier_threads_of_its_checkout_left() {
    let dir = tempfile::tempdir().unwrap();
    let (p1, p2) = (checkout(dir.path(), "p1"), checkout(dir.path(), "p2"));
    let note = format!("{FINDING} <private>my home is in {PRIVATE}</private> deploy key {KEY}");
    let script = json!({ "rules": [
        { "when": "SCRIPT:save", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": PLAN }))] },
        { "when": "Plan set.", "reply": [tool_use("session_scratchpad", json!({ "action": "append_notes", "content": note }))] },
        { "when": "Appended to notes.", "reply": [{ "text": "SAVED" }] },
        // Before the search's answers: B's first request quotes the finding too.
        { "when": "SCRIPT:recall", "reply": [tool_use("recall_search", json!({ "query": "offset" }))] },
        { "when": FINDING, "reply": [{ "text": "RECALLED" }] },
        { "when": "No match.", "reply": [{ "text": "NOTHING-RECALLED" }] },
        { "when": "SCRIPT:resume", "reply": [{ "text": "RESUMED" }] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let log = dir.path().join("runs.log");
    let wrapper = logging_scratchpad(dir.path(), &log);
    let codex = Codex::set_up(dir.path(), &model, "", |codex_home| {
        let mut setup = Command::new(scratchpad_binary());
        setup.args(["setup", "codex", "--binary"]).arg(&wrapper).env("CODEX_HOME", codex_home);
        run(&mut setup, "scratchpad setup codex");
    });
    let mut read = 0;

    let (a, reply) = codex.exec_in(&p1, "SCRIPT:save remember this", None);
    assert_eq!(reply, "SAVED", "both saves succeeded");
    assert_eq!(session(&codex, &a)["session"]["project"], p1.to_str().unwrap(), "A belongs to P1");
    all_ran_in(&new_lines(&log, &mut read), &p1);
    let seen = model.turn_requests().len();

    // B starts in the temp dir, which is no checkout (a project of its own), and works in
    // P1/src/deep.
    let deep = p1.join("src/deep");
    let elsewhere = dir.path().canonicalize().unwrap();
    let prompt = "SCRIPT:recall let's continue on the timezone bug";
    let (b, reply) = codex.exec_with(&elsewhere, &["-C".as_ref(), deep.as_os_str()], prompt, None);
    assert_eq!(reply, "RECALLED", "the search found the note");
    assert_ne!(a, b, "a new thread");
    all_ran_in(&new_lines(&log, &mut read), &deep);
    let shown = session(&codex, &b);
    assert_eq!(shown["session"]["project"], p1.to_str().unwrap(), "B, working in P1/src/deep, belongs to P1");
    let requests: Vec<Value> = model.turn_requests().split_off(seen);
    assert_eq!(requests.len(), 2, "B's first request and the one with the search's result");
    let first = requests[0]["input"].to_string();
    assert_eq!(first.matches(HEADING).count(), 1, "the recall block, once, in B's first request: {first}");
    assert!(first.contains(FINDING), "A's finding: {first}");
    assert!(first.contains("reproduce the timezone bug"), "A's plan: {first}");
    assert!(first.contains("offered, not adopted"), "the plan is offered: {first}");
    assert!(first.contains("deploy key [redacted]"), "the key was redacted before it was kept: {first}");
    let search = format!("{NAMESPACE}__recall_search");
    assert!(first.contains(&search), "the block names the search tool as the model sees it: {first}");
    let found = tool_outputs(&requests[1]);
    assert!(found.contains(FINDING) && found.contains(&format!("· {a} ·")), "the search's result names A: {found}");
    for request in &requests {
        let text = request.to_string();
        assert!(!text.contains(PRIVATE) && !text.contains(KEY), "no private span, no key reached B: {text}");
    }
    let adopted = shown["state"].as_array().unwrap().iter().any(|e| e["key"] == "plan" && e["text"] != "");
    assert!(!adopted, "B did not adopt A's plan");
    assert!(codex.show(&a).contains(PRIVATE), "A's own scratchpad keeps the note as written");

    // Resumed (its ledger still in its first turn): the block is not given a second time.
    let (resumed, reply) = codex.exec_in(&deep, "SCRIPT:resume go on", Some(&b));
    assert_eq!((resumed.as_str(), reply.as_str()), (b.as_str(), "RESUMED"));
    let _ = new_lines(&log, &mut read);
    let last = model.turn_requests().pop().unwrap()["input"].to_string();
    assert_eq!(last.matches(HEADING).count(), 1, "the block once, in the history only: {last}");
    let seen = model.turn_requests().len();

    let (c, reply) = codex.exec_in(&p2, "SCRIPT:recall the timezone bug", None);
    assert_eq!(reply, "NOTHING-RECALLED", "the search in P2 found nothing");
    assert_eq!(session(&codex, &c)["session"]["project"], p2.to_str().unwrap(), "C belongs to P2");
    all_ran_in(&new_lines(&log, &mut read), &p2);
    let requests: Vec<Value> = model.turn_requests().split_off(seen);
    assert_eq!(requests.len(), 2, "C's first request and the one with the search's result");
    for request in &requests {
        let text = request.to_string();
        assert!(!text.contains("earlier sessions of this project"), "no recall block in P2: {text}");
        assert!(!text.contains("parse_date") && !text.contains(PRIVATE), "nothing of P1 reached C: {text}");
    }
}
