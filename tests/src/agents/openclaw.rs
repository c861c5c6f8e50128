//! The real openclaw for the end-to-end test: installed from `tests/openclaw/package-lock.json`
//! on the pinned Node 24, every directory it writes pointed into a temp dir, the scripted model
//! (`tests/scripted/chat.py` with [`script`]) as its OpenAI-compatible provider, gateways
//! started and killed by PID.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::process::{Process, free_port, wait_for};
use crate::runtimes::{node24, root, run};
use crate::scratchpad_binary;
use crate::scripted::Model;

/// The directory of `tests/openclaw` (package.json, lockfile, the test's log tool).
pub fn dir() -> PathBuf {
    root().join("tests/openclaw")
}

/// Serializes installs: the tests of this binary run in parallel.
static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The pinned Node 24 and openclaw's entry script, installed (`npm ci`) when missing.
pub fn install() -> (PathBuf, PathBuf) {
    let _guard = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let node = node24();
    let path = path_with(&node);
    let npm = system_npm(&node);
    // `npm ls` exits non-zero when openclaw is missing or not the locked version.
    let installed = Command::new(&npm)
        .args(["ls", "--depth=0"])
        .env("PATH", &path)
        .current_dir(dir())
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        run(
            Command::new(&npm).args(["ci", "--no-audit", "--no-fund"]).env("PATH", &path).current_dir(dir()),
            "installing tests/openclaw's locked openclaw (npm ci)",
        );
    }
    let entry = dir().join("node_modules/openclaw/openclaw.mjs");
    assert!(entry.exists(), "npm ci did not install {}", entry.display());
    (node, entry)
}

/// The system `npm` (the Node 24 wheel's own npm wrapper is broken): the first on PATH outside
/// the wheel's directory, resolved before PATH puts that directory first.
fn system_npm(node: &Path) -> PathBuf {
    let wheel = node.parent().unwrap();
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|dir| dir != wheel)
        .map(|dir| dir.join("npm"))
        .find(|npm| npm.is_file())
        .expect("npm is required to install openclaw (the system npm, run on the pinned Node 24)")
}

/// PATH with `node`'s directory first (the system npm then runs on it).
fn path_with(node: &Path) -> String {
    format!("{}:{}", node.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default())
}

/// The scripted model's script (`tests/scripted/rules.py`): a `SCRIPT:<name>` marker in the
/// user's message picks a script of tool calls, one per model call of the turn (OpenClaw adds a
/// message of its own after tool results, so the steps key on the marked message), ending in
/// `SCRIPT-DONE <name> after <n> tool calls`. Compaction gets a summary with every heading
/// OpenClaw's safeguard asks for.
pub fn script() -> Value {
    const PLAN: &str = "1. PLAN-MARKER-ALPHA reproduce the crash\n2. fix the parser";
    const NOTE: &str = "NOTE-MARKER-BRAVO: the crash is in parser.rs line 42";
    const SUMMARY: &str = "SUMMARY-OF-CONVERSATION: the user works on a parser crash.";
    const OBSERVATION_ID: &str = r#""scratchpad_id"\s*:\s*"([0-9a-f]{16})""#;
    let call = |name: &str, input: Value| json!({ "reply": [{ "tool_use": { "name": name, "input": input } }] });
    let done = |name: &str, calls: usize| {
        let text = format!("SCRIPT-DONE {name} after {calls} tool calls");
        json!({ "reply": [{ "text": text }] })
    };
    json!({
        "models": ["scripted"],
        "usage": { "input_tokens": 10, "output_tokens": 5 },
        "compact_summary": SUMMARY,
        "compact_echo": true,
        "rules": [
            { "when": "SCRIPT:plan", "steps": [
                call("session_scratchpad", json!({ "action": "set_plan", "content": PLAN })),
                call("session_scratchpad", json!({ "action": "append_notes", "content": NOTE })),
                done("plan", 2),
            ] },
            { "when": "SCRIPT:log", "steps": [
                // The test's fetch_log tool (log-tool/): OpenClaw's read and exec cap text at
                // ~50 KB, and the point is the whole 89 KB result.
                { "capture": r"LOG-PATH=(\S+)",
                  "reply": [{ "tool_use": { "name": "fetch_log", "input": { "path": "$1" } } }] },
                { "capture": OBSERVATION_ID, "reply": [{ "tool_use": { "name": "scratchpad_read",
                    "input": { "scratchpad_id": "$1", "mode": "head", "n": 120 } } }] },
                { "capture": OBSERVATION_ID, "reply": [{ "tool_use": { "name": "scratchpad_read",
                    "input": { "scratchpad_id": "$1", "mode": "grep", "pattern": "LAST_CRITICAL_EVENT" } } }] },
                done("log", 3),
            ] },
            { "when": "SCRIPT:overbudget", "steps": [
                call("session_scratchpad",
                     json!({ "action": "append_notes", "content": format!("OVERBUDGET {}", "x".repeat(5000)) })),
                done("overbudget", 1),
            ] },
            // Valid for the schema OpenClaw checks, refused by the component: set_plan needs content.
            { "when": "SCRIPT:malformed",
              "steps": [call("session_scratchpad", json!({ "action": "set_plan" })), done("malformed", 1)] },
            { "when": "SCRIPT:hostile", "steps": [call("probe_loop", json!({})), done("hostile", 1)] },
            // Any other script makes no tool call.
            { "when": "SCRIPT:",
              "steps": [{ "capture": r"SCRIPT:(\w+)", "reply": [{ "text": "SCRIPT-DONE $1 after 0 tool calls" }] }] },
            // No script (titles, greetings): a plain answer.
            { "when": "", "reply": [{ "text": SUMMARY }] },
        ],
    })
}

