//! `cargo xtask publish <what>`: the release's uploads, each a command so the release workflow
//! (`.github/workflows/release.yml`) only calls xtask and the registries' official actions.
//!
//! - `check --tag TAG [--dir DIR]`: the tag is `v` + the workspace's version, and the published
//!   crates are at that one version (run before anything is built); with `--dir`, every
//!   artifact `dist` left there is at it too (`publish/lockstep.rs`; run before any upload).
//! - `crates [--dry-run] [--no-verify]`: `cargo publish` of the publishable crates,
//!   dependencies first (`publish/crates.rs`).
//! - `npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run] [--resume]`: `npm
//!   publish` of the tarballs `dist` made, dependencies first; refused when the registry already
//!   has one of them (`publish/npm.rs`).
//! - `wheels --dir DIR --out OUT [--index URL]`: the wheels of `DIR` alone into `OUT`, the
//!   directory `pypa/gh-action-pypi-publish` uploads whole; refused when the index already has
//!   one of them (`publish/wheels.rs`).
//! - `github --dir DIR --tag TAG [--dry-run]`: a GitHub release of `TAG` (`gh release create`)
//!   with every file of `DIR` (archives, wheels, npm tarballs, `SHA256SUMS`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod crates;
pub mod lockstep;
pub mod npm;
pub mod order;
pub mod wheels;

/// The subcommands `cargo xtask publish` accepts.
pub const SUBCOMMANDS: &[&str] = &["check", "crates", "npm", "wheels", "github"];

/// The usage lines of `publish`.
pub const USAGE: &str = "       cargo xtask publish check --tag TAG [--dir DIR]
       cargo xtask publish crates [--dry-run] [--no-verify]
       cargo xtask publish npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run] [--resume]
       cargo xtask publish wheels --dir DIR --out OUT [--index URL]
       cargo xtask publish github --dir DIR --tag TAG [--dry-run]";

/// Runs `publish <args>`; the lines to print.
pub fn run(workspace: &Path, args: &[&str]) -> Result<Vec<String>, String> {
    let Some((&what, rest)) = args.split_first() else {
        return Err(format!("publish what? one of: {}", SUBCOMMANDS.join(", ")));
    };
    let flags = Flags::parse(rest)?;
    match what {
        "check" => {
            flags.only(&["--tag", "--dir"])?;
            check(workspace, &flags.required("--tag")?, flags.value("--dir").as_deref().map(Path::new))
        }
        "crates" => {
            flags.only(&["--dry-run", "--no-verify"])?;
            let options = crates::Options {
                dry_run: flags.has("--dry-run"),
                verify: !flags.has("--no-verify"),
                allow_dirty: false,
            };
            crates::publish(workspace, &options)
        }
        "npm" => {
            flags.only(&["--dir", "--registry", "--tag", "--provenance", "--dry-run", "--resume"])?;
            npm::publish(&npm::Options {
                dir: flags.required("--dir")?.into(),
                registry: flags.value("--registry"),
                tag: flags.value("--tag"),
                provenance: flags.has("--provenance"),
                dry_run: flags.has("--dry-run"),
                resume: flags.has("--resume"),
                userconfig: None,
            })
        }
        "wheels" => {
            flags.only(&["--dir", "--out", "--index"])?;
            let (dir, out) = (flags.required("--dir")?, flags.required("--out")?);
            wheels::copy(Path::new(&dir), Path::new(&out), flags.value("--index").as_deref())
        }
        "github" => {
            flags.only(&["--dir", "--tag", "--dry-run"])?;
            github(Path::new(&flags.required("--dir")?), &flags.required("--tag")?, flags.has("--dry-run"))
        }
        other => Err(format!("no such publish command `{other}`; the commands are: {}", SUBCOMMANDS.join(", "))),
    }
}

/// `--name value` and `--switch` arguments.
pub(crate) struct Flags(Vec<(String, Option<String>)>);

impl Flags {
    /// The switches that take no value.
    const SWITCHES: &[&str] = &["--dry-run", "--provenance", "--no-verify", "--resume"];

    pub(crate) fn parse(args: &[&str]) -> Result<Flags, String> {
        let mut flags = Vec::new();
        let mut args = args.iter();
        while let Some(&arg) = args.next() {
            if !arg.starts_with("--") {
                return Err(format!("unexpected argument `{arg}`"));
            }
            let value = if Self::SWITCHES.contains(&arg) {
                None
            } else {
                Some(args.next().ok_or_else(|| format!("{arg} needs a value"))?.to_string())
            };
            flags.push((arg.to_owned(), value));
        }
        Ok(Flags(flags))
    }

    pub(crate) fn only(&self, allowed: &[&str]) -> Result<(), String> {
        match self.0.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            Some((name, _)) => Err(format!("unknown argument `{name}` (this command takes {})", allowed.join(", "))),
            None => Ok(()),
        }
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    pub(crate) fn value(&self, name: &str) -> Option<String> {
        self.0.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.clone())
    }

    /// Every value of a flag that may be repeated, in order.
    pub(crate) fn values(&self, name: &str) -> Vec<String> {
        self.0.iter().filter(|(n, _)| n == name).filter_map(|(_, v)| v.clone()).collect()
    }

    pub(crate) fn required(&self, name: &str) -> Result<String, String> {
        self.value(name).ok_or_else(|| format!("{name} is required"))
    }
}

/// The tag names the workspace's version, and the crates (and, with `dir`, the artifacts in
/// it) are all at it.
pub fn check(workspace: &Path, tag: &str, dir: Option<&Path>) -> Result<Vec<String>, String> {
    let expected = format!("v{}", crate::dist::VERSION);
    if tag != expected {
        return Err(format!(
            "the tag `{tag}` is not the workspace's version: Cargo.toml says {}, so the tag must be `{expected}`",
            crate::dist::VERSION
        ));
    }
    let crates = crates::publish_order(&crates::metadata(workspace)?)?;
    let mut lines = vec![format!("{tag}: {} crates at {}", crates.len(), crate::dist::VERSION)];
    if let Some(dir) = dir {
        lines.push(lockstep::artifacts(dir, crate::dist::VERSION)?);
    }
    Ok(lines)
}

/// `gh release create TAG` with every file of `dir`, its notes GitHub's generated ones.
pub fn github(dir: &Path, tag: &str, dry_run: bool) -> Result<Vec<String>, String> {
    let assets = files(dir, |_| true)?;
    if !assets.iter().any(|file| file.ends_with("SHA256SUMS")) {
        return Err(format!("{} holds no SHA256SUMS: run `cargo xtask dist` first", dir.display()));
    }
    let mut gh = Command::new("gh");
    gh.args(["release", "create", tag, "--verify-tag", "--title", tag, "--generate-notes"]).args(&assets);
    if dry_run {
        let args: Vec<String> = gh.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        return Ok(vec![format!("would run: gh {}", args.join(" "))]);
    }
    crate::dist::run(&mut gh, &format!("gh release create {tag}"))?;
    Ok(assets.iter().map(|file| file.display().to_string()).collect())
}

/// The files directly in `dir` whose names `keep` accepts, sorted.
pub(crate) fn files(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("listing {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|name| keep(&name.to_string_lossy())))
        .collect();
    files.sort();
    Ok(files)
}
