//! `cargo xtask dist`: every release artifact into `target/dist/`, with `SHA256SUMS`.
//!
//! For each target (those `--target` picks, else every one whose toolchain this machine has:
//! on Linux the Linux and Windows targets, on macOS the macOS ones; `targets.rs`):
//! - the CLI as a binary wheel (`scratchpad-cli`, maturin `bindings = "bin"`; with the
//!   precompiled components below as data in `share/scratchpad/precompiled`), whose build
//!   leaves the `scratchpad` binary in the build directory; that same binary goes into
//! - `scratchpad-<version>-<target>.tar.gz` (the binary, the README, the licence), and
//! - the npm package carrying it (`@scratchpad-dev/cli-<os>-<cpu>`), both with the embedded
//!   components compiled ahead of time in `precompiled/` beside the binary when a binary of the
//!   build that runs here can compile for the target's architecture (`precompiled.rs`);
//! - on Linux and macOS, the host as a Python extension wheel (`scratchpad-host`: manylinux
//!   on Linux; the same `precompiled/` beside the extension), and
//! - the host as a Node addon (`@scratchpad-dev/host-<os>-<cpu>[-gnu]`), with the same
//!   `precompiled/` beside the addon.
//!
//! Then (`assemble.rs`) the npm packages that choose among the platform packages: the launcher
//! `@scratchpad-dev/cli` (`bin: scratchpad`) and the Claude Code plugin
//! `@scratchpad-dev/claude-code`, and the host's JavaScript API `@scratchpad-dev/host` over the
//! addons; and `SHA256SUMS`. Every version is the workspace's (`Cargo.toml`).
//!
//! Targets built on different machines (the release builds the macOS ones on macOS) come
//! together in two steps: `dist --target TRIPLE --no-assemble` writes that target's own
//! artifacts only, and `dist assemble --from DIR…` takes the artifacts of those directories and
//! adds the packages that choose among them and `SHA256SUMS`. `dist` alone is both steps on one
//! machine, and its second step is the same code reading the same files.
//!
//! Nothing here needs a wasm target: the components come prebuilt (`components/`). Builds go to
//! `target/dist-build` (one cargo target directory for every target and profile), the pinned
//! tools to `target/dist-tools`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod archive;
pub mod assemble;
mod cargo_env;
pub mod node;
pub mod npm;
mod precompiled;
mod python;
pub mod targets;
pub(crate) mod tools;

pub use targets::Target;

/// The version of every artifact: the workspace's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// The platforms.
    pub targets: Vec<Target>,
    /// The cargo profile (`release` for a release; the tests build `dev`).
    pub profile: String,
    /// Where the artifacts go (emptied first).
    pub out: PathBuf,
    /// Whether the packages that choose among the platforms and `SHA256SUMS` are made too
    /// (`--no-assemble`: not, for a `dist assemble` elsewhere to make them).
    pub assemble: bool,
}

impl Options {
    /// A release of every target this machine builds into `target/dist`.
    pub fn release(workspace: &Path) -> Options {
        Options {
            targets: targets::buildable_here(),
            profile: "release".into(),
            out: crate::target_dir(workspace).join("dist"),
            assemble: true,
        }
    }

