//! `cargo xtask publish <what>`: the release's uploads, each a command so the release workflow
//! (`.github/workflows/release.yml`) only calls xtask and the registries' official actions.
//!
//! - `check --tag TAG`: the tag is `v` + the workspace's version, and the published crates are
//!   at that one version (run before anything is built or uploaded).
//! - `crates [--dry-run]`: `cargo publish` of the publishable crates, dependencies first
//!   (`publish/crates.rs`).
//! - `npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run]`: `npm publish` of
//!   the tarballs `dist` made, dependencies first (`publish/npm.rs`).
//! - `wheels --dir DIR --out OUT`: the wheels of `DIR` alone into `OUT`, the directory
//!   `pypa/gh-action-pypi-publish` uploads whole.
//! - `github --dir DIR --tag TAG [--dry-run]`: a GitHub release of `TAG` (`gh release create`)
//!   with every file of `DIR` (archives, wheels, npm tarballs, `SHA256SUMS`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod crates;
pub mod npm;
pub mod order;

/// The subcommands `cargo xtask publish` accepts.
pub const SUBCOMMANDS: &[&str] = &["check", "crates", "npm", "wheels", "github"];

/// The usage lines of `publish`.
pub const USAGE: &str = "       cargo xtask publish check --tag TAG
       cargo xtask publish crates [--dry-run]
       cargo xtask publish npm --dir DIR [--registry URL] [--tag TAG] [--provenance] [--dry-run]
       cargo xtask publish wheels --dir DIR --out OUT
       cargo xtask publish github --dir DIR --tag TAG [--dry-run]";

/// Runs `publish <args>`; the lines to print.
pub fn run(workspace: &Path, args: &[&str]) -> Result<Vec<String>, String> {
    let Some((&what, rest)) = args.split_first() else {
        return Err(format!("publish what? one of: {}", SUBCOMMANDS.join(", ")));
    };
    let flags = Flags::parse(rest)?;
    match what {
        "check" => check(workspace, &flags.required("--tag")?),
        "crates" => {
            flags.only(&["--dry-run"])?;
            crates::publish(workspace, flags.has("--dry-run"))
        }
        "npm" => {
            flags.only(&["--dir", "--registry", "--tag", "--provenance", "--dry-run"])?;
            npm::publish(&npm::Options {
                dir: flags.required("--dir")?.into(),
                registry: flags.value("--registry"),
                tag: flags.value("--tag"),
                provenance: flags.has("--provenance"),
                dry_run: flags.has("--dry-run"),
            })
        }
        "wheels" => {
            flags.only(&["--dir", "--out"])?;
            wheels(Path::new(&flags.required("--dir")?), Path::new(&flags.required("--out")?))
        }
        "github" => {
            flags.only(&["--dir", "--tag", "--dry-run"])?;
            github(Path::new(&flags.required("--dir")?), &flags.required("--tag")?, flags.has("--dry-run"))
        }
        other => Err(format!("no such publish command `{other}`; the commands are: {}", SUBCOMMANDS.join(", "))),
    }
}

/// `--name value` and `--switch` arguments.
struct Flags(Vec<(String, Option<String>)>);

impl Flags {
    /// The switches that take no value.
    const SWITCHES: &[&str] = &["--dry-run", "--provenance"];

    fn parse(args: &[&str]) -> Result<Flags, String> {
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

    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        match self.0.iter().find(|(name, _)| !allowed.contains(&name.as_str())) {
            Some((name, _)) => Err(format!("unknown argument `{name}` (this command takes {})", allowed.join(", "))),
            None => Ok(()),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    fn value(&self, name: &str) -> Option<String> {
        self.0.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.clone())
    }

    fn required(&self, name: &str) -> Result<String, String> {
        self.value(name).ok_or_else(|| format!("{name} is required"))
    }
}

/// The tag names the workspace's version, and the crates are all at it.
fn check(workspace: &Path, tag: &str) -> Result<Vec<String>, String> {
    let expected = format!("v{}", crate::dist::VERSION);
    if tag != expected {
        return Err(format!(
            "the tag `{tag}` is not the workspace's version: Cargo.toml says {}, so the tag must be `{expected}`",
            crate::dist::VERSION
        ));
    }
    let crates = crates::publish_order(&crates::metadata(workspace)?)?;
    Ok(vec![format!("{tag}: {} crates at {}", crates.len(), crate::dist::VERSION)])
}

/// Copies the wheels of `dir` into `out` (emptied first); their paths.
fn wheels(dir: &Path, out: &Path) -> Result<Vec<String>, String> {
    let wheels = files(dir, |name| name.ends_with(".whl"))?;
    if wheels.is_empty() {
        return Err(format!("{} holds no wheel: run `cargo xtask dist` first", dir.display()));
    }
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("emptying {}: {e}", out.display()))?;
    }
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut copied = Vec::new();
    for wheel in wheels {
        let to = out.join(wheel.file_name().unwrap());
        std::fs::copy(&wheel, &to).map_err(|e| format!("copying {}: {e}", wheel.display()))?;
        copied.push(to.display().to_string());
    }
    Ok(copied)
}

/// `gh release create TAG` with every file of `dir`, its notes GitHub's generated ones.
fn github(dir: &Path, tag: &str, dry_run: bool) -> Result<Vec<String>, String> {
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
fn files(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("listing {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|name| keep(&name.to_string_lossy())))
        .collect();
    files.sort();
    Ok(files)
}
