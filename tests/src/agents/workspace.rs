//! What the recall tests of the coding agents share: a git checkout for an agent to work in,
//! and a `scratchpad` that logs where each of its runs ran, so a test proves which directory
//! (so which project) the agent's hooks and MCP server saw.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git checkout `name` in `dir`, with a subdirectory `src/deep`; its canonical path.
pub fn checkout(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    let init = Command::new("git").args(["init", "--quiet"]).current_dir(&root).output().expect("running git init");
    assert!(init.status.success(), "git init: {}", String::from_utf8_lossy(&init.stderr));
    root.canonicalize().unwrap()
}

/// A `scratchpad` that notes each run's subcommand and working directory in `log`, then runs
/// the real one.
pub fn logging_scratchpad(dir: &Path, log: &Path) -> PathBuf {
    let wrapper = dir.join("scratchpad-logged");
    let script = format!("#!/bin/sh\necho \"$1 $(pwd)\" >> {log:?}\nexec {:?} \"$@\"\n", crate::scratchpad_binary());
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    wrapper
}

/// The lines `log` gained since `read` of them were taken.
pub fn new_lines(log: &Path, read: &mut usize) -> Vec<String> {
    let lines: Vec<String> = std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_owned).collect();
    let new = lines[*read..].to_vec();
    *read = lines.len();
    new
}
