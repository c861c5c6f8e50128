//! What the CLI tests share: the real `scratchpad` binary, run the way a user runs it, and
//! readers of what it printed. Each test binary uses its part (`mod support;`).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

/// The `scratchpad` binary with the test run's compiled-component cache and no database taken
/// from the environment (a test names its database).
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_scratchpad"));
    command
        .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
        .env_remove(scratchpad_host::DATABASE_URL_ENV);
    command
}

/// Runs `scratchpad --db DB ARGS…` to the end.
pub fn run(db: impl AsRef<OsStr>, args: &[impl AsRef<OsStr>]) -> Output {
    command().arg("--db").arg(db).args(args).output().expect("running scratchpad")
}

/// Bytes the CLI printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What the CLI printed on stdout, as JSON.
pub fn json_of(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", text(&output.stdout)))
}
