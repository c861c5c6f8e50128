//! `scratchpad setup gemini` through the real binary, on settings a user has: what is there
//! stays in its order, a second run changes nothing, `--dry-run` writes nothing, and a file that
//! cannot be parsed is refused with its path and line and exit status 1, with nothing written.
//! (The merge itself is unit-tested in `cli/src/setup/gemini.rs`; `tests/tests/gemini_e2e.rs`
//! runs the real Gemini CLI on what it writes.)

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support;

use support::{backup, text};

const MINE: &str = r#"{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "ui": { "theme": "GitHub" },
  "mcpServers": { "other": { "command": "other-server", "args": ["--flag"] } },
  "hooks": { "BeforeAgent": [ { "hooks": [ { "type": "command", "command": "my-audit-hook" } ] } ] }
}
"#;

/// A user's home: `GEMINI_CLI_HOME` (whose `.gemini/settings.json` is edited) and `XDG_DATA_HOME`
/// (where the binary's copy goes) inside it.
struct Home(tempfile::TempDir);

impl Home {
    fn settings(&self) -> PathBuf {
        self.0.path().join(".gemini/settings.json")
    }

    fn copy(&self) -> PathBuf {
        support::setup_copy(self.0.path())
    }

    fn setup(&self, extra: &[&str]) -> Output {
        support::setup_command(self.0.path())
            .arg("gemini")
            .args(extra)
            .env("GEMINI_CLI_HOME", self.0.path())
            .output()
            .expect("running scratchpad setup gemini")
    }

    fn write(&self, text: &str) {
        support::write_settings(&self.settings(), text);
    }
}

#[test]
fn setup_gemini_keeps_the_users_settings_writes_once_and_dry_run_writes_nothing() {
    let home = Home(tempfile::tempdir().unwrap());
    home.write(MINE);

    let dry = home.setup(&["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let said = text(&dry.stdout);
    assert!(said.contains("+    \"scratchpad\": {"), "the diff shows the server added: {said}");
    assert!(said.contains("would copy"), "{said}");
    assert_eq!(std::fs::read_to_string(home.settings()).unwrap(), MINE, "--dry-run changed the file");
    assert!(!home.copy().exists() && !backup(&home.settings()).exists(), "--dry-run wrote something");

    let once = home.setup(&[]);
    assert!(once.status.success(), "{}", text(&once.stderr));
    assert!(text(&once.stdout).contains("updated"), "{}", text(&once.stdout));
    let merged = std::fs::read_to_string(home.settings()).unwrap();
    let settings: Value = serde_json::from_str(&merged).unwrap();
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "{merged}");
    let order: Vec<usize> = ["\"security\"", "\"ui\"", "\"mcpServers\"", "\"hooks\""]
        .iter()
        .map(|key| merged.find(key).unwrap_or_else(|| panic!("{key} in {merged}")))
        .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "the user's keys stay in their order:\n{merged}");
    assert_eq!(settings["security"]["auth"]["selectedType"], "gemini-api-key");
    assert_eq!(settings["ui"]["theme"], "GitHub");
    assert_eq!(settings["mcpServers"]["other"]["args"][0], "--flag");
    let server = &settings["mcpServers"]["scratchpad"];
    assert_eq!(server["command"].as_str(), Some(home.copy().to_str().unwrap()));
    let before_agent = settings["hooks"]["BeforeAgent"].as_array().unwrap();
    assert_eq!(before_agent.len(), 2, "the user's hook and ours: {merged}");
    assert_eq!(before_agent[0]["hooks"][0]["command"], "my-audit-hook");
    let ours = before_agent[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.starts_with(&format!("{} hook --runtime gemini", home.copy().display())), "{ours}");
    assert_eq!(std::fs::read_to_string(backup(&home.settings())).unwrap(), MINE, "the previous text is kept");
    assert_eq!(
        std::fs::read(home.copy()).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_scratchpad")).unwrap(),
        "the copy the hooks run is this binary"
    );

    let twice = home.setup(&[]);
    assert!(twice.status.success(), "{}", text(&twice.stderr));
    assert!(text(&twice.stdout).contains("already set up"), "{}", text(&twice.stdout));
    assert_eq!(std::fs::read_to_string(home.settings()).unwrap(), merged, "a second run changed the file");
}

#[test]
fn malformed_gemini_settings_are_refused_and_nothing_is_written() {
    let home = Home(tempfile::tempdir().unwrap());
    let malformed = "{\n  \"ui\": { \"theme\": \"GitHub\" },\n  \"hooks\": {\n}\n";
    home.write(malformed);
    let refused = home.setup(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let message = text(&refused.stderr);
    assert!(message.contains(&home.settings().display().to_string()) && message.contains("line 5"), "{message}");
    assert_eq!(std::fs::read_to_string(home.settings()).unwrap(), malformed, "the file changed");
    assert!(!backup(&home.settings()).exists(), "a backup was written");
    assert!(!home.copy().exists(), "the binary was copied");

    // Comments are Gemini CLI's own syntax: read, and said to be dropped; the backup has them.
    let home = Home(tempfile::tempdir().unwrap());
    let commented = "{\n  // my theme\n  \"ui\": { \"theme\": \"GitHub\" }\n}\n";
    home.write(commented);
    let done = home.setup(&[]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(text(&done.stderr).contains("comments are not kept"), "{}", text(&done.stderr));
    assert_eq!(std::fs::read_to_string(backup(&home.settings())).unwrap(), commented);
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(home.settings()).unwrap()).unwrap();
    assert_eq!(settings["ui"]["theme"], "GitHub");
}
