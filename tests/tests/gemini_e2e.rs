//! Gemini CLI runs the components: the real `gemini` (pinned 0.61.0, headless `gemini -p`) set
//! up with `scratchpad setup gemini` on settings of the user's own, against a scripted Gemini
//! API on 127.0.0.1 (`tests/scripted/gemini.py`). Each scenario asserts on markers in what the
//! model received and on `scratchpad show`.

use scratchpad_tests::agents::gemini::{Gemini, PREFIX};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

fn tool_use(tool: &str, input: Value) -> Value {
    json!({ "tool_use": { "name": format!("{PREFIX}{tool}"), "input": input } })
}

/// The text of a request's last user turn: every content after the model's last one.
fn last_turn(request: &Value) -> String {
    let contents = request["contents"].as_array().cloned().unwrap_or_default();
    let start = contents.iter().rposition(|c| c["role"] == "model").map_or(0, |at| at + 1);
    contents[start..].iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

/// The plan is written with the scratchpad's tool through the MCP server, stored in Gemini
/// CLI's session (which the hook named in the call), injected on the next run of the session
/// (`--resume`, a new process), and invisible to another session.
#[test]
fn gemini_keeps_the_plan_across_runs_per_session() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": "1. GEMINI-PLAN-42" }))] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        { "when": "SCRIPT:next", "reply": [{ "text": "NEXT-DONE" }] },
        { "when": "SCRIPT:other", "reply": [{ "text": "OTHER-DONE" }] },
    ] });
    let model = Model::start("gemini", dir.path(), &script);
    let gemini = Gemini::new(dir.path(), &model);

    let first = gemini.run("SCRIPT:plan make a plan", None);
    assert_eq!(first.response, "PLAN-SAVED", "the tool's result reached the model");
    let request = model.turn_requests().remove(0).to_string();
    assert!(request.contains("## Session Scratchpad"), "the guidance reached the model (the server's instructions)");
    assert_eq!(request.matches("## Session Scratchpad").count(), 1, "once: {request}");
    assert!(request.contains(&format!("{PREFIX}session_scratchpad")), "naming the tool as the model sees it");
    let shown = gemini.show(&first.session);
    assert!(shown.contains("GEMINI-PLAN-42"), "the plan is in Gemini CLI's session: {shown}");
    // The server was started with no session (Gemini CLI tells it none): its own is untouched.
    assert!(!gemini.show("mcp").contains("GEMINI-PLAN-42"), "the call acted in Gemini CLI's session only");

    let next = gemini.run("SCRIPT:next continue", Some(&first.session));
    assert_eq!((next.session.as_str(), next.response.as_str()), (first.session.as_str(), "NEXT-DONE"));
    let turn = last_turn(&model.turn_requests().pop().unwrap());
    assert!(turn.contains("<hook_context>"), "{turn}");
    assert_eq!(
        turn.matches("## Plan\\n1. GEMINI-PLAN-42").count(),
        1,
        "the plan is injected once in the resumed run: {turn}"
    );

    let other = gemini.run("SCRIPT:other hello", None);
    assert_ne!(other.session, first.session);
    assert_eq!(other.response, "OTHER-DONE");
    let turn = last_turn(&model.turn_requests().pop().unwrap());
    // Another session of the same project (the same directory) has no plan of its own; recall
    // offers it the first one's, and never adopts it.
    assert!(!turn.contains("## Plan\\n1. GEMINI-PLAN-42"), "another session does not have the plan: {turn}");
    assert!(turn.contains("offered, not adopted"), "recall offers it: {turn}");
    assert!(!gemini.show(&other.session).contains("GEMINI-PLAN-42"), "nor does it store it");
}

