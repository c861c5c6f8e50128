//! The real opencode for the end-to-end tests: the native package `opencode-linux-x64`, pinned
//! in `tests/opencode/package-lock.json` and installed with the system npm on the pinned Node 24
//! when missing (headless `opencode run`), `HOME` and the XDG directories in a temp dir, the
//! plugin `integrations/opencode` listed in the project's `opencode.json` the way its users list
//! plugins, and the scripted Chat Completions API (`tests/scripted/chat.py`) as a custom provider.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::runtimes::{npm_package_on_node24, root, run};
use crate::scratchpad_binary;
use crate::scripted::Model;

/// One user's opencode: `HOME` and the XDG directories in `home`, a project in `project` whose
/// `opencode.json` names the scripted model and lists the plugin with `options`. (A fresh
/// `HOME` costs opencode an npm install of its plugin API on the first run: share one.)
pub struct Opencode {
    binary: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Opencode {
    pub fn new(home: &Path, project: &Path, model: &Model, options: Value) -> Opencode {
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
    pub fn run(&self, prompt: &str, session: Option<&str>) -> (String, String) {
        let run = self.run_logged(prompt, session);
        (run.session, run.reply)
    }

    /// `run`, with opencode's log (the plugin logs through it), printed to stderr: its log file
    /// loses what comes last in a run.
    pub fn run_logged(&self, prompt: &str, session: Option<&str>) -> Run {
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
pub struct Run {
    pub session: String,
    pub reply: String,
    pub log: Vec<String>,
}

/// The plugin's options: this build's binary, the database, the host's configuration file
/// (`cache_dir`: the components compiled once for the whole suite, and `extra`).
pub fn options(dir: &Path, extra: &str) -> Value {
    let config = dir.join("scratchpad.toml");
    let cache = crate::shared_cache();
    std::fs::write(&config, format!("cache_dir = {:?}\n{extra}", cache.display().to_string())).unwrap();
    json!({ "binary": scratchpad_binary(), "database": dir.join("scratchpad.db"), "config": config })
}

pub fn show(dir: &Path, session: &str) -> String {
    let output = run(
        Command::new(scratchpad_binary()).arg("--db").arg(dir.join("scratchpad.db")).args(["show", session]),
        "scratchpad show",
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The system prompt of a request (every system message's text).
pub fn system(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "system").map(|m| m["content"].to_string()).collect::<Vec<_>>().join("\n")
}