/// The requests `model` received whose conversation has a user message containing `marker`.
pub fn requests_for(model: &Model, marker: &str) -> Vec<Value> {
    model
        .requests()
        .into_iter()
        .filter(|request| messages(request).iter().any(|m| m["role"] == "user" && text_of(m).contains(marker)))
        .collect()
}

/// A request's messages.
pub fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().cloned().unwrap_or_default()
}

/// A message's text (`content` as a string or a list of text parts).
pub fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// The tool messages of a request after its user message carrying `marker` (this turn's), in
/// order.
pub fn tool_results(request: &Value, marker: &str) -> Vec<String> {
    let messages = messages(request);
    let start = messages.iter().rposition(|m| m["role"] == "user" && text_of(m).contains(marker)).unwrap_or(0);
    messages[start..].iter().filter(|m| m["role"] == "tool").map(text_of).collect()
}

/// One OpenClaw installation in a temp dir: state, config, home, tmp and workspace.
pub struct OpenClaw {
    pub node: PathBuf,
    pub entry: PathBuf,
    pub root: PathBuf,
    pub gateway_port: u16,
    pub token: String,
}

impl OpenClaw {
    pub fn new(root: &Path) -> OpenClaw {
        let (node, entry) = install();
        for sub in ["state", "home", "tmp", "workspace"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        OpenClaw { node, entry, root: root.to_owned(), gateway_port: free_port(), token: "e2e-token".into() }
    }

    pub fn state(&self) -> PathBuf {
        self.root.join("state")
    }

    pub fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }

    /// Writes `openclaw.json`: the scripted model at `model_url` as the only provider, the
    /// gateway, the test's log tool (`log-tool/`), and the plugin at `plugin_dir` with
    /// `plugin_config`.
    pub fn configure(&self, model_url: &str, plugin_dir: Option<&Path>, plugin_config: Value) {
        let mut config = json!({
            "logging": { "file": self.root.join("openclaw.log") },
            "gateway": { "mode": "local", "port": self.gateway_port, "bind": "loopback",
                         "auth": { "mode": "token", "token": self.token } },
            "agents": { "defaults": { "model": { "primary": "scripted/scripted" }, "workspace": self.workspace() } },
            "models": { "mode": "merge", "providers": { "scripted": {
                "baseUrl": format!("{model_url}/v1"), "apiKey": "sk-scripted",
                "api": "openai-completions",
                "models": [{ "id": "scripted", "name": "Scripted", "reasoning": false, "input": ["text"],
                             "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 },
                             "contextWindow": 200000, "maxTokens": 8192 }] } } },
        });
        if let Some(plugin_dir) = plugin_dir {
            config["plugins"] = json!({
                "load": { "paths": [plugin_dir, self::dir().join("log-tool")] },
                "entries": {
                    "scratchpad": { "enabled": true, "hooks": { "allowConversationAccess": true },
                                    "config": plugin_config },
                    "e2e-log-tool": { "enabled": true },
                },
            });
        }
        std::fs::write(self.state().join("openclaw.json"), serde_json::to_string_pretty(&config).unwrap()).unwrap();
    }

