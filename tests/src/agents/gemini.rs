//! The real Gemini CLI for the end-to-end tests: `@google/gemini-cli`, pinned in
//! `tests/gemini/package-lock.json`, installed with the system npm on the pinned Node 24 when
//! missing; `HOME` in a temp dir, with settings of the user's own (the offline settings Gemini
//! CLI needs, docs/gemini.md) before `scratchpad setup gemini` adds the hooks and the MCP server.
//! Headless: `gemini -p PROMPT -m gemini-2.5-flash --output-format json [--resume SESSION]`
//! against the scripted Gemini API (`tests/scripted/gemini.py`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::runtimes::{npm_package_on_node24, run};
use crate::scratchpad_binary;
use crate::scripted::Model;

/// The prefix Gemini CLI names the scratchpad server's tools with (`mcp_<server>_<tool>`).
pub const PREFIX: &str = "mcp_scratchpad_";

/// The model every run asks for (`-m`: no routing call before each turn).
pub const MODEL: &str = "gemini-2.5-flash";

/// The settings a user of Gemini CLI offline has before setting up the scratchpad: an API key's
/// auth (else it picks a gateway and exits 41), no usage statistics or telemetry, and session
/// retention off (0.61.0 deletes a resumed session's files when it is on).
pub fn user_settings() -> Value {
    json!({
        "security": { "auth": { "selectedType": "gemini-api-key" } },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "general": { "sessionRetention": { "enabled": false } },
    })
}

/// One user's Gemini CLI: `HOME` in a temp dir, the scripted model, the database.
pub struct Gemini {
    entry: PathBuf,
    path: OsString,
    dir: PathBuf,
    model_url: String,
}

/// What one `gemini -p` run printed (`--output-format json`).
pub struct Run {
    /// Gemini CLI's session id: the host's session id.
    pub session: String,
    /// The model's final text.
    pub response: String,
    pub output: Output,
}

impl Gemini {
    /// Gemini CLI set up the way the README says: its settings hold the user's own
    /// ([`user_settings`]), then `scratchpad setup gemini --binary BINARY` adds the integration.
    pub fn new(dir: &Path, model: &Model) -> Gemini {
        Gemini::with_binary(dir, model, &scratchpad_binary())
    }

    /// [`Gemini::new`] with the hooks and the MCP server running `binary`.
    pub fn with_binary(dir: &Path, model: &Model, binary: &Path) -> Gemini {
        let (entry, path) = npm_package_on_node24(
            "tests/gemini",
            "node_modules/.bin/gemini",
            "the pinned Gemini CLI (@google/gemini-cli)",
        );
        let settings = dir.join("home/.gemini/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::create_dir_all(dir.join("work")).unwrap();
        let mine = serde_json::to_string_pretty(&user_settings()).unwrap();
        std::fs::write(&settings, &mine).unwrap();
        run(
            Command::new(scratchpad_binary())
                .args(["setup", "gemini", "--binary"])
                .arg(binary)
                .env("GEMINI_CLI_HOME", dir.join("home")),
            "scratchpad setup gemini",
        );
        let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
        for (key, value) in user_settings().as_object().unwrap() {
            assert_eq!(&merged[key], value, "setup kept the user's `{key}`");
        }
        // Gemini CLI waits for its MCP servers before the first turn: compile the components
        // into the shared cache first, so a cold cache never slows the first turn.
        let warm = Command::new(scratchpad_binary())
            .arg("--db")
            .arg(dir.join("scratchpad.db"))
            .arg("plugins")
            .env("XDG_CACHE_HOME", super::cache_home())
            .output()
            .unwrap();
        assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
        Gemini { entry, path, dir: dir.to_owned(), model_url: model.url.clone() }
    }

    pub fn database(&self) -> PathBuf {
        self.dir.join("scratchpad.db")
    }

    /// The directory Gemini CLI works in (its hooks' `cwd`).
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// `gemini -p PROMPT [--resume SESSION]` in [`Gemini::work`], which must succeed.
    pub fn run(&self, prompt: &str, resume: Option<&str>) -> Run {
        let output = self.command(prompt, resume).output().expect("running gemini");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "gemini failed ({}):\n{stdout}\n{stderr}", output.status);
        let printed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
        let session = printed["session_id"].as_str().expect("a session id").to_owned();
        let response = printed["response"].as_str().unwrap_or_default().to_owned();
        Run { session, response, output }
    }

    /// The command of one headless run, offline: the scripted model as the Gemini API, the
    /// workspace trusted, the database and the state and cache directories in the temp dir.
    /// Nothing of this process's environment but `PATH` goes through: `scratchpad` is not on
    /// it, the settings name the binary.
    pub fn command(&self, prompt: &str, resume: Option<&str>) -> Command {
        let mut command = Command::new(&self.entry);
        command.args(["-p", prompt, "-m", MODEL, "--output-format", "json"]);
        if let Some(session) = resume {
            command.args(["--resume", session]);
        }
        command
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.dir.join("home"))
            .env("GEMINI_API_KEY", "any")
            .env("GOOGLE_GEMINI_BASE_URL", &self.model_url)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("SCRATCHPAD_DATABASE_URL", self.database())
            .env("XDG_CACHE_HOME", super::cache_home())
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .current_dir(self.work())
            .stdin(Stdio::null());
        let config = self.dir.join("scratchpad.toml");
        if config.exists() {
            command.env("SCRATCHPAD_CONFIG", &config);
        }
        command
    }

    /// `scratchpad show SESSION --json` on the database the agent used.
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
