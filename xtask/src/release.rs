//! `cargo xtask release --dry-run`: the release workflow (`.github/workflows/release.yml`)
//! rehearsed on this machine, every step the same xtask code the workflow runs, the uploads
//! going to registries on loopback instead of npm, PyPI and GitHub:
//!
//! 1. `publish check --tag v<version>`: the crates are at the workspace's one version.
//! 2. `dist` for the targets given (`--target`; by default those whose binaries run here), or
//!    the artifacts an earlier `dist` left in `--dist DIR`.
//! 3. `publish check --tag … --dir DIR`: every npm package, wheel and archive is at it too.
//! 4. Nothing would be published twice: no package's version is on the npm registry yet, no
//!    wheel's file on the Python index — all looked up before anything is uploaded, and every
//!    one found is named.
//! 5. `publish crates --dry-run`: `cargo publish --dry-run` of the crates, dependencies first
//!    (`--no-verify`: packaged, not built), of the working tree as it is (`--allow-dirty`: a
//!    rehearsal comes before the release's commit; the workflow packages the tag's checkout).
//! 6. `publish npm` to the npm registry: platform packages first, each under its dist-tag.
//! 7. `publish wheels` into this run's directory, then uploaded to the Python index by twine
//!    (what `pypa/gh-action-pypi-publish` runs).
//! 8. `publish github --dry-run`: the `gh release create` the workflow would run.
//!
//! The registries are `--npm-registry URL` (publishing as the user of the npm configuration in
//! force: `NPM_CONFIG_USERCONFIG`) and `--python-index URL` (pypiserver's root: uploads go there,
//! its simple index is `URL/simple/`), or else a verdaccio and a pypiserver started on loopback
//! for the run ([`loopback`]). A real release is only ever the workflow's, on a pushed tag.

use std::path::{Path, PathBuf};

use crate::dist::{self, Target, VERSION};
use crate::publish::{self, Flags, crates, npm, wheels};

mod loopback;

/// The usage line of `release`.
pub const USAGE: &str = "       cargo xtask release --dry-run [--dist DIR | [--target TRIPLE]... [--profile NAME]] \
                         [--npm-registry URL] [--python-index URL] [--no-verify]";

/// The pins of the loopback registries and the uploader.
const REQUIREMENTS: &str = "xtask/rehearsal-requirements.txt";

/// What to rehearse.
#[derive(Debug, Clone)]
pub struct Options {
    /// Artifacts already built (`dist`'s output) instead of building them.
    pub dist: Option<PathBuf>,
    /// The targets to build when `dist` is `None`.
    pub targets: Vec<Target>,
    /// The cargo profile to build them in.
    pub profile: String,
    /// An npm registry to publish to instead of a verdaccio started for the run.
    pub npm_registry: Option<String>,
    /// A Python index (its root) to upload to instead of a pypiserver started for the run.
    pub python_index: Option<String>,
    /// `cargo publish --dry-run` builds each packaged crate (without: packaged only).
    pub verify_crates: bool,
}

/// Runs `release <args>`; the lines to print.
pub fn run(workspace: &Path, args: &[&str]) -> Result<Vec<String>, String> {
    let flags = Flags::parse(args)?;
    flags.only(&["--dry-run", "--dist", "--target", "--profile", "--npm-registry", "--python-index", "--no-verify"])?;
    if !flags.has("--dry-run") {
        return Err("`release` only rehearses (`release --dry-run`): a release is made by \
                    .github/workflows/release.yml on a pushed tag (docs/releasing.md)"
            .into());
    }
    let dist = flags.value("--dist").map(|dir| std::path::absolute(dir).map_err(|e| format!("--dist: {e}")));
    let dist = dist.transpose()?;
    if dist.is_some() && (flags.has("--target") || flags.has("--profile")) {
        return Err("--dist takes artifacts already built; --target and --profile say what to build".into());
    }
    let mut targets: Vec<Target> =
        flags.values("--target").iter().map(|t| Target::named(t)).collect::<Result<_, _>>()?;
    if targets.is_empty() {
        targets = dist::targets::ALL.iter().copied().filter(Target::runs_here).collect();
    }
    if dist.is_none() && targets.is_empty() {
        return Err("no release target runs on this machine: name one with --target".into());
    }
    rehearse(
        workspace,
        &Options {
            dist,
            targets,
            profile: flags.value("--profile").unwrap_or_else(|| "release".into()),
            npm_registry: flags.value("--npm-registry"),
            python_index: flags.value("--python-index"),
            verify_crates: !flags.has("--no-verify"),
        },
    )
}