    /// `node openclaw.mjs ARGS` with every directory OpenClaw writes in this installation.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.node);
        command
            .arg(&self.entry)
            .args(args)
            .env("PATH", path_with(&self.node))
            .env("OPENCLAW_STATE_DIR", self.state())
            .env("OPENCLAW_CONFIG_PATH", self.state().join("openclaw.json"))
            .env("HOME", self.root.join("home"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("OPENCLAW_GATEWAY_TOKEN", &self.token)
            .env("NO_COLOR", "1")
            .current_dir(self.workspace())
            .stdin(Stdio::null());
        command
    }

    /// A gateway on `gateway_port`, ready once the port accepts connections and answers health.
    pub fn gateway(&self, name: &str) -> Process {
        let log = std::fs::File::create(self.root.join(format!("{name}.log"))).unwrap();
        let port = self.gateway_port.to_string();
        let child = self
            .command(&[
                "gateway",
                "run",
                "--port",
                &port,
                "--bind",
                "loopback",
                "--auth",
                "token",
                "--token",
                &self.token,
            ])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting the openclaw gateway");
        let process = Process(child);
        // The port opens before the gateway can run turns: wait for its `ready` line.
        let log = self.root.join(format!("{name}.log"));
        wait_for(Duration::from_secs(120), "the gateway's `[gateway] ready` line", || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            strip_ansi(&text).contains("[gateway] ready").then_some(())
        });
        TcpStream::connect(("127.0.0.1", self.gateway_port)).expect("the ready gateway listens");
        process
    }

    /// One agent turn through the gateway; its JSON output.
    pub fn turn(&self, session_key: &str, message: &str) -> Value {
        let output = run(
            &mut self.command(&[
                "agent",
                "--agent",
                "main",
                "--session-key",
                session_key,
                "--message",
                message,
                "--json",
            ]),
            &format!("openclaw agent turn {message:?}"),
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let start = stdout.find('{').unwrap_or_else(|| panic!("no JSON in the turn's output:\n{stdout}"));
        serde_json::from_str(&stdout[start..])
            .unwrap_or_else(|e| panic!("the turn's output is not JSON ({e}):\n{stdout}"))
    }
}

/// `scratchpad --db DB [--config FILE] --json ARGS`, parsed.
pub fn scratchpad_json(db: &Path, args: &[&str]) -> Value {
    let output = run(Command::new(scratchpad_binary()).arg("--db").arg(db).arg("--json").args(args), "scratchpad");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `text` without ANSI colour sequences.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs `command`, asserting it succeeded.
pub fn run_ok(mut command: Command, what: &str) {
    run(&mut command, what);
}

/// Adds the tools of the components `config` loads to the manifest of the plugin copy at
/// `plugin_dir` (`scripts/declare-tools.mjs`, as a user of a third-party component does).
pub fn declare_tools(openclaw: &OpenClaw, plugin_dir: &Path, config: &Value) {
    use std::io::Write as _;
    let mut child = Command::new(&openclaw.node)
        .arg(plugin_dir.join("scripts/declare-tools.mjs"))
        .arg(plugin_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(config.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "declare-tools.mjs: {}", String::from_utf8_lossy(&output.stderr));
}

/// Every record OpenClaw stored in its transcript store, as text.
pub fn transcript_text(store: &Path) -> String {
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare("SELECT event_json FROM transcript_events WHERE event_json IS NOT NULL").unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

/// Appends a `custom` record (`custom_type`, string `data`) to session `key`'s current window
/// in OpenClaw's store, as OpenClaw's own extensions write them.
pub fn append_custom_record(store: &Path, key: &str, custom_type: &str, data: &str) {
    let conn = rusqlite::Connection::open(store).unwrap();
    let window: String = conn
        .query_row("SELECT current_session_id FROM session_nodes WHERE session_key = ?1", [key], |r| r.get(0))
        .unwrap();
    let seq: i64 = conn
        .query_row("SELECT COALESCE(MAX(seq), -1) + 1 FROM transcript_events WHERE session_id = ?1", [&window], |r| {
            r.get(0)
        })
        .unwrap();
    let record = json!({ "type": "custom", "customType": custom_type, "data": data, "id": format!("e2e-{seq}"),
                         "parentId": null, "timestamp": "2026-11-22T23:59:00.000Z" });
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at)
         VALUES (?1, ?2, ?3, CAST(unixepoch('subsec') * 1000 AS INTEGER))",
        rusqlite::params![window, seq, record.to_string()],
    )
    .unwrap();
}