    /// Parses `dist`'s arguments: `[--target TRIPLE]... [--profile NAME] [--out DIR]
    /// [--no-assemble]`.
    pub fn parse(workspace: &Path, args: &[&str]) -> Result<Options, String> {
        let mut options = Options::release(workspace);
        let mut picked = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().copied().ok_or_else(|| format!("{arg} needs a value"));
            match *arg {
                "--target" => picked.push(Target::named(value()?)?),
                "--profile" => options.profile = value()?.to_owned(),
                // Absolute: the wheels are built from other directories.
                "--out" => options.out = absolute(value()?, "--out")?,
                "--no-assemble" => options.assemble = false,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if !picked.is_empty() {
            options.targets = picked;
        }
        Ok(options)
    }
}

/// Builds every artifact `options` asks for; their paths, `SHA256SUMS` last (when assembled).
pub fn dist(workspace: &Path, options: &Options) -> Result<Vec<PathBuf>, String> {
    check_builds_here(&options.targets)?;
    let tools = tools::Tools::install(workspace)?;
    let out = &options.out;
    empty(out)?;
    let build = Build {
        workspace,
        tools: &tools,
        profile: &options.profile,
        staging: assemble::Staging::new(workspace, staging_dir(workspace)),
    };

    // The targets whose binaries run here first: such a binary compiles the components for
    // the others on its architecture (`precompiled.rs`).
    let (native, foreign): (Vec<&Target>, Vec<&Target>) = options.targets.iter().partition(|t| t.runs_here());
    let mut compiler = None;
    for target in native.into_iter().chain(foreign) {
        tools::ensure_rust_target(workspace, target.triple)?;
        let cli = python::cli_wheel(&build, target, out)?;
        if target.runs_here() {
            compiler = Some(cli.binary.clone());
        }
        let precompiled = precompiled::components(&build, target, compiler.as_deref())?;
        python::add_precompiled_to_cli_wheel(&build, &cli, precompiled.as_deref())?;
        archive::tarball(&build, target, &cli.binary, precompiled.as_deref(), out)?;
        npm::platform_package(&build, target, &cli.binary, precompiled.as_deref(), out)?;
        if target.has_host_wheel() {
            python::host_wheel(&build, target, precompiled.as_deref(), out)?;
        }
        node::addon_package(&build, target, precompiled.as_deref(), out)?;
    }
    if !options.assemble {
        return assemble::files(out);
    }
    // The same step `dist assemble` runs, over the files just written.
    let platforms = assemble::platforms_in(out)?;
    assemble::packages(&build.staging, &platforms, out)
}

/// Refuses targets whose toolchain this machine lacks, saying where each is built.
fn check_builds_here(targets: &[Target]) -> Result<(), String> {
    if targets.is_empty() {
        return Err(format!(
            "no target of `dist` builds on {}: the Linux and Windows targets build on Linux, the macOS ones on macOS",
            std::env::consts::OS
        ));
    }
    let elsewhere: Vec<String> =
        targets.iter().filter(|t| !t.builds_here()).map(|t| format!("{} (on {})", t.triple, t.build_os())).collect();
    if elsewhere.is_empty() {
        return Ok(());
    }
    Err(format!(
        "not built on {}: {}. Build each where its toolchain is with `cargo xtask dist --target TRIPLE \
         --no-assemble`, then put them together with `cargo xtask dist assemble --from DIR...`",
        std::env::consts::OS,
        elsewhere.join(", ")
    ))
}

/// The staging directory of every package `dist` lays out, under the build directory.
pub(crate) fn staging_dir(workspace: &Path) -> PathBuf {
    crate::target_dir(workspace).join("dist-build").join("staging")
}

/// `path` made absolute, or what is wrong with `flag`'s value.
pub(crate) fn absolute(path: &str, flag: &str) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{flag}: {e}"))
}

/// Empties (or creates) `dir`.
pub(crate) fn empty(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("emptying {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))
}

/// What every build step shares.
pub struct Build<'a> {
    workspace: &'a Path,
    tools: &'a tools::Tools,
    profile: &'a str,
    staging: assemble::Staging<'a>,
}

impl Build<'_> {
    /// The cargo target directory of every dist build.
    fn target_dir(&self) -> PathBuf {
        crate::target_dir(self.workspace).join("dist-build")
    }

    /// Where cargo puts `target`'s artifacts for this build's profile.
    fn artifacts(&self, target: &Target) -> PathBuf {
        let profile_dir = if self.profile == "dev" { "debug" } else { self.profile };
        self.target_dir().join(target.triple).join(profile_dir)
    }

    /// A scratch directory for `name` under the staging directory, emptied.
    fn scratch(&self, name: &str) -> Result<PathBuf, String> {
        self.staging.scratch(name)
    }
}

/// Marks `path` executable (mode 0755), as a binary or script must be inside a package for
/// Linux and macOS. Only Unix has the modes; elsewhere the file stays as it is (`dist` runs on
/// Linux and macOS: a package packed on Windows would carry no executable bit, but xtask still
/// compiles there).
pub(crate) fn set_executable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("chmod {}: {e}", path.display()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Runs `command` with its output passing through; on failure, what failed.
pub(crate) fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("{what}: could not start {:?}: {e}", command.get_program()))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({status})")) }
}
