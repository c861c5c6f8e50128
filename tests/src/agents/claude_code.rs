//! The real Claude Code for the end-to-end tests: `@anthropic-ai/claude-code`, pinned in
//! `tests/claude-code/package-lock.json` (its native binary comes in an optional dependency),
//! installed with the system npm on the pinned Node 24 when missing; every directory it writes
//! in a temp dir (`HOME`); the scripted Anthropic Messages API (`tests/scripted/anthropic.py`, through
//! `scratchpad_tests::scripted`); the plugin package `integrations/claude-code`
//! loaded with `--plugin-dir`, running the `scratchpad` binary this build made.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::runtimes::{npm_package_on_node24, root};
use crate::scratchpad_binary;
use crate::scripted::Model;

/// The model-visible prefix of the plugin's MCP tools (plugin `scratchpad`, server `scratchpad`).
pub const PREFIX: &str = "mcp__plugin_scratchpad_scratchpad__";

/// The pinned `claude` binary and a `PATH` with Node 24 first.
pub fn install() -> (PathBuf, OsString) {
    npm_package_on_node24(
        "tests/claude-code",
        "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
        "the pinned Claude Code (@anthropic-ai/claude-code)",
    )
}

/// One user's Claude Code: its own `HOME`, the scripted model, the scratchpad database.
pub struct Claude {
    pub binary: PathBuf,
    pub path: OsString,
    pub home: PathBuf,
    pub model_url: String,
    /// `SCRATCHPAD_BIN` for the plugin (the built CLI, or a wrapper around it); none when the
    /// plugin was installed with its own binary.
    pub scratchpad: Option<PathBuf>,
    pub database: PathBuf,
    /// `SCRATCHPAD_CONFIG`, when set.
    pub config: Option<PathBuf>,
    /// More arguments for every `claude` run (`--mcp-config FILE`).
    pub extra_args: Vec<OsString>,
    /// Load the plugin with `--plugin-dir` (false: it must be installed).
    pub plugin_dir: bool,
}

impl Claude {
    /// One user's Claude Code in `dir` (`HOME` is `dir/home`) against `model`, with the plugin
    /// of this checkout (`--plugin-dir`) running this build's `scratchpad`; the database is
    /// `dir/scratchpad.db`.
    pub fn with_plugin(dir: &Path, model: &Model) -> Claude {
        let (binary, path) = install();
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Claude {
            binary,
            path,
            home,
            model_url: model.url.clone(),
            scratchpad: Some(scratchpad_binary()),
            database: dir.join("scratchpad.db"),
            config: None,
            extra_args: Vec::new(),
            plugin_dir: true,
        }
    }

    /// `claude -p PROMPT --output-format json` with the plugin, resuming `resume` when given:
    /// its JSON result (`session_id`, `result`, `is_error`, …).
    pub fn prompt(&self, prompt: &str, resume: Option<&str>) -> Value {
        self.prompt_in(&self.home, prompt, resume)
    }

    /// [`Claude::prompt`] with `dir` as the agent's working directory (its project).
    pub fn prompt_in(&self, dir: &Path, prompt: &str, resume: Option<&str>) -> Value {
        let output = self.run_in(dir, prompt, resume);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "claude -p failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("claude -p printed no JSON result ({e}):\n{stdout}"))
    }

    /// Runs `claude -p` to the end.
    pub fn run(&self, prompt: &str, resume: Option<&str>) -> Output {
        self.run_in(&self.home, prompt, resume)
    }

    /// Runs `claude -p` to the end in `dir`, the working directory its hooks report as `cwd`.
    pub fn run_in(&self, dir: &Path, prompt: &str, resume: Option<&str>) -> Output {
        let mut command = self.command(&self.binary);
        command.current_dir(dir);
        // `--max-turns`: a script that never ends its turn fails the test instead of hanging it.
        command.args(["-p", prompt, "--output-format", "json", "--max-turns", "8", "--dangerously-skip-permissions"]);
        if self.plugin_dir {
            command.arg("--plugin-dir").arg(root().join("integrations/claude-code"));
        }
        if let Some(id) = resume {
            command.args(["--resume", id]);
        }
        command.args(&self.extra_args);
        command.output().expect("running claude")
    }

    /// `program` with this user's environment only: its `HOME`, the scripted model, the
    /// scratchpad binary, database and configuration.
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("IS_SANDBOX", "1")
            .env("ANTHROPIC_BASE_URL", &self.model_url)
            .env("ANTHROPIC_API_KEY", "sk-test-scripted")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("SCRATCHPAD_DATABASE_URL", &self.database)
            .env("XDG_CACHE_HOME", super::cache_home())
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .current_dir(&self.home)
            .stdin(Stdio::null());
        if let Some(config) = &self.config {
            command.env("SCRATCHPAD_CONFIG", config);
        }
        if let Some(scratchpad) = &self.scratchpad {
            command.env("SCRATCHPAD_BIN", scratchpad);
        }
        command
    }

    /// `claude ARGS…` (a `plugin` subcommand), which must succeed: its stdout.
    pub fn claude(&self, args: &[&str]) -> String {
        let output = self.command(&self.binary).args(args).output().expect("running claude");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "claude {args:?}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        stdout
    }

    /// `scratchpad --db DATABASE --json show SESSION`.
    pub fn show(&self, session: &str) -> Value {
        self.scratchpad_json(&["show", session])
    }

    /// Every session of the database, oldest first (`scratchpad --json session list`).
    pub fn sessions(&self) -> Vec<Value> {
        self.scratchpad_json(&["session", "list"])["sessions"].as_array().cloned().unwrap_or_default()
    }

    /// `scratchpad --db DATABASE --json ARGS…`, which must succeed: its JSON.
    fn scratchpad_json(&self, args: &[&str]) -> Value {
        let output = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(&self.database)
            .arg("--json")
            .args(args)
            .env("XDG_CACHE_HOME", super::cache_home())
            .output()
            .unwrap();
        assert!(output.status.success(), "scratchpad {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

/// All the text of a request body (system prompt, messages, tool results), for markers.
pub fn text_of(request: &Value) -> String {
    let mut out = String::new();
    collect(request.get("system").unwrap_or(&Value::Null), &mut out);
    collect(request.get("messages").unwrap_or(&Value::Null), &mut out);
    out
}

fn collect(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// The text of a request's first user message: a sub-agent's conversation (the `Agent` tool)
/// begins with the prompt its parent gave it.
pub fn first_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    if let Some(first) = messages.iter().find(|m| m["role"] == "user") {
        collect(&first["content"], &mut out);
    }
    out
}

/// The text of a request's last user message (a prompt, or tool results).
pub fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    if let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") {
        collect(&last["content"], &mut out);
    }
    out
}

/// The names of the tools a request offers the model.
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
}

/// The `tool_use` blocks of a request's messages.
pub fn tool_uses(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use")
        .collect()
}

/// The text of the `tool_result` blocks of a request's last user message.
pub fn last_tool_results(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").cloned().unwrap_or(Value::Null);
    let mut out = String::new();
    for block in last_user["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result") {
        collect(&block["content"], &mut out);
    }
    out
}