/// The rehearsal (the module's documentation lists its steps); what each step did.
pub fn rehearse(workspace: &Path, options: &Options) -> Result<Vec<String>, String> {
    let work = crate::target_dir(workspace).join("rehearsal");
    let tag = format!("v{VERSION}");
    let mut lines = Vec::new();
    let step = |name: &str| eprintln!("release rehearsal: {name}");

    step("publish check (the crates)");
    lines.extend(publish::check(workspace, &tag, None)?);
    let dir = match &options.dist {
        Some(dir) => dir.clone(),
        None => {
            step("dist");
            let out = work.join("dist");
            let targets = options.targets.clone();
            let profile = options.profile.clone();
            dist::dist(workspace, &dist::Options { targets, profile, out: out.clone(), assemble: true })?;
            out
        }
    };
    step("publish check (the artifacts)");
    // The crates' line again first: the artifacts' line is what is new.
    lines.extend(publish::check(workspace, &tag, Some(&dir))?.into_iter().skip(1));

    let tools = dist::tools::install_pins(workspace, REQUIREMENTS, "rehearsal-tools")?;
    // This run's own files (the registries' storage, the wheels to upload), so rehearsals may
    // run side by side; removed when it ends, after the registries stop (declared first, dropped
    // last).
    let run_dir = Scratch(create(&work.join(format!("run-{}", std::process::id())))?);
    let registries = run_dir.0.join("registries");
    let mut servers = Vec::new();
    let (npm_registry, userconfig) = match &options.npm_registry {
        Some(url) => (url.clone(), None),
        None => {
            step("starting verdaccio");
            let (server, npmrc) = loopback::verdaccio(workspace, &create(&registries.join("npm"))?)?;
            let url = server.url.clone();
            servers.push(server);
            (url, Some(npmrc))
        }
    };
    let python_index = match &options.python_index {
        Some(url) => url.clone(),
        None => {
            step("starting pypiserver");
            let server = loopback::pypiserver(&create(&registries.join("python"))?, &tools)?;
            let url = server.url.clone();
            servers.push(server);
            url
        }
    };
    let simple_index = format!("{}/simple/", python_index.trim_end_matches('/'));
    let npm_options =
        npm::Options { dir: dir.clone(), registry: Some(npm_registry.clone()), userconfig, ..npm::Options::default() };

    step("nothing published twice");
    let mut twice: Vec<String> = npm::already_published(&npm::publish_order(&dir)?, &npm_options)
        .into_iter()
        .map(|(package, _)| format!("{}@{} on the npm registry {npm_registry}", package.name, package.version))
        .collect();
    let wheel_files = publish::files(&dir, |name| name.ends_with(".whl"))?;
    twice.extend(
        wheels::already_on_index(&wheel_files, &simple_index)?
            .into_iter()
            .map(|wheel| format!("{wheel} on the Python index {simple_index}")),
    );
    if !twice.is_empty() {
        return Err(format!(
            "these would be published twice (a version is published once; bump it, docs/releasing.md), so nothing \
             was published:\n  {}",
            twice.join("\n  ")
        ));
    }

    step("publish crates --dry-run");
    let crates_options = crates::Options { dry_run: true, verify: options.verify_crates, allow_dirty: true };
    lines.extend(crates::publish(workspace, &crates_options)?);
    step("publish npm");
    lines.extend(npm::publish(&npm_options)?);
    step("publish wheels, uploaded by twine");
    let pypi = run_dir.0.join("pypi");
    wheels::copy(&dir, &pypi, Some(&simple_index))?;
    lines.extend(wheels::upload(&pypi, &python_index, &tools)?);
    step("publish github --dry-run");
    lines.extend(publish::github(&dir, &tag, true)?);
    lines.push(format!("rehearsed {tag}: npm packages on {npm_registry}, wheels on {simple_index}"));
    drop(servers);
    Ok(lines)
}

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `dir`, created.
fn create(dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir.to_owned())
}
