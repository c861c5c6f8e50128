//! System packages the tests need (the OCI registry and its push client, PostgreSQL, Prometheus,
//! Chromium and its WebDriver), installed by the tests themselves when missing: each [`Topic`]
//! names its Debian packages, so the README's test command works on a fresh machine as written.
//!
//! - One install at a time per machine: an exclusive lock on `target/setup.lock` (test binaries
//!   and test threads may ask at once; `apt-get` holds its own lock and would fail the second).
//! - `apt-get` needs root. As another user nothing is installed: the failure names the exact
//!   command to run.

use std::path::Path;
use std::process::Command;

use crate::runtimes::{root, run};

/// What one topic of the tests needs from the system: the Debian packages the tests install
/// themselves when missing, and the `.ci/setup` script of the same topic, which `.ci/run` runs
/// once per run (so the tests find the packages there) and which the tests run after their own
/// install for what comes after it (stopping a service the package started, say).
pub struct Topic {
    /// The topic's script, relative to `.ci/setup`.
    pub script: &'static str,
    /// The Debian packages, installed with `apt-get install --no-install-recommends`.
    pub packages: &'static [&'static str],
}

/// The OCI registry, its push client and `ssh-keygen` (tests/src/registry.rs, oci_registry.rs).
pub const OCI: Topic = Topic { script: "oci.sh", packages: &["docker-registry", "skopeo", "openssh-client"] };
/// PostgreSQL's server binaries (tests/src/postgres.rs).
pub const POSTGRES: Topic = Topic { script: "postgres.sh", packages: &["postgresql"] };
/// The Prometheus server of the metrics test.
pub const PROMETHEUS: Topic = Topic { script: "metrics.sh", packages: &["prometheus"] };
/// Headless Chromium and the WebDriver server of the viewer's browser test.
pub const BROWSER: Topic = Topic { script: "browser.sh", packages: &["chromium", "chromium-driver"] };
/// The emulators and cross toolchains of the release-targets tests.
pub const CROSS: Topic = Topic {
    script: "release/cross.sh",
    packages: &["qemu-user", "libc6-arm64-cross", "gcc-mingw-w64-x86-64", "wine", "wine64"],
};

/// Makes sure `tools` (commands looked up on `PATH`) are there, installing `topic` when one is
/// missing; panics with the command to run when that cannot be done.
pub fn ensure_commands(topic: &Topic, tools: &[&str]) {
    ensure(topic, &tools.join(", "), || tools.iter().all(|tool| on_path(tool)));
}

/// Makes sure `present()` holds, installing `topic`'s packages with `apt-get` and then running
/// its script (all under the machine-wide lock) when it does not; `what` names what is missing
/// in failures.
pub fn ensure(topic: &Topic, what: &str, present: impl Fn() -> bool) {
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
    let packages = topic.packages.join(" ");
    assert!(
        is_root(),
        "{what} missing, and installing it needs root; run: sudo apt-get install --no-install-recommends {packages}"
    );
    let apt = |args: &[&str]| {
        let mut apt = Command::new("apt-get");
        apt.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        run(&mut apt, &format!("installing {what}: apt-get {}", args.join(" ")));
    };
    apt(&["update"]);
    apt(&[&["install", "-y", "--no-install-recommends"][..], topic.packages].concat());
    let script_path = root().join(".ci/setup").join(topic.script);
    run(Command::new("bash").arg(&script_path), &format!("setting up {what} ({})", script_path.display()));
    assert!(present(), "the Debian packages {packages} were installed but {what} is still missing");
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
