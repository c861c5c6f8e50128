//! `scratchpad setup codex` through the real binary, on files a user has: what is there stays,
//! a second run changes nothing, `--dry-run` writes nothing, and a file that cannot be read or
//! parsed is refused with its path (and line) and exit status 1, with nothing written: no
//! change to the file, no backup, no copy of the binary. (The merge itself is unit-tested in
//! `cli/src/setup/codex.rs`.)

use std::path::PathBuf;
use std::process::Output;

use crate::support;

use support::{backup, text};

const MINE: &str = "# my settings\nmodel = \"o5\"\n\n[mcp_servers.other]\ncommand = \"other\"\n";

/// A user's home: `XDG_DATA_HOME` (where the binary's copy goes) inside it.
struct Home(tempfile::TempDir);

impl Home {
    fn new() -> Home {
        Home(tempfile::tempdir().unwrap())
    }

    fn config(&self) -> PathBuf {
        self.0.path().join("codex/config.toml")
    }

    fn copy(&self) -> PathBuf {
        support::setup_copy(self.0.path())
    }

    fn setup(&self, extra: &[&str]) -> Output {
        support::setup_command(self.0.path())
            .args(["codex", "--config-file"])
            .arg(self.config())
            .args(extra)
            .env("HOME", self.0.path())
            .output()
            .expect("running scratchpad setup codex")
    }

    fn write_config(&self, text: &str) {
        support::write_settings(&self.config(), text);
    }
}

#[test]
fn setup_codex_keeps_the_users_settings_writes_once_and_dry_run_writes_nothing() {
    let home = Home::new();
    home.write_config(MINE);

    let dry = home.setup(&["--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let said = text(&dry.stdout);
    assert!(said.contains("+[mcp_servers.scratchpad]"), "the diff shows the server added: {said}");
    assert!(said.contains("would copy"), "{said}");
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), MINE, "--dry-run changed the file");
    assert!(!home.copy().exists() && !backup(&home.config()).exists(), "--dry-run wrote something");

    let once = home.setup(&[]);
    assert!(once.status.success(), "{}", text(&once.stderr));
    assert!(text(&once.stdout).contains("updated"), "{}", text(&once.stdout));
    let merged = std::fs::read_to_string(home.config()).unwrap();
    assert!(merged.starts_with(MINE.trim_end()), "the user's lines stay first, as they were:\n{merged}");
    assert!(merged.contains(&format!("command = \"{}\"", home.copy().display())), "{merged}");
    assert_eq!(std::fs::read_to_string(backup(&home.config())).unwrap(), MINE, "the previous text is kept");
    assert_eq!(
        std::fs::read(home.copy()).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_scratchpad")).unwrap(),
        "the copy the hooks run is this binary"
    );

    let twice = home.setup(&[]);
    assert!(twice.status.success(), "{}", text(&twice.stderr));
    assert!(text(&twice.stdout).contains("already set up"), "{}", text(&twice.stdout));
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), merged, "a second run changed the file");
}

#[test]
fn a_malformed_or_unreadable_configuration_is_refused_and_nothing_is_written() {
    let home = Home::new();
    let malformed = "model = \"o5\"\n[features\nhooks = true\n";
    home.write_config(malformed);
    let refused = home.setup(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let message = text(&refused.stderr);
    assert!(message.contains(&home.config().display().to_string()) && message.contains("line 2"), "{message}");
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), malformed, "the file changed");
    assert!(!backup(&home.config()).exists(), "a backup was written");
    assert!(!home.copy().exists(), "the binary was copied");

    // A directory where the file should be: it cannot be read.
    let home = Home::new();
    std::fs::create_dir_all(home.config()).unwrap();
    let refused = home.setup(&[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains(&format!("reading {}", home.config().display())),
        "{}",
        text(&refused.stderr)
    );
    assert!(!home.copy().exists(), "the binary was copied");
}
