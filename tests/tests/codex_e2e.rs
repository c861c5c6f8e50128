//! Codex CLI runs the components: the real `codex` (pinned 0.169.0, headless `codex exec`) set
//! up with `scratchpad setup codex` on a configuration that already has a model provider
//! pointing at a scripted Responses API on 127.0.0.1 (`tests/scripted/responses.py`). Each
//! scenario asserts on markers in what the model received and on `scratchpad show`.

use scratchpad_tests::agents::codex::{Codex, NAMESPACE};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

fn tool_use(name: &str, input: Value) -> Value {
    json!({ "tool_use": { "namespace": NAMESPACE, "name": name, "input": input } })
}

/// The plan is written with the scratchpad's tool (approved by the fragment, no bypass flag),
/// stored in the Codex thread's session, injected on the next turn in a new `codex exec resume`
/// process, invisible to another thread; an append over the budget reaches the model as the
/// refusal.
#[test]
fn codex_keeps_the_plan_across_processes_per_thread_and_refuses_an_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": "1. CODEX-PLAN-42" }))] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        { "when": "SCRIPT:overflow", "reply": [tool_use("session_scratchpad", json!({ "action": "append_notes", "content": "y".repeat(5000) }))] },
        { "when": "append_notes rejected", "reply": [{ "text": "REFUSAL-SEEN" }] },
    ] });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, "");

    let (thread, reply) = codex.exec("SCRIPT:plan make a plan", None);
    assert_eq!(reply, "PLAN-SAVED");
    let first = model.turn_requests().remove(0).to_string();
    assert!(first.contains("## Session Scratchpad"), "the guidance reached the model");
    assert_eq!(first.matches("## Session Scratchpad").count(), 1, "the guidance goes once in a model call: {first}");
    assert!(first.contains(&format!("{NAMESPACE}__session_scratchpad")), "naming the tool as the model sees it");
    assert!(codex.show(&thread).contains("CODEX-PLAN-42"), "the plan is in the thread's session");

    codex.exec("SCRIPT:next continue", Some(&thread));
    let last = model.turn_requests().pop().unwrap().to_string();
    assert!(last.contains("CODEX-PLAN-42"), "the plan is injected in the resumed thread's next turn");

    let (other, reply) = codex.exec("SCRIPT:overflow note this", None);
    assert_ne!(other, thread);
    assert_eq!(reply, "REFUSAL-SEEN", "the refusal reached the model");
    let last = model.turn_requests().pop().unwrap().to_string();
    // Another thread (of the same project: the same directory) has no plan of its own; recall
    // offers it the first one's, and never adopts it.
    assert!(!last.contains("## Plan\\n1. CODEX-PLAN-42"), "another thread does not have the plan");
    assert!(last.contains("offered, not adopted"), "recall offers it");
    assert!(!codex.show(&other).contains("CODEX-PLAN-42"), "nor does it store it");
    assert!(!codex.show(&other).contains("yyyyyyyyyy"), "the refused append changed nothing");
}

/// A component that loops forever fails its hook at the deadline and the turn completes.
#[test]
fn a_looping_component_never_breaks_a_codex_turn() {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::start(
        "responses",
        dir.path(),
        &json!({ "rules": [{ "when": "SCRIPT:hi", "reply": [{ "text": "HELLO-BACK" }] }] }),
    );
    let probe = scratchpad_tests::components::PROBE_PATH;
    std::fs::write(
        dir.path().join("scratchpad.toml"),
        format!(
            "[[plugin]]\nname = \"scratchpad\"\n[[plugin]]\nname = \"probe\"\npath = {probe:?}\nallow_unsigned = true\ngrants = [\"inject\", \"storage\", \"config\"]\n[plugin.config]\nqueryMode = \"loop\"\npowers = [\"inject\", \"storage\", \"config\"]\n"
        ),
    )
    .unwrap();
    let codex = Codex::new(dir.path(), &model, "");
    let (thread, reply) = codex.exec("SCRIPT:hi there", None);
    assert_eq!(reply, "HELLO-BACK", "the turn completed");
    assert!(!codex.show(&thread).contains("query-was-here"), "the looping call's write was discarded");
}

/// Codex compacts the thread (a low `model_auto_compact_token_limit`, a reply reporting a large
/// usage): its compact hooks run (the host counts the compaction), and the next turn, whose
/// history no longer holds the tool call, still gets the plan.
#[test]
fn the_plan_survives_a_codex_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({
        // After the compaction no model output is left in the history, so the next turn's text
        // runs from the thread's start: its rule goes first.
        "rules": [
            { "when": "SCRIPT:next", "reply": [{ "text": "NEXT-DONE" }] },
            { "when": "SCRIPT:plan", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": "1. CODEX-PLAN-42" }))] },
            { "when": "Plan set.", "usage": { "input_tokens": 50_000 }, "reply": [{ "text": "PLAN-SAVED" }] },
        ],
        "compact_summary": "CODEX-SUMMARY: a plan was made.",
    });
    let model = Model::start("responses", dir.path(), &script);
    let codex = Codex::new(dir.path(), &model, "model_auto_compact_token_limit = 20000");
    let (thread, reply) = codex.exec("SCRIPT:plan make a plan", None);
    assert_eq!(reply, "PLAN-SAVED");
    let (_, reply) = codex.exec("SCRIPT:next continue", Some(&thread));
    assert_eq!(reply, "NEXT-DONE");
    let last = model.turn_requests().pop().unwrap();
    let input = last["input"].to_string();
    assert!(input.contains("CODEX-SUMMARY"), "the thread was compacted: {input}");
    assert!(!input.contains("\"function_call\""), "the compacted history holds no tool call: {input}");
    assert!(input.contains("CODEX-PLAN-42"), "the plan is injected after the compaction");
    let shown: Value = serde_json::from_str(&codex.show(&thread)).unwrap();
    assert_eq!(shown["session"]["compaction_count"], 1, "the compaction was counted once: {shown}");
}