/// A missing `scratchpad` (hooks and server) leaves Gemini CLI's turn as it would be without
/// the scratchpad; a component that loops forever fails its hook at the deadline and the turn
/// completes.
#[test]
fn a_missing_binary_or_a_failing_hook_never_breaks_a_gemini_turn() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [{ "when": "SCRIPT:hi", "reply": [{ "text": "HELLO-BACK" }] }] });
    let model = Model::start("gemini", dir.path(), &script);

    let gone = dir.path().join("bin/scratchpad");
    std::fs::create_dir_all(gone.parent().unwrap()).unwrap();
    std::fs::copy(scratchpad_tests::scratchpad_binary(), &gone).unwrap();
    let gemini = Gemini::with_binary(dir.path(), &model, &gone);
    std::fs::remove_file(&gone).unwrap();
    let run = gemini.run("SCRIPT:hi there", None);
    assert_eq!(run.response, "HELLO-BACK", "the turn completed without the binary");
    let said = String::from_utf8_lossy(&run.output.stderr);
    assert!(said.contains("No such file or directory"), "each hook said why, as a warning: {said}");
    let request = model.turn_requests().pop().unwrap().to_string();
    assert!(!request.contains("## Session Scratchpad"), "no scratchpad without the binary");

    let dir = tempfile::tempdir().unwrap();
    let model = Model::start("gemini", dir.path(), &script);
    let probe = scratchpad_tests::components::PROBE_PATH;
    std::fs::write(
        dir.path().join("scratchpad.toml"),
        format!(
            "[[plugin]]\nname = \"scratchpad\"\n[[plugin]]\nname = \"probe\"\npath = {probe:?}\nallow_unsigned = true\ngrants = [\"inject\", \"storage\", \"config\"]\n[plugin.config]\nqueryMode = \"loop\"\npowers = [\"inject\", \"storage\", \"config\"]\n"
        ),
    )
    .unwrap();
    let gemini = Gemini::new(dir.path(), &model);
    let run = gemini.run("SCRIPT:hi there", None);
    assert_eq!(run.response, "HELLO-BACK", "the turn completed");
    let said = String::from_utf8_lossy(&run.output.stderr);
    assert!(said.contains("scratchpad hook: plugin `probe` timed out"), "the hook failed, and said so: {said}");
    assert!(!gemini.show(&run.session).contains("query-was-here"), "the looping call's write was discarded");
}

/// Gemini CLI compresses the history (a reply reporting over half the model's window, then
/// another model call in the same process): the compressed history, which the resumed session
/// keeps, no longer holds the plan's tool call, and the next run still gets the plan.
#[test]
fn the_plan_survives_a_gemini_compression() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({
        "rules": [
            { "when": "SCRIPT:next", "reply": [{ "text": "NEXT-DONE" }] },
            { "when": "SCRIPT:plan", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": "1. GEMINI-PLAN-42" }))] },
            { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
            { "when": "SCRIPT:big", "usage": { "input_tokens": 600_000 }, "reply": [tool_use("session_scratchpad", json!({ "action": "refs.add", "ref": "BIG-REF" }))] },
            { "when": "BIG-REF", "reply": [{ "text": "BIG-DONE" }] },
        ],
        "compact_summary": "GEMINI-SUMMARY: a plan was made.",
    });
    let model = Model::start("gemini", dir.path(), &script);
    let gemini = Gemini::new(dir.path(), &model);
    let first = gemini.run("SCRIPT:plan make a plan", None);
    assert_eq!(first.response, "PLAN-SAVED");
    let big = gemini.run("SCRIPT:big go on", Some(&first.session));
    assert_eq!(big.response, "BIG-DONE");
    let compressions = model.requests().iter().filter(|r| r.to_string().contains("state_snapshot")).count();
    assert!(compressions > 0, "the history was compressed");

    let next = gemini.run("SCRIPT:next continue", Some(&first.session));
    assert_eq!(next.response, "NEXT-DONE");
    let last = model.turn_requests().pop().unwrap();
    let contents = last["contents"].to_string();
    assert!(contents.contains("GEMINI-SUMMARY"), "the resumed history is the compressed one: {contents}");
    let set_plan_calls = last["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["functionCall"]["args"]["action"] == "set_plan")
        .count();
    assert_eq!(set_plan_calls, 0, "the compressed history holds no set_plan call: {contents}");
    let turn = last_turn(&last);
    assert!(turn.contains("## Plan\\n1. GEMINI-PLAN-42"), "the plan is injected after the compression: {turn}");
    assert!(gemini.show(&first.session).contains("BIG-REF"), "the call after the report acted in the session");
}
