//! `cargo xtask publish npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run]`:
//! `npm publish` of every package tarball `cargo xtask dist` left in `DIR`, each after the
//! packages it depends on — the platform packages (`@scratchpad-dev/cli-<os>-<cpu>`, the host's
//! addons) first, then the launcher, the host's JavaScript API and the Claude Code plugin,
//! whose `optionalDependencies` name them. A user who installs a package in between therefore
//! never meets a dependency that is not there yet.
//!
//! The order comes from each tarball's own `package.json`, not from a list written here. A
//! package whose version the registry already has is skipped, so a release whose publish
//! failed half-way is finished by running the job again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A packed npm package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The tarball.
    pub file: PathBuf,
}

/// What `publish npm` was asked.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The directory of tarballs (`target/dist`).
    pub dir: PathBuf,
    /// Another registry than the user's configured one.
    pub registry: Option<String>,
    /// The dist-tag (npm's default: `latest`).
    pub tag: Option<String>,
    /// `npm publish --provenance` (needs a CI with an OIDC token: GitHub Actions'
    /// `id-token: write`).
    pub provenance: bool,
    /// `npm publish --dry-run`: everything but the upload.
    pub dry_run: bool,
}

/// The manifest inside an npm tarball (`package/package.json`), read with `tar`.
pub fn manifest_of(tarball: &Path) -> Result<Value, String> {
    let output = Command::new("tar")
        .args(["-xzOf"])
        .arg(tarball)
        .arg("package/package.json")
        .output()
        .map_err(|e| format!("running tar: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "reading package/package.json from {}: {}",
            tarball.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("{}: package.json: {e}", tarball.display()))
}

/// The packages of `dir` (its `*.tgz`), each after those of them it depends on (`dependencies`,
/// `optionalDependencies` or `peerDependencies`).
pub fn publish_order(dir: &Path) -> Result<Vec<Package>, String> {
    let mut tarballs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("listing {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .collect();
    tarballs.sort();
    if tarballs.is_empty() {
        return Err(format!("{} holds no npm package (*.tgz): run `cargo xtask dist` first", dir.display()));
    }
    let mut packages = BTreeMap::new();
    let mut depends_on = BTreeMap::new();
    for file in tarballs {
        let manifest = manifest_of(&file)?;
        let text = |key: &str| {
            manifest[key].as_str().map(str::to_owned).ok_or_else(|| format!("{}: no `{key}`", file.display()))
        };
        let (name, version) = (text("name")?, text("version")?);
        let deps: Vec<String> = ["dependencies", "optionalDependencies", "peerDependencies"]
            .iter()
            .filter_map(|key| manifest[key].as_object())
            .flat_map(|deps| deps.keys().cloned())
            .collect();
        if let Some(other) = packages.insert(name.clone(), Package { name: name.clone(), version, file: file.clone() })
        {
            return Err(format!("{} and {} are both {name}", other.file.display(), file.display()));
        }
        depends_on.insert(name, deps);
    }
    let order = super::order::dependencies_first(&depends_on)?;
    Ok(order.into_iter().map(|name| packages.remove(&name).unwrap()).collect())
}

/// Publishes the packages of `options.dir` in order; a line per package.
pub fn publish(options: &Options) -> Result<Vec<String>, String> {
    let mut done = Vec::new();
    for package in publish_order(&options.dir)? {
        let id = format!("{}@{}", package.name, package.version);
        if !options.dry_run && published(&id, options.registry.as_deref()) {
            done.push(format!("{id} is already on the registry: skipped"));
            continue;
        }
        let mut npm = Command::new("npm");
        npm.arg("publish").arg(&package.file).args(["--access", "public"]);
        if let Some(registry) = &options.registry {
            npm.args(["--registry", registry]);
        }
        if let Some(tag) = &options.tag {
            npm.args(["--tag", tag]);
        }
        if options.provenance {
            npm.arg("--provenance");
        }
        if options.dry_run {
            npm.arg("--dry-run");
        }
        crate::dist::run(&mut npm, &format!("npm publish of {id}"))?;
        done.push(format!("{id}{}", if options.dry_run { " (dry run)" } else { "" }));
    }
    Ok(done)
}

/// Whether the registry already serves `id` (`name@version`).
fn published(id: &str, registry: Option<&str>) -> bool {
    let mut npm = Command::new("npm");
    npm.args(["view", id, "version"]);
    if let Some(registry) = registry {
        npm.args(["--registry", registry]);
    }
    npm.output().is_ok_and(|o| o.status.success() && !o.stdout.trim_ascii().is_empty())
}
