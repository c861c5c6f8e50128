//! The committed first-party components (`components/wasm/`, crate `scratchpad-components`):
//! rebuilt from their sources, written, and checked against what is committed.
//!
//! The list of components (name, source package, file) is the components crate's own
//! [`scratchpad_components::ALL`]; the build is `scratchpad-build-support`'s, reproducible, so
//! a rebuild anywhere gives the same bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use scratchpad_build_support::{TARGET, cargo_build};
use scratchpad_components::{ALL, Component};
use sha2::{Digest, Sha256};

/// The command that regenerates the committed components, for messages.
pub const REGENERATE: &str = "cargo xtask components";

/// Where the committed components live, relative to the workspace's root.
pub const DIR: &str = "components/wasm";

/// Builds every component from its sources; each component with the path of its new build.
pub fn build(workspace: &Path) -> Result<Vec<(&'static Component, PathBuf)>, String> {
    let packages: Vec<&str> = ALL.iter().map(|c| c.package).collect();
    let target_dir = crate::target_dir(workspace).join("components");
    let built = cargo_build(workspace, &target_dir, TARGET, &packages)?;
    Ok(ALL.iter().zip(built).collect())
}

/// Rebuilds the components and writes them and `SHA256SUMS` into [`DIR`]; one line per file
/// saying what happened to it.
pub fn regenerate(workspace: &Path) -> Result<Vec<String>, String> {
    let built = build(workspace)?;
    let dir = workspace.join(DIR);
    let mut report = Vec::new();
    for (component, path) in &built {
        let bytes = read(path)?;
        let target = dir.join(component.file);
        let before = std::fs::read(&target).ok();
        let what = match before {
            Some(before) if before == bytes => "unchanged",
            Some(_) => "rewritten",
            None => "written",
        };
        std::fs::write(&target, &bytes).map_err(|e| format!("writing {}: {e}", target.display()))?;
        report.push(format!("{DIR}/{}: {what} (sha256:{}, {} bytes)", component.file, sha256(&bytes), bytes.len()));
    }
    let sums = sha256sums(&built)?;
    let target = dir.join("SHA256SUMS");
    std::fs::write(&target, sums).map_err(|e| format!("writing {}: {e}", target.display()))?;
    Ok(report)
}

/// Rebuilds the components and compares them with the committed ones.
pub fn check(workspace: &Path) -> Result<(), String> {
    let built = build(workspace)?;
    compare(&workspace.join(DIR), &built)
}

/// Compares the components in `committed` (a directory laid out as [`DIR`]) with `built`;
/// every difference in one message, each naming the file, both digests and [`REGENERATE`].
pub fn compare(committed: &Path, built: &[(&'static Component, PathBuf)]) -> Result<(), String> {
    let mut problems = Vec::new();
    for (component, path) in built {
        let fresh = read(path)?;
        let file = committed.join(component.file);
        match std::fs::read(&file) {
            Ok(bytes) if bytes == fresh => {}
            Ok(bytes) => problems.push(format!(
                "{}/{} is not what `{}` builds now: committed sha256:{}, built sha256:{}",
                DIR,
                component.file,
                component.package,
                sha256(&bytes),
                sha256(&fresh)
            )),
            Err(e) => problems.push(format!("{DIR}/{} cannot be read ({e})", component.file)),
        }
    }
    let sums_file = committed.join("SHA256SUMS");
    let expected = sha256sums(built)?;
    if std::fs::read_to_string(&sums_file).ok().as_deref() != Some(expected.as_str()) {
        problems.push(format!("{DIR}/SHA256SUMS does not list the digests of what the sources build"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\nrun `{REGENERATE}` and commit {DIR}/", problems.join("\n")))
    }
}

/// `SHA256SUMS` for `built`, in `sha256sum`'s format.
fn sha256sums(built: &[(&'static Component, PathBuf)]) -> Result<String, String> {
    let mut sums = String::new();
    for (component, path) in built {
        writeln!(sums, "{}  {}", sha256(&read(path)?), component.file).unwrap();
    }
    Ok(sums)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
