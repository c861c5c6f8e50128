//! `cargo xtask dist assemble --from DIR... [--out DIR] [--complete]`: the release's artifacts
//! put together from the targets' own, built on different machines (`dist --target TRIPLE
//! --no-assemble` on each; the release builds Linux and Windows on Linux and each macOS target
//! on a macOS runner of its architecture).
//!
//! The files of every `--from` directory are copied into `--out` (emptied first), then the
//! packages that must name every platform's package are made over them — the launcher
//! `@scratchpad-dev/cli`, the host's JavaScript API `@scratchpad-dev/host`, the Claude Code
//! plugin with its shrinkwrap — and `SHA256SUMS` over it all. Which platforms there are comes
//! from the files themselves (each npm tarball's own `package.json`), never from a list passed
//! along: `dist` without `--no-assemble` runs this same step over the files it just wrote.
//!
//! Refused, before anything is packed: a file two directories both hold (a target built
//! twice), a directory that is already a whole `dist` (its `SHA256SUMS`, or a package this step
//! makes), an npm package that is no target's, and a target missing its CLI package, its addon
//! package or its archive; with `--complete` (the release), a target of `targets.rs` with
//! nothing at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::npm::Packed;
use super::targets::{self, Target};
use super::{VERSION, node, npm};

/// What to put together.
#[derive(Debug, Clone)]
pub struct Options {
    /// The directories of the targets' own artifacts (`dist --no-assemble`'s `--out`).
    pub from: Vec<PathBuf>,
    /// Where the release's artifacts go (emptied first).
    pub out: PathBuf,
    /// Every target of `targets.rs` must be there.
    pub complete: bool,
    /// Where the packages are laid out before they are packed.
    pub staging: PathBuf,
}

