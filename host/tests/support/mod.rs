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

/// A long-running `scratchpad` (a `serve` or `mcp` process on stdio) that a test writes raw
/// bytes to, with its stdout read on a thread so that a missing answer fails the test after a
/// while instead of hanging it. Killed when dropped.
pub struct Process {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Process {
    /// Starts `scratchpad ARGS…`.
    pub fn start(args: &[&str]) -> Process {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting scratchpad");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Process { child, stdin: Some(stdin), lines }
    }

    /// Writes `bytes` to its stdin.
    pub fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Its next line on stdout, as JSON (at most 60 s away).
    pub fn read(&self) -> serde_json::Value {
        let line =
            self.lines.recv_timeout(std::time::Duration::from_secs(60)).expect("scratchpad answered within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }

    /// Closes stdin; whether the process then exited with status 0.
    pub fn close(&mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().unwrap().success()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python (stdlib) client `tests/clients/NAME` against the binary and requires it to
/// report every check passed.
pub fn python_client(name: &str) {
    let script = format!("{}/../tests/clients/{name}", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_scratchpad"))
        .env("SCRATCHPAD_TEST_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("python3 is required for the embedding tests (see .ci/run)");
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "the Python client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
}
