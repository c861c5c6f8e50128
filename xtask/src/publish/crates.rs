//! `cargo xtask publish crates [--dry-run] [--no-verify]`: `cargo publish` of every publishable
//! crate of the workspace, each after the crates it depends on (`--no-verify`: packaged and
//! checked, not built; the release rehearsal's test uses it, since tests/tests/published_crates.rs
//! builds the packaged crates already).
//!
//! Which crates and in which order come from `cargo metadata`, never from a list written here:
//! a crate is publishable unless its manifest says `publish = false`; it depends on the workspace
//! crates it names as normal or build dependencies (dev-dependencies are dropped by `cargo
//! publish` and so never order anything). Every publishable crate must have one version (the
//! workspace's): a crate left behind would be published depending on an old one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A crate to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    /// Its package name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its `Cargo.toml`.
    pub manifest: PathBuf,
}

/// `cargo metadata --no-deps` of the workspace at `workspace`.
pub fn metadata(workspace: &Path) -> Result<Value, String> {
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(workspace)
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata's output: {e}"))
}

/// The publishable crates of `metadata` (`cargo metadata`'s JSON), each after the workspace
/// crates it depends on; an error when their versions differ, when one depends on a workspace
/// crate that is not published, or when they depend on each other in a cycle.
pub fn publish_order(metadata: &Value) -> Result<Vec<Crate>, String> {
    let packages = metadata["packages"].as_array().ok_or("cargo metadata lists no packages")?;
    let field = |package: &Value, key: &str| {
        package[key].as_str().map(str::to_owned).ok_or_else(|| format!("a package without `{key}` in cargo metadata"))
    };
    let workspace_names: Vec<String> = packages.iter().map(|p| field(p, "name")).collect::<Result<_, _>>()?;
    // `publish`: null when the crate may go to any registry, a list of registries otherwise
    // (`publish = false` is the empty list).
    let publishable: Vec<&Value> =
        packages.iter().filter(|p| p["publish"].as_array().is_none_or(|registries| !registries.is_empty())).collect();

    let mut crates = BTreeMap::new();
    let mut depends_on = BTreeMap::new();
    let mut problems = Vec::new();
    for package in &publishable {
        let name = field(package, "name")?;
        let deps: Vec<String> = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|dep| dep["kind"].as_str() != Some("dev"))
            .filter_map(|dep| dep["name"].as_str().map(str::to_owned))
            .filter(|dep| workspace_names.contains(dep))
            .collect();
        for dep in &deps {
            if !publishable.iter().any(|p| p["name"].as_str() == Some(dep)) {
                problems.push(format!("{name} depends on {dep}, which is not published (`publish = false`)"));
            }
        }
        let manifest = PathBuf::from(field(package, "manifest_path")?);
        crates.insert(name.clone(), Crate { name: name.clone(), version: field(package, "version")?, manifest });
        depends_on.insert(name, deps);
    }
    let mut versions: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for krate in crates.values() {
        versions.entry(&krate.version).or_default().push(&krate.name);
    }
    if versions.len() > 1 {
        let listed: Vec<String> =
            versions.iter().map(|(version, names)| format!("{version}: {}", names.join(", "))).collect();
        problems.push(format!(
            "the published crates are not at one version ({}); set `version.workspace = true` in each",
            listed.join("; ")
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let order = super::order::dependencies_first(&depends_on)?;
    Ok(order.into_iter().map(|name| crates.remove(&name).unwrap()).collect())
}

/// How `cargo publish` runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `--dry-run`: everything but the upload.
    pub dry_run: bool,
    /// Build each packaged crate (cargo's default); without it, packaged and checked only.
    pub verify: bool,
    /// Package the working tree's files even where they differ from git's (`--allow-dirty`):
    /// for a rehearsal of a release not yet committed; a release publishes its tag's checkout.
    pub allow_dirty: bool,
}

/// Publishes every publishable crate in order, one `cargo publish` each (cargo waits until
/// the registry serves a crate before it returns, so the next one resolves it). With
/// `dry_run`, one `cargo publish --dry-run` of them all, in the same order: cargo packages and
/// builds each against the others' packaged sources, since none of them is on the registry
/// yet. crates.io's token comes from the environment (`CARGO_REGISTRY_TOKEN`).
pub fn publish(workspace: &Path, options: &Options) -> Result<Vec<String>, String> {
    let Options { dry_run, verify, allow_dirty } = *options;
    let crates = publish_order(&metadata(workspace)?)?;
    let cargo = || {
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo.args(["publish", "--locked"]).current_dir(workspace);
        if !verify {
            cargo.arg("--no-verify");
        }
        if allow_dirty {
            cargo.arg("--allow-dirty");
        }
        cargo
    };
    if dry_run {
        let mut all = cargo();
        all.arg("--dry-run");
        for krate in &crates {
            all.args(["--package", &krate.name]);
        }
        crate::dist::run(&mut all, "cargo publish --dry-run of the published crates")?;
    } else {
        for krate in &crates {
            let what = format!("cargo publish of {} {}", krate.name, krate.version);
            crate::dist::run(cargo().args(["--package", &krate.name]), &what)?;
        }
    }
    let suffix = if dry_run { " (dry run)" } else { "" };
    Ok(crates.iter().map(|krate| format!("{} {}{suffix}", krate.name, krate.version)).collect())
}
