//! opencode runs the components: the real `opencode` (1.18.33: its native package
//! `opencode-linux-x64`, pinned in `tests/opencode/package-lock.json`; headless `opencode run`) with the plugin
//! `integrations/opencode` listed in its `opencode.json` the way its users list plugins, against
//! a scripted Chat Completions API on 127.0.0.1 (`tests/scripted/chat.py`) as a custom provider.
//! Each scenario asserts on what the model received and on `scratchpad show`.

use std::process::Command;

use scratchpad_tests::agents::opencode::{Opencode, options, show, system};
use scratchpad_tests::runtimes::root;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const PLAN: &str = "1. OPENCODE-PLAN-7";
const WARNING: &str = "will be compacted";

fn tool_use(name: &str, input: Value) -> Value {
    json!({ "tool_use": { "name": name, "input": input } })
}

/// The plan is written with the scratchpad's tool, kept in opencode's session, injected into
/// every later request of that session (in a new `opencode run --session` process, and after
/// opencode compacted the session, whose compaction prompt got the session notepad's warning); another
/// session does not have it as its own (recall offers it, the sessions sharing the working
/// directory's project), and an append over the budget reaches the model as the refusal.
#[test]
fn opencode_keeps_the_plan_across_runs_and_compaction_per_session() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "compact_summary": "SUMMARY-OF-EARLIER-WORK", "rules": [
        { "when": "SCRIPT:plan", "reply": [tool_use("session_scratchpad", json!({ "action": "set_plan", "content": PLAN }))] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        { "when": "SCRIPT:next", "reply": [{ "text": "NEXT-DONE" }] },
        { "when": "SCRIPT:overflow", "reply": [tool_use("session_scratchpad", json!({ "action": "append_notes", "content": "y".repeat(5000) }))] },
        { "when": "append_notes rejected", "reply": [{ "text": "REFUSAL-SEEN" }] },
        { "when": "SCRIPT:big", "usage": { "input_tokens": 60000 }, "reply": [{ "text": "BIG-DONE" }] },
        { "when": "SCRIPT:after", "reply": [{ "text": "AFTER-DONE" }] },
        { "when": "SCRIPT:log", "capture": "LOG-PATH=([^\\s\"]+)", "reply": [tool_use("read", json!({ "filePath": "$1" }))] },
        { "when": "event number 1500", "reply": [{ "text": "FOUND-1500" }] },
        { "when": "scratchpad_id", "capture": "\"scratchpad_id\\\\?\":\\s*\\\\?\"([^\"\\\\]+)",
          "reply": [tool_use("scratchpad_read", json!({ "scratchpad_id": "$1", "mode": "grep", "pattern": "event number 1500" }))] },
    ] });
    let model = Model::start("chat", dir.path(), &script);
    let opencode =
        Opencode::new(&dir.path().join("home"), &dir.path().join("project"), &model, options(dir.path(), ""));

    let (session, reply) = opencode.run("SCRIPT:plan make a plan", None);
    assert_eq!(reply, "PLAN-SAVED");
    let first = model.turn_requests().remove(0);
    assert!(system(&first).contains("## Session Scratchpad"), "the guidance reached the model");
    for request in model.turn_requests() {
        let seen = request.to_string().matches("## Session Scratchpad").count();
        assert_eq!(seen, 1, "the guidance goes once in every model call: {request}");
    }
    assert!(
        system(&first).contains("session_scratchpad") && !system(&first).contains("session.scratchpad"),
        "naming the tool as offered"
    );
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert!(
        tools.contains(&"session_scratchpad") && tools.contains(&"bash"),
        "the components' tools beside opencode's: {tools:?}"
    );
    assert!(show(dir.path(), &session).contains(PLAN), "the plan is in opencode's session");

    let (same, reply) = opencode.run("SCRIPT:next go on", Some(&session));
    assert_eq!((same.as_str(), reply.as_str()), (session.as_str(), "NEXT-DONE"));
    assert!(system(&model.turn_requests().pop().unwrap()).contains(PLAN), "a new process injects the plan");

    let (other, reply) = opencode.run("SCRIPT:overflow note this", None);
    assert_ne!(other, session);
    assert_eq!(reply, "REFUSAL-SEEN", "the refusal reached the model");
    // Another session has no plan of its own; it is offered the first one's, as what an earlier
    // session of the checkout (its project, from opencode's working directory) left.
    let offered = system(&model.turn_requests().pop().unwrap());
    assert!(!offered.contains(&format!("## Plan\\n{PLAN}")), "another session does not have the plan as its own");
    assert!(
        offered.contains("## What earlier sessions of this project left")
            && offered.contains("offered, not adopted")
            && offered.contains(PLAN),
        "recall: the session is in the working directory's project"
    );
    assert!(!show(dir.path(), &other).contains("yyyyyyyyyy"), "the refused append changed nothing");

    // A turn that reports more tokens than the window holds: opencode compacts the session.
    // (opencode then continues on its own, with a message of its own after the summary.)
    opencode.run("SCRIPT:big read everything", Some(&session));
    let summaries: Vec<Value> =
        model.requests().into_iter().filter(|r| r["tools"].as_array().is_none_or(Vec::is_empty)).collect();
    let compaction =
        summaries.iter().find(|r| r.to_string().contains("summariz")).expect("opencode asked for a summary");
    assert!(compaction.to_string().contains(WARNING), "the session notepad's warning joined the compaction prompt");
    assert!(show(dir.path(), &session).contains("compactions 1"), "the compaction was counted once");

    // The large-observation store: opencode's `read` of an 89 KB log reaches the model as the synthetic observation,
    // and `scratchpad_read` greps the offloaded text.
    let log = dir.path().join("project/big_log.txt");
    std::fs::write(&log, scratchpad_tests::big_log()).unwrap();
    let (_, reply) = opencode.run(&format!("SCRIPT:log LOG-PATH={}", log.display()), Some(&session));
    assert_eq!(reply, "FOUND-1500", "the model grepped the offloaded log");
    let observation = model
        .turn_requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .find(|content| content.contains("scratchpad_id"))
        .expect("the model received the read's result");
    assert!(
        observation.contains("scratchpad_id") && observation.len() < 20_000,
        "the synthetic observation, not the log"
    );

    let (_, reply) = opencode.run("SCRIPT:after what next", Some(&session));
    assert_eq!(reply, "AFTER-DONE");
    let after = model.turn_requests().pop().unwrap();
    assert!(after.to_string().contains("SUMMARY-OF-EARLIER-WORK"), "the history was compacted");
    assert!(!after["messages"].to_string().contains("Plan set."), "the plan's tool call is gone from the history");
    assert!(system(&after).contains(PLAN), "yet the model still gets the plan");
}

