//! `cargo xtask dist`: every release artifact into `target/dist/`, with `SHA256SUMS`.
//!
//! For each target ([`targets::ALL`], or those `--target` picks):
//! - the CLI as a binary wheel (`scratchpad-cli`, maturin `bindings = "bin"`; with the
//!   precompiled components below as data in `share/scratchpad/precompiled`), whose build
//!   leaves the `scratchpad` binary in the build directory; that same binary goes into
//! - `scratchpad-<version>-<target>.tar.gz` (the binary, the README, the licence), and
//! - the npm package carrying it (`@scratchpad-dev/cli-<os>-<cpu>`), both with the embedded
//!   components compiled ahead of time in `precompiled/` beside the binary when a binary of the
//!   build that runs here can compile for the target's architecture (`precompiled.rs`);
//! - on Linux, the host as a manylinux wheel (`scratchpad-host`, the Python extension; the same
//!   `precompiled/` beside the extension), and
//! - the host as a Node addon (`@scratchpad-dev/host-<os>-<cpu>[-gnu]`), with the same
//!   `precompiled/` beside the addon.
//!
//! Then the npm packages that choose among the platform packages: the launcher
//! `@scratchpad-dev/cli` (`bin: scratchpad`) and the Claude Code plugin
//! `@scratchpad-dev/claude-code`, and the host's JavaScript API `@scratchpad-dev/host` over the
//! addons. Every version is the workspace's (`Cargo.toml`).
//!
//! Nothing here needs a wasm target: the components come prebuilt (`components/`). Builds go to
//! `target/dist-build` (one cargo target directory for every target and profile), the pinned
//! tools to `target/dist-tools`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod archive;
mod cargo_env;
pub mod node;
pub mod npm;
mod precompiled;
mod python;
pub mod targets;
pub(crate) mod tools;

use sha2::{Digest, Sha256};
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
}

impl Options {
    /// A release of every target into `target/dist`.
    pub fn release(workspace: &Path) -> Options {
        Options {
            targets: targets::ALL.to_vec(),
            profile: "release".into(),
            out: crate::target_dir(workspace).join("dist"),
        }
    }

    /// Parses `dist`'s arguments: `[--target TRIPLE]... [--profile NAME] [--out DIR]`.
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
                "--out" => options.out = std::path::absolute(value()?).map_err(|e| format!("--out: {e}"))?,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if !picked.is_empty() {
            options.targets = picked;
        }
        Ok(options)
    }
}

/// Builds every artifact `options` asks for; their paths, `SHA256SUMS` last.
pub fn dist(workspace: &Path, options: &Options) -> Result<Vec<PathBuf>, String> {
    let tools = tools::Tools::install(workspace)?;
    let out = &options.out;
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("emptying {}: {e}", out.display()))?;
    }
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let build = Build { workspace, tools: &tools, profile: &options.profile };

    let mut platform_packages = Vec::new();
    let mut addon_packages = Vec::new();
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
        platform_packages
            .push((*target, npm::platform_package(&build, target, &cli.binary, precompiled.as_deref(), out)?));
        if target.has_host_wheel() {
            python::host_wheel(&build, target, precompiled.as_deref(), out)?;
        }
        addon_packages.push((*target, node::addon_package(&build, target, precompiled.as_deref(), out)?));
    }
    node::host_package(&build, &addon_packages, out)?;
    npm::launcher(&build, &platform_packages, out)?;
    npm::claude_code_plugin(&build, &platform_packages, out)?;
    write_sha256sums(out)
}

/// What every build step shares.
pub struct Build<'a> {
    workspace: &'a Path,
    tools: &'a tools::Tools,
    profile: &'a str,
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

    /// A scratch directory for `name` under the build directory, emptied.
    fn scratch(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.target_dir().join("staging").join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("emptying {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(dir)
    }
}

/// Writes `SHA256SUMS` over every file in `out` (`sha256sum`'s format, sorted by name); the
/// files, `SHA256SUMS` last.
fn write_sha256sums(out: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out)
        .map_err(|e| format!("listing {}: {e}", out.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut sums = String::new();
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
        let name = file.file_name().unwrap().to_string_lossy();
        sums.push_str(&format!("{}  {name}\n", hex::encode(Sha256::digest(&bytes))));
    }
    let path = out.join("SHA256SUMS");
    std::fs::write(&path, sums).map_err(|e| format!("writing {}: {e}", path.display()))?;
    files.push(path);
    Ok(files)
}

/// Marks `path` executable (mode 0755), as a binary or script must be inside a package for
/// Linux. Only Unix has the modes; elsewhere the file stays as it is (`dist` runs on Linux: a
/// package packed on Windows would carry no executable bit, but xtask still compiles there).
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
