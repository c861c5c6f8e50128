//! The third-party plugins written in other languages (`plugins/python-redactor`, Python with
//! componentize-py; `plugins/js-todo`, JavaScript with ComponentizeJS), built by the tests
//! themselves with each plugin's own build script and pinned tools.
//!
//! A build takes 10 to 40 s and makes a 12 to 18 MB component, so the result is kept under
//! `target/third-party/` named by a hash of everything that goes into it (the plugin's
//! sources, build script and pins, and `wit/`): an unchanged plugin is built once, an edited
//! one again. A missing tool is a failure that names it, never a skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::runtimes::run;

/// Serializes builds within a test binary: its tests run in parallel and would build the same
/// component at once. Across binaries the rename into place keeps a half-written file unseen.
static BUILD: Mutex<()> = Mutex::new(());

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate has a parent").to_path_buf()
}

/// The Python secrets redactor, built (or taken from the cache).
pub fn python_redactor() -> PathBuf {
    build("python-redactor", &["app.py", "build.sh", "requirements.txt"], |dir, out| {
        tool("python3", "--version", "Python 3 is required to build plugins/python-redactor (componentize-py)");
        let mut command = Command::new("bash");
        command.arg(dir.join("build.sh")).arg(out);
        command
    })
}

/// The JavaScript todo list, built (or taken from the cache).
pub fn js_todo() -> PathBuf {
    build("js-todo", &["todo.js", "build.mjs", "package.json", "package-lock.json"], |dir, out| {
        tool("node", "--version", "Node.js is required to build plugins/js-todo (ComponentizeJS)");
        tool("npm", "--version", "npm is required to install plugins/js-todo's pinned ComponentizeJS");
        // `npm ls` exits non-zero when a package is missing or not the locked version.
        let installed = Command::new("npm").args(["ls", "--depth=0"]).current_dir(dir).output();
        if !installed.is_ok_and(|output| output.status.success()) {
            // Not `npm ci`: npm 11 refuses this lock file for optional packages of other
            // platforms it did not record; `install --no-save` takes the locked versions and
            // writes nothing.
            run(
                Command::new("npm").args(["install", "--no-save", "--no-audit", "--no-fund"]).current_dir(dir),
                "installing plugins/js-todo's locked packages (npm install --no-save)",
            );
        }
        let mut command = Command::new("node");
        command.arg(dir.join("build.mjs")).arg(out);
        command
    })
}

/// The cached component of `plugin` for the current `inputs` (files of the plugin's directory)
/// and `wit/`, built with the command `build` gives (the plugin dir and the output path) when
/// the cache has none.
fn build(plugin: &str, inputs: &[&str], command: impl FnOnce(&Path, &Path) -> Command) -> PathBuf {
    let dir = root().join("plugins").join(plugin);
    let out = root().join("target/third-party").join(format!("{plugin}-{}.wasm", inputs_hash(&dir, inputs)));
    let _guard = BUILD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if out.exists() {
        return out;
    }
    let partial = out.with_extension(format!("partial-{}", std::process::id()));
    run(&mut command(&dir, &partial), &format!("building plugins/{plugin}"));
    std::fs::rename(&partial, &out).unwrap_or_else(|e| panic!("moving {partial:?} to {out:?}: {e}"));
    out
}

/// 16 hex digits of a SHA-256 over the inputs and every `wit/*.wit`, each with its name.
fn inputs_hash(dir: &Path, inputs: &[&str]) -> String {
    let mut files: Vec<PathBuf> = inputs.iter().map(|name| dir.join(name)).collect();
    let mut wit: Vec<PathBuf> = std::fs::read_dir(root().join("wit"))
        .expect("reading wit/")
        .map(|entry| entry.expect("listing wit/").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .collect();
    wit.sort();
    files.extend(wit);
    let mut hash = Sha256::new();
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("reading {file:?}: {e}"));
        hash.update(file.file_name().expect("a file name").as_encoded_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    hex::encode(hash.finalize())[..16].to_owned()
}

/// Fails with `missing` when `program` cannot run.
fn tool(program: &str, version_flag: &str, missing: &str) {
    let ran = Command::new(program).arg(version_flag).output();
    assert!(ran.is_ok_and(|output| output.status.success()), "{missing}: `{program}` was not found on PATH");
}

/// The powers the Python redactor asks for, in the contract's order (as the host lists them) (`plugins/python-redactor/app.py`, `Permissions`).
pub const REDACTOR_POWERS: &str =
    "guidance,rewrite-tool-calls,block-tool-calls,read-tool-traffic,storage,tokens,log,config";

/// The powers the JavaScript todo list asks for (`plugins/js-todo/todo.js`, `permissions`).
pub const TODO_POWERS: &str = "inject,guidance,storage,tokens,log,config";

/// The command-line flags that load the Python redactor and the JavaScript todo list from
/// `python` and `js` (named `redactor` and `todo` after their files), unsigned (built here) and
/// granted what they ask for.
pub fn trusted_flags(python: &str, js: &str) -> Vec<String> {
    [
        ["--plugin", python],
        ["--plugin", js],
        ["--allow-unsigned", "redactor"],
        ["--allow-unsigned", "todo"],
        ["--grant", &format!("redactor={REDACTOR_POWERS}")],
        ["--grant", &format!("todo={TODO_POWERS}")],
    ]
    .into_iter()
    .flatten()
    .map(str::to_owned)
    .collect()
}
