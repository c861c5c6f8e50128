//! The scripted model of the agent end-to-end tests: the one scripted part of them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::process::Process;
use crate::runtimes::root;

/// A scripted model API on a free 127.0.0.1 port (`tests/scripted/`: `anthropic.py` for Claude
/// Code, `responses.py` for Codex, `gemini.py` for Gemini CLI, `chat.py` for opencode and
/// OpenClaw), answering by the script's rules and recording every request. Killed by PID on
/// drop.
pub struct Model {
    _process: Process,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    requests: PathBuf,
}

impl Model {
    /// Starts `tests/scripted/API.py` with `script` (see `tests/scripted/rules.py`) in `dir`.
    pub fn start(api: &str, dir: &Path, script: &Value) -> Model {
        let script_file = dir.join("script.json");
        std::fs::write(&script_file, script.to_string()).unwrap();
        let requests = dir.join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(root().join(format!("tests/scripted/{api}.py")))
            .arg(&script_file)
            .arg(&requests)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the scripted model");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port: u16 =
            line.trim().parse().unwrap_or_else(|_| panic!("the scripted model printed {line:?}, not its port"));
        Model { _process: Process(child), url: format!("http://127.0.0.1:{port}"), requests }
    }

    /// Every request the model received so far, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.requests)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The requests of conversation turns, those that offer tools (not the side requests an
    /// agent makes: titles, compaction summaries, token counts).
    pub fn turn_requests(&self) -> Vec<Value> {
        self.requests().into_iter().filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty())).collect()
    }
}
