//! `cargo xtask publish npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run]`:
//! `npm publish` of every package tarball `cargo xtask dist` left in `DIR`, each after the
//! packages it depends on — the platform packages (`@scratchpad-dev/cli-<os>-<cpu>`, the host's
//! addons) first, then the launcher, the host's JavaScript API and the Claude Code plugin,
//! whose `optionalDependencies` name them. A user who installs a package in between therefore
//! never meets a dependency that is not there yet.
//!
//! The order comes from each tarball's own `package.json`, not from a list written here.
//!
//! A version is published once. Before uploading anything, every package's version is looked up
//! on the registry: if one is already there, nothing is published and the error names each
//! (a version that was not bumped, or a release already out). `--resume` finishes a release
//! whose publish stopped half-way (the job run again): a package already there with the same
//! tarball (npm's `integrity`) is skipped, one there with other bytes is refused.
//!
//! The dist-tag is `latest` for a release version and `next` for a pre-release (`1.2.0-rc.1`),
//! so `npm install @scratchpad-dev/cli` never picks a release candidate; `--tag` overrides it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha512};

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
    /// The dist-tag; [`dist_tag`] of the version when none is given.
    pub tag: Option<String>,
    /// `npm publish --provenance` (needs a CI with an OIDC token: GitHub Actions'
    /// `id-token: write`).
    pub provenance: bool,
    /// `npm publish --dry-run`: everything but the upload.
    pub dry_run: bool,
    /// Skip the packages the registry already has with the same tarball (a publish that
    /// stopped half-way, run again); without it any package already there stops everything.
    pub resume: bool,
    /// The npm configuration file of the publishing user (`NPM_CONFIG_USERCONFIG`), when not
    /// the user's own `~/.npmrc`.
    pub userconfig: Option<PathBuf>,
}

/// The dist-tag a version goes out under: `next` for a pre-release, `latest` otherwise.
pub fn dist_tag(version: &str) -> &'static str {
    if version.contains('-') { "next" } else { "latest" }
}

/// npm's `integrity` of a tarball: `sha512-` and the base64 of its SHA-512.
pub fn integrity(file: &Path) -> Result<String, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    Ok(format!("sha512-{}", base64::engine::general_purpose::STANDARD.encode(Sha512::digest(&bytes))))
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

/// The packages of `packages` whose version the registry already serves, with the integrity
/// the registry has for each.
pub fn already_published(packages: &[Package], options: &Options) -> Vec<(Package, String)> {
    packages
        .iter()
        .filter_map(|package| {
            let id = format!("{}@{}", package.name, package.version);
            registry_integrity(&id, options).map(|integrity| (package.clone(), integrity))
        })
        .collect()
}

/// Publishes the packages of `options.dir` in order; a line per package.
pub fn publish(options: &Options) -> Result<Vec<String>, String> {
    let order = publish_order(&options.dir)?;
    let mut skip = Vec::new();
    if !options.dry_run {
        let there = already_published(&order, options);
        if !there.is_empty() && !options.resume {
            let ids: Vec<String> = there.iter().map(|(p, _)| format!("{}@{}", p.name, p.version)).collect();
            return Err(format!(
                "the npm registry already has {}: a version is published once, so nothing was published (bump \
                 the version, docs/releasing.md; or finish a publish that stopped half-way with --resume)",
                ids.join(", ")
            ));
        }
        let mut differ = Vec::new();
        for (package, theirs) in there {
            if integrity(&package.file)? == theirs {
                skip.push(package.name);
            } else {
                differ.push(format!("{}@{} ({theirs})", package.name, package.version));
            }
        }
        if !differ.is_empty() {
            return Err(format!(
                "the npm registry already has other bytes for {}: these tarballs are not the ones published, so \
                 nothing was published",
                differ.join(", ")
            ));
        }
    }
    let mut done = Vec::new();
    for package in order {
        let id = format!("{}@{}", package.name, package.version);
        if skip.contains(&package.name) {
            done.push(format!("{id} is already on the registry with these bytes: skipped"));
            continue;
        }
        let tag = options.tag.clone().unwrap_or_else(|| dist_tag(&package.version).to_owned());
        let mut npm = npm_command(options);
        npm.arg("publish").arg(&package.file).args(["--access", "public", "--tag", &tag]);
        if options.provenance {
            npm.arg("--provenance");
        }
        if options.dry_run {
            npm.arg("--dry-run");
        }
        crate::dist::run(&mut npm, &format!("npm publish of {id}"))?;
        done.push(format!("{id} under the dist-tag {tag}{}", if options.dry_run { " (dry run)" } else { "" }));
    }
    Ok(done)
}

/// An `npm` command with the options' registry and user configuration.
fn npm_command(options: &Options) -> Command {
    let mut npm = Command::new("npm");
    if let Some(registry) = &options.registry {
        npm.args(["--registry", registry]);
    }
    if let Some(userconfig) = &options.userconfig {
        npm.env("NPM_CONFIG_USERCONFIG", userconfig);
    }
    npm
}

/// The integrity the registry has for `id` (`name@version`), if it serves that version.
fn registry_integrity(id: &str, options: &Options) -> Option<String> {
    let output = npm_command(options).args(["view", id, "dist.integrity"]).output().ok()?;
    let integrity = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !integrity.is_empty()).then_some(integrity)
}
