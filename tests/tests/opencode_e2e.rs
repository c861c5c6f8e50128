//! opencode runs the components: the real `opencode` (1.18.33: its native package
//! `opencode-linux-x64`, pinned in `tests/opencode/package-lock.json`; headless `opencode run`) with the plugin
//! `integrations/opencode` listed in its `opencode.json` the way its users list plugins, against
//! a scripted Chat Completions API on 127.0.0.1 (`tests/scripted/chat.py`) as a custom provider.
//! Each scenario asserts on what the model received and on `scratchpad show`.

use std::path::{Path, PathBuf};
use std::process::Command;

use scratchpad_tests::runtimes::{npm_package_on_node24, root, run};
use scratchpad_tests::scratchpad_binary;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

const PLAN: &str = "1. OPENCODE-PLAN-7";
const WARNING: &str = "will be compacted";

fn tool_use(name: &str, input: Value) -> Value {
    json!({ "tool_use": { "name": name, "input": input } })
}

/// One user's opencode: `HOME` and the XDG directories in `home`, a project in `project` whose
/// `opencode.json` names the scripted model and lists the plugin with `options`. (A fresh
/// `HOME` costs opencode an npm install of its plugin API on the first run: share one.)
struct Opencode {
    binary: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Opencode {
    fn new(home: &Path, project: &Path, model: &Model, options: Value) -> Opencode {
        // The native binary of the pinned package (no launcher, no Node needed to run it), and
        // the plugin's own dependency (`@opencode-ai/plugin`, for its tools' schemas).
        let (binary, _) = npm_package_on_node24(
            "tests/opencode",
            "node_modules/opencode-linux-x64/bin/opencode",
            "the pinned opencode (opencode-linux-x64)",
        );
        npm_package_on_node24(
            "integrations/opencode",
            "node_modules/@opencode-ai/plugin/package.json",
            "the opencode plugin's dependencies",
        );
        std::fs::create_dir_all(project).unwrap();
        let config = json!({
            "$schema": "https://opencode.ai/config.json",
            "provider": { "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": { "baseURL": format!("{}/v1", model.url), "apiKey": "sk-test" },
                // A small window: a turn that reports 60,000 input tokens makes opencode compact.
                "models": { "m1": { "name": "M1", "limit": { "context": 32000, "output": 1000 } } },
            } },
            "model": "scripted/m1",
            "autoupdate": false,
            "share": "disabled",
            "plugin": [[root().join("integrations/opencode"), options]],
        });
        std::fs::write(project.join("opencode.json"), serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        Opencode { binary, home: home.to_owned(), project: project.to_owned() }
    }

    /// `opencode run --format json [--session ID] PROMPT`: the session id and the reply's last text.
    fn run(&self, prompt: &str, session: Option<&str>) -> (String, String) {
        let run = self.run_logged(prompt, session);
        (run.session, run.reply)
    }

    /// `run`, with opencode's log (the plugin logs through it), printed to stderr: its log file
    /// loses what comes last in a run.
    fn run_logged(&self, prompt: &str, session: Option<&str>) -> Run {
        let mut command = Command::new(&self.binary);
        command.args(["run", "--print-logs", "--format", "json", "--title", "scripted"]);
        if let Some(session) = session {
            command.args(["--session", session]);
        }
        let output = run(
            command
                .arg(prompt)
                .current_dir(&self.project)
                // opencode takes its project from PWD, which a child inherits unchanged.
                .env("PWD", &self.project)
                .env("HOME", &self.home)
                .env("XDG_CONFIG_HOME", self.home.join(".config"))
                .env("XDG_DATA_HOME", self.home.join(".local/share"))
                .env("XDG_CACHE_HOME", self.home.join(".cache"))
                .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
                .env_remove("SCRATCHPAD_BIN"),
            "opencode run",
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let events: Vec<Value> = stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
        let session = events.iter().find_map(|e| e["sessionID"].as_str()).expect("opencode printed its session");
        let reply = events.iter().rev().find_map(|e| e["part"]["text"].as_str()).unwrap_or_default();
        let log = String::from_utf8_lossy(&output.stderr);
        let log = log.lines().filter(|line| line.contains("scratchpad:")).map(str::to_owned).collect();
        Run { session: session.to_owned(), reply: reply.to_owned(), log }
    }
}

/// One `opencode run`: its session, the reply's last text, and the plugin's lines of its log.
struct Run {
    session: String,
    reply: String,
    log: Vec<String>,
}

/// The plugin's options: this build's binary, the database, the host's configuration file
/// (`cache_dir`: the components compiled once for the whole suite, and `extra`).
fn options(dir: &Path, extra: &str) -> Value {
    let config = dir.join("scratchpad.toml");
    let cache = scratchpad_tests::shared_cache();
    std::fs::write(&config, format!("cache_dir = {:?}\n{extra}", cache.display().to_string())).unwrap();
    json!({ "binary": scratchpad_binary(), "database": dir.join("scratchpad.db"), "config": config })
}

fn show(dir: &Path, session: &str) -> String {
    let output = run(
        Command::new(scratchpad_binary()).arg("--db").arg(dir.join("scratchpad.db")).args(["show", session]),
        "scratchpad show",
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The system prompt of a request (every system message's text).
fn system(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "system").map(|m| m["content"].to_string()).collect::<Vec<_>>().join("\n")
}

/// The plan is written with the scratchpad's tool, kept in opencode's session, injected into
/// every later request of that session (in a new `opencode run --session` process, and after
/// opencode compacted the session, whose compaction prompt got the session notepad's warning); another
/// session does not see it, and an append over the budget reaches the model as the refusal.
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
    assert!(!system(&model.turn_requests().pop().unwrap()).contains(PLAN), "another session does not see the plan");
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
    let probe = format!(
        "[[plugin]]\nname = \"scratchpad\"\n[[plugin]]\nname = \"probe\"\npath = {:?}\nallow_unsigned = true\n\
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