impl Options {
    /// Parses `dist assemble`'s arguments: `--from DIR... [--out DIR] [--complete]`.
    pub fn parse(workspace: &Path, args: &[&str]) -> Result<Options, String> {
        let mut options = Options {
            from: Vec::new(),
            out: crate::target_dir(workspace).join("dist"),
            complete: false,
            staging: super::staging_dir(workspace),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().copied().ok_or_else(|| format!("{arg} needs a value"));
            match *arg {
                "--from" => options.from.push(super::absolute(value()?, "--from")?),
                "--out" => options.out = super::absolute(value()?, "--out")?,
                "--complete" => options.complete = true,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if options.from.is_empty() {
            return Err(
                "dist assemble needs --from DIR (the --out of a `dist --no-assemble`), once per directory".into()
            );
        }
        Ok(options)
    }
}

/// Puts the artifacts of `options.from` together in `options.out`; every file there,
/// `SHA256SUMS` last.
pub fn assemble(workspace: &Path, options: &Options) -> Result<Vec<PathBuf>, String> {
    let out = &options.out;
    for from in &options.from {
        if from == out || from.starts_with(out) {
            return Err(format!("--from {} is --out or inside it, which is emptied first", from.display()));
        }
        if !from.is_dir() {
            return Err(format!("--from {}: no such directory", from.display()));
        }
    }
    // Everything is read before `out` is touched: a refused set leaves it as it was.
    let mut sources: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut problems = Vec::new();
    for from in &options.from {
        let found = files(from)?;
        if found.is_empty() {
            problems.push(format!("{} holds no file", from.display()));
        }
        for file in found {
            let name = file_name(&file);
            if name == "SHA256SUMS" {
                problems.push(format!(
                    "{} holds a SHA256SUMS: it is a whole `dist`, not a target's own artifacts (`dist --no-assemble`)",
                    from.display()
                ));
            } else if let Some(other) = sources.get(&name) {
                problems.push(format!(
                    "{name} is in both {} and {}",
                    other.parent().unwrap().display(),
                    from.display()
                ));
            } else {
                sources.insert(name, file);
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!("nothing was assembled:\n  {}", problems.join("\n  ")));
    }
    super::empty(out)?;
    for (name, file) in &sources {
        npm::copy(file, &out.join(name))?;
    }
    let platforms = platforms_in(out)?;
    if options.complete {
        let missing: Vec<&str> =
            targets::ALL.iter().filter(|t| !platforms.targets().contains(t)).map(|t| t.triple).collect();
        if !missing.is_empty() {
            return Err(format!("--complete: no artifacts of {} among the --from directories", missing.join(", ")));
        }
    }
    packages(&Staging::new(workspace, options.staging.clone()), &platforms, out)
}

/// The platform packages among a directory's artifacts, each with its target, in the order of
/// `targets.rs`.
#[derive(Debug, Clone, Default)]
pub struct Platforms {
    /// The packages carrying the CLI (`@scratchpad-dev/cli-<os>-<cpu>`).
    pub cli: Vec<(Target, Packed)>,
    /// The packages carrying the Node addon (`@scratchpad-dev/host-<platform>`).
    pub addons: Vec<(Target, Packed)>,
}

impl Platforms {
    /// The targets the platform packages are for.
    pub fn targets(&self) -> Vec<Target> {
        self.cli.iter().map(|(target, _)| *target).collect()
    }
}

/// Reads the platform packages of `dir` (its `*.tgz`) and checks that every target there has
/// its CLI package, its addon package and its archive, and that no package is another kind.
pub fn platforms_in(dir: &Path) -> Result<Platforms, String> {
    let mut platforms = Platforms::default();
    let mut problems = Vec::new();
    let mut archives = Vec::new();
    for file in files(dir)? {
        let name = file_name(&file);
        if let Some(target) = targets::ALL.iter().find(|t| name.ends_with(&format!("-{}.tar.gz", t.triple))) {
            archives.push(*target);
            continue;
        }
        if !name.ends_with(".tgz") {
            continue;
        }
        let manifest = crate::publish::npm::manifest_of(&file)?;
        let package = manifest["name"].as_str().unwrap_or("(no name)").to_owned();
        let cli = targets::ALL.iter().find(|t| t.npm_package() == package);
        let addon = targets::ALL.iter().find(|t| format!("{}-{}", node::HOST, t.node_platform()) == package);
        let (list, target) = match (cli, addon) {
            (Some(target), _) => (&mut platforms.cli, target),
            (None, Some(target)) => (&mut platforms.addons, target),
            (None, None) => {
                problems.push(format!(
                    "{name} is {package}, which is no target's platform package (the launcher, the host's API and \
                     the Claude Code plugin are made here, over the platform packages)"
                ));
                continue;
            }
        };
        if list.iter().any(|(t, _)| t == target) {
            problems.push(format!("two packages of {package}: {name} and another"));
            continue;
        }
        let integrity = crate::publish::npm::integrity(&file)?;
        list.push((*target, Packed { name: package, file, integrity }));
    }
    let position = |target: &Target| targets::ALL.iter().position(|t| t == target);
    platforms.cli.sort_by_key(|(target, _)| position(target));
    platforms.addons.sort_by_key(|(target, _)| position(target));

    for target in targets::ALL {
        let has = |list: &[(Target, Packed)]| list.iter().any(|(t, _)| t == target);
        let pieces = [
            (has(&platforms.cli), format!("the npm package {}", target.npm_package())),
            (has(&platforms.addons), format!("the npm package {}-{}", node::HOST, target.node_platform())),
            (archives.contains(target), format!("the archive scratchpad-{VERSION}-{}.tar.gz", target.triple)),
        ];
        if pieces.iter().any(|(there, _)| *there) {
            for (_, missing) in pieces.iter().filter(|(there, _)| !there) {
                problems.push(format!("{} lacks {missing}", target.triple));
            }
        }
    }
    if platforms.cli.is_empty() && problems.is_empty() {
        problems.push("no platform package (@scratchpad-dev/cli-<os>-<cpu>): nothing to assemble".into());
    }
    if !problems.is_empty() {
        return Err(format!("the artifacts in {} cannot be assembled:\n  {}", dir.display(), problems.join("\n  ")));
    }
    Ok(platforms)
}

/// Packs the packages that choose among `platforms` into `out` and writes `SHA256SUMS`; every
/// file of `out`, `SHA256SUMS` last.
pub fn packages(staging: &Staging, platforms: &Platforms, out: &Path) -> Result<Vec<PathBuf>, String> {
    node::host_package(staging, &platforms.addons, out)?;
    npm::launcher(staging, &platforms.cli, out)?;
    npm::claude_code_plugin(staging, &platforms.cli, out)?;
    write_sha256sums(out)
}

/// Where packages are laid out before they are packed (one emptied directory each), and the
/// workspace whose sources they take.
pub struct Staging<'a> {
    pub(super) workspace: &'a Path,
    dir: PathBuf,
}

impl<'a> Staging<'a> {
    /// Staging under `dir`.
    pub fn new(workspace: &'a Path, dir: PathBuf) -> Staging<'a> {
        Staging { workspace, dir }
    }

    /// A scratch directory for `name`, emptied.
    pub(super) fn scratch(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.dir.join(name);
        super::empty(&dir)?;
        Ok(dir)
    }
}

/// The files directly in `dir`, sorted.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    crate::publish::files(dir, |_| true)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

/// Writes `SHA256SUMS` over every file in `out` (`sha256sum`'s format, sorted by name); the
/// files, `SHA256SUMS` last.
fn write_sha256sums(out: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = files(out)?;
    let mut sums = String::new();
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
        sums.push_str(&format!("{}  {}\n", hex::encode(Sha256::digest(&bytes)), file_name(file)));
    }
    let path = out.join("SHA256SUMS");
    std::fs::write(&path, sums).map_err(|e| format!("writing {}: {e}", path.display()))?;
    files.push(path);
    Ok(files)
}
