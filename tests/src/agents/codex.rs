//! The real Codex CLI for the end-to-end tests: `@openai/codex`, pinned in
//! `tests/codex/package-lock.json` (its native binary comes in an optional dependency),
//! installed with the system npm on the pinned Node 24 when missing; `CODEX_HOME` and `HOME` in a
//! temp dir, with a configuration that already has settings of its own (the scripted model as
//! its provider) before `scratchpad setup codex` adds the hooks and the MCP server.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::runtimes::{npm_package_on_node24, run};
use crate::scratchpad_binary;
use crate::scripted::Model;

/// The namespace tool Codex offers the server's tools in; hooks and texts name a tool
/// `mcp__scratchpad__<tool>`.
pub const NAMESPACE: &str = "mcp__scratchpad";

/// One user's Codex: `CODEX_HOME` and `HOME` in a temp dir, the scripted model, the database.
pub struct Codex {
    binary: PathBuf,
    path: OsString,
    dir: PathBuf,
}

impl Codex {
    /// Codex set up the way the README says: its configuration holds settings of its own (the
    /// scripted model as its provider, and `extra`, e.g. a compaction limit), then
    /// `scratchpad setup codex --binary` with this build's binary adds the integration.
    pub fn new(dir: &Path, model: &Model, extra: &str) -> Codex {
        Codex::set_up(dir, model, extra, |codex_home| {
            run(
                Command::new(scratchpad_binary())
                    .args(["setup", "codex", "--binary"])
                    .arg(scratchpad_binary())
                    .env("CODEX_HOME", codex_home),
                "scratchpad setup codex",
            );
        })
    }

    /// Codex with the provider configuration, after `setup(CODEX_HOME)` added the integration.
    /// Installs the pinned Codex when missing.
    pub fn set_up(dir: &Path, model: &Model, extra: &str, setup: impl FnOnce(&Path)) -> Codex {
        // The package's launcher (a Node script run on the PATH's Node 24) starts its native binary.
        let (binary, node_path) =
            npm_package_on_node24("tests/codex", "node_modules/.bin/codex", "the pinned Codex CLI (@openai/codex)");
        let home = dir.join("codex-home");
        std::fs::create_dir_all(&home).unwrap();
        let provider = format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n{extra}\n[model_providers.scripted]\nname = \"scripted\"\n\
             base_url = \"{}/v1\"\nenv_key = \"SCRIPTED_MODEL_KEY\"\nwire_api = \"responses\"\n",
            model.url
        );
        std::fs::write(home.join("config.toml"), &provider).unwrap();
        setup(&home);
        let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(config.starts_with(&provider), "setup kept the settings that were there:\n{config}");
        // Codex sends its first request once its MCP servers started or timed out: compile the
        // components into the shared cache first, so a cold cache never races the first turn.
        let warm = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(dir.join("scratchpad.db"))
            .arg("plugins")
            .env("XDG_CACHE_HOME", super::cache_home())
            .output()
            .unwrap();
        assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
        // No `scratchpad` on PATH: the configuration names the binary by its path.
        Codex { binary, path: node_path, dir: dir.to_owned() }
    }

    pub fn database(&self) -> PathBuf {
        self.dir.join("scratchpad.db")
    }

    /// `codex exec [resume ID] PROMPT --json`: the thread id and the final agent message.
    pub fn exec(&self, prompt: &str, resume: Option<&str>) -> (String, String) {
        self.exec_in(&self.dir, prompt, resume)
    }

    /// [`Codex::exec`] started in `cwd`, the working directory its hooks report (its project).
    pub fn exec_in(&self, cwd: &Path, prompt: &str, resume: Option<&str>) -> (String, String) {
        self.exec_with(cwd, &[], prompt, resume)
    }

    /// [`Codex::exec`] started in `cwd` with more arguments for `codex exec` (`-C DIR`).
    pub fn exec_with(&self, cwd: &Path, args: &[&OsStr], prompt: &str, resume: Option<&str>) -> (String, String) {
        let events = self.events(cwd, args, prompt, resume);
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

    /// Every event `codex exec --json` printed (`thread.started`, `item.completed`, …), for a
    /// test that reads an item, e.g. a command's `exit_code` and `aggregated_output`.
    pub fn events(&self, cwd: &Path, args: &[&OsStr], prompt: &str, resume: Option<&str>) -> Vec<Value> {
        let mut command = Command::new(&self.binary);
        command.arg("exec");
        if let Some(id) = resume {
            command.args(["resume", id]);
        }
        command
            .args(args)
            .args(["--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--json", prompt])
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.dir.join("home"))
            .env("CODEX_HOME", self.dir.join("codex-home"))
            .env("SCRIPTED_MODEL_KEY", "sk-test-scripted")
            .env("SCRATCHPAD_DATABASE_URL", self.database())
            .env("XDG_CACHE_HOME", super::cache_home())
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .current_dir(cwd)
            .stdin(Stdio::null());
        let config = self.dir.join("scratchpad.toml");
        if config.exists() {
            command.env("SCRATCHPAD_CONFIG", &config);
        }
        std::fs::create_dir_all(self.dir.join("home")).unwrap();
        let output = command.output().expect("running codex");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "codex exec failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The `command_execution` items of `events`, in order.
    pub fn commands(events: &[Value]) -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
            .map(|e| e["item"].clone())
            .collect()
    }

    pub fn show(&self, session: &str) -> String {
        let output = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(self.database())
            .args(["--json", "show", session])
            .env("XDG_CACHE_HOME", super::cache_home())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}
