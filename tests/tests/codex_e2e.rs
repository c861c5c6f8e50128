//! Codex CLI runs the components: the real `codex` (pinned 0.169.0, headless `codex exec`) with
//! `integrations/codex/config.toml` appended to its configuration after a model provider that
//! points at a scripted Responses API on 127.0.0.1 (`tests/scripted/responses.py`). Each
//! scenario asserts on markers in what the model received and on `scratchpad show`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use scratchpad_tests::runtimes::{npm_package_on_node24, root};
use scratchpad_tests::scratchpad_binary;
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};

/// The namespace tool Codex offers the server's tools in; hooks and texts name a tool
/// `mcp__scratchpad__<tool>`.
const NAMESPACE: &str = "mcp__scratchpad";

/// One user's Codex: `CODEX_HOME` and `HOME` in a temp dir, the scripted model, the database.
struct Codex {
    binary: PathBuf,
    path: OsString,
    dir: PathBuf,
}

impl Codex {
    /// Installs the pinned Codex when missing and writes its configuration: the scripted model
    /// as its provider, then the integration's fragment, as a user appends it; `extra` (more
    /// TOML, e.g. a compaction limit) goes before the fragment.
    fn new(dir: &Path, model: &Model, extra: &str) -> Codex {
        // The package's launcher (a Node script run on the PATH's Node 24) starts its native binary.
        let (binary, node_path) =
            npm_package_on_node24("tests/codex", "node_modules/.bin/codex", "the pinned Codex CLI (@openai/codex)");
        let home = dir.join("codex-home");
        std::fs::create_dir_all(&home).unwrap();
        let provider = format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n{extra}\n[model_providers.scripted]\nname = \"scripted\"\n\
             base_url = \"{}/v1\"\nenv_key = \"SCRIPTED_MODEL_KEY\"\nwire_api = \"responses\"\n\n",
            model.url
        );
        let fragment = std::fs::read_to_string(root().join("integrations/codex/config.toml")).unwrap();
        std::fs::write(home.join("config.toml"), provider + &fragment).unwrap();
        // Codex sends its first request once its MCP servers started or timed out: compile the
        // components into the shared cache first, so a cold cache never races the first turn.
        let warm = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(dir.join("scratchpad.db"))
            .arg("plugins")
            .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
            .output()
            .unwrap();
        assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
        // The built `scratchpad` first on PATH: the fragment runs `scratchpad` by name.
        let mut path = OsString::from(scratchpad_binary().parent().unwrap());
        path.push(":");
        path.push(node_path);
        Codex { binary, path, dir: dir.to_owned() }
    }

    fn database(&self) -> PathBuf {
        self.dir.join("scratchpad.db")
    }

    /// `codex exec [resume ID] PROMPT --json`: the thread id and the final agent message.
    fn exec(&self, prompt: &str, resume: Option<&str>) -> (String, String) {
        let mut command = Command::new(&self.binary);
        command.arg("exec");
        if let Some(id) = resume {
            command.args(["resume", id]);
        }
        command
            .args(["--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--json", prompt])
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.dir.join("home"))
            .env("CODEX_HOME", self.dir.join("codex-home"))
            .env("SCRIPTED_MODEL_KEY", "sk-test-scripted")
            .env("SCRATCHPAD_DATABASE_URL", self.database())
            .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        let config = self.dir.join("scratchpad.toml");
        if config.exists() {
            command.env("SCRATCHPAD_CONFIG", &config);
        }
        std::fs::create_dir_all(self.dir.join("home")).unwrap();
        let output = command.output().expect("running codex");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "codex exec failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let thread = events.iter().find_map(|e| e["thread_id"].as_str()).expect("a thread id").to_owned();
        let last = events
            .iter()
            .rev()
            .filter(|e| e["item"]["type"] == "agent_message")
            .find_map(|e| e["item"]["text"].as_str())
            .unwrap_or_default()
            .to_owned();
        (thread, last)
    }

    fn show(&self, session: &str) -> String {
        let output = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(self.database())
            .args(["--json", "show", session])
            .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

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
    assert!(first.contains(&format!("{NAMESPACE}__session_scratchpad")), "naming the tool as the model sees it");
    assert!(codex.show(&thread).contains("CODEX-PLAN-42"), "the plan is in the thread's session");

    codex.exec("SCRIPT:next continue", Some(&thread));
    let last = model.turn_requests().pop().unwrap().to_string();
    assert!(last.contains("CODEX-PLAN-42"), "the plan is injected in the resumed thread's next turn");

    let (other, reply) = codex.exec("SCRIPT:overflow note this", None);
    assert_ne!(other, thread);
    assert_eq!(reply, "REFUSAL-SEEN", "the refusal reached the model");
    let last = model.turn_requests().pop().unwrap().to_string();
    assert!(!last.contains("CODEX-PLAN-42"), "another thread does not see the plan");
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