/// The plugin's failures cost its contribution, never the turn: a binary that does not exist,
/// and a component whose `before_query` loops forever (it ends at its deadline, logged).
#[test]
fn a_failing_plugin_never_breaks_an_opencode_turn() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [{ "when": "SCRIPT:hi", "reply": [{ "text": "HELLO-BACK" }] }] });
    let model = Model::start("chat", dir.path(), &script);

    let missing = dir.path().join("missing");
    std::fs::create_dir_all(&missing).unwrap();
    let mut gone = options(&missing, "");
    gone["binary"] = json!(missing.join("no-such-scratchpad"));
    let home = dir.path().join("home");
    let opencode = Opencode::new(&home, &missing.join("project"), &model, gone);
    let run = opencode.run_logged("SCRIPT:hi there", None);
    assert_eq!(run.reply, "HELLO-BACK", "the turn completed without the plugin");
    assert!(run.log.iter().any(|line| line.contains("no-such-scratchpad")), "the failure was logged: {:#?}", run.log);

    let looping = dir.path().join("looping");
    std::fs::create_dir_all(&looping).unwrap();
    // The looping probe's deadline is what is tested. The scratchpad component's call runs
    // before it, and on a two-core machine running the whole suite it once passed its default
    // 500 ms (a wall-clock deadline), failing the hook in its name before the probe ran: it
    // gets room here.
    let probe = format!(
        "[[plugin]]\nname = \"scratchpad\"\n[plugin.limits]\ncall_timeout_ms = 10000\n\
         [[plugin]]\nname = \"probe\"\npath = {:?}\nallow_unsigned = true\n\
         grants = [\"inject\", \"storage\", \"config\"]\n[plugin.config]\npowers = [\"inject\", \"storage\", \"config\"]\n\
         queryMode = \"loop\"\n[plugin.limits]\ncall_timeout_ms = 300\n",
        scratchpad_tests::components::PROBE_PATH
    );
    let opencode = Opencode::new(&home, &looping.join("project"), &model, options(&looping, &probe));
    let run = opencode.run_logged("SCRIPT:hi again", None);
    assert_eq!(run.reply, "HELLO-BACK", "the turn completed while the component looped");
    let failed = "failed: component `probe` failed in before-query: timed out after 300 ms";
    assert!(run.log.iter().any(|line| line.contains(failed)), "the failure was logged: {:#?}", run.log);
    assert!(show(&looping, &run.session).contains("turns 1"), "the turn reached the host all the same");
}

/// Bad plugin options are refused with one message naming every offending key (the plugin then
/// logs it and offers nothing; opencode goes on).
#[test]
fn bad_plugin_options_are_one_clear_error_naming_every_offending_key() {
    let options = root().join("integrations/opencode/src/options.js");
    let script = format!(
        "import {{ resolveOptions }} from {:?};\n\
         try {{ resolveOptions({{ databse: 'x', binary: '', requestTimeoutMs: 5 }}); console.log('accepted'); }}\n\
         catch (e) {{ console.log(e.message); }}",
        options.to_str().unwrap()
    );
    let output = Command::new(scratchpad_tests::runtimes::node24())
        .args(["--input-type=module", "-e", &script])
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stdout);
    for needle in
        ["unknown key `databse`", "`binary` must be a non-empty string", "`requestTimeoutMs` must be an integer >= 100"]
    {
        assert!(message.contains(needle), "missing {needle:?} in {message}");
    }
}
