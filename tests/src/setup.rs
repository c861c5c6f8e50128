//! System packages the tests need (the OCI registry and its push client, PostgreSQL, Prometheus,
//! Chromium and its WebDriver), installed
//! when missing by the same `.ci/setup/<topic>.sh` script `.ci/run` runs, so the README's test
//! command works on a fresh machine as written.
//!
//! - One install at a time per machine: an exclusive lock on `target/setup.lock` (test binaries
//!   and test threads may ask at once; `apt-get` holds its own lock and would fail the second).
//! - The scripts use `apt-get`, which needs root. As another user nothing is installed: the
//!   failure names the exact command to run.

use std::path::Path;
use std::process::Command;

use crate::runtimes::{root, run};

/// Makes sure `tools` (commands looked up on `PATH`) are there, running `.ci/setup/{script}`
/// when one is missing; panics with the command to run when that cannot be done.
pub fn ensure_commands(script: &str, tools: &[&str]) {
    ensure(script, &tools.join(", "), || tools.iter().all(|tool| on_path(tool)));
}

/// Makes sure `present()` holds, running `.ci/setup/{script}` (under the machine-wide lock)
/// when it does not; `what` names what is missing in failures.
pub fn ensure(script: &str, what: &str, present: impl Fn() -> bool) {
    if present() {
        return;
    }
    let lock_path = root().join("target/setup.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::File::create(&lock_path).unwrap_or_else(|e| panic!("creating {}: {e}", lock_path.display()));
    lock.lock().unwrap_or_else(|e| panic!("locking {}: {e}", lock_path.display()));
    if present() {
        return; // another test installed it while this one waited
    }
    let script_path = root().join(".ci/setup").join(script);
    let command = format!("sudo bash {}", script_path.display());
    assert!(
        is_root(),
        "{what} missing, and installing it needs root (apt-get); run: {command} (installs the Debian packages it names)"
    );
    run(Command::new("bash").arg(&script_path), &format!("installing {what} ({})", script_path.display()));
    assert!(present(), "{} ran but {what} is still missing", script_path.display());
}

/// Whether `command` is an executable file in a directory of `PATH`.
pub fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| is_executable(&dir.join(command))))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
