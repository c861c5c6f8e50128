//! The wheels, built by maturin: the CLI as a binary wheel (`scratchpad-cli`, from
//! `packaging/pypi/cli/pyproject.toml`, `bindings = "bin"`: the ruff pattern, so `pip install`
//! or `uvx` puts `scratchpad` on `PATH`) and the host as a Python extension (`scratchpad-host`,
//! `bindings/python`). On Linux both link glibc 2.17 through zig and maturin checks the
//! manylinux2014 policy (the symbols and libraries a wheel may use) before tagging them; on
//! macOS Apple's toolchain links them and maturin tags them with the macOS version rustc links
//! for (`macosx_11_0_arm64`, `macosx_10_12_x86_64`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::targets::Linker;
use super::{Build, Target, cargo_env, run};

/// The CLI's wheel, and the binary the build left behind (the same bytes the wheel holds), for
/// the archive and the npm package.
pub struct CliWheel {
    pub wheel: PathBuf,
    pub binary: PathBuf,
}

/// The CLI's wheel for `target` into `out`. The environment maturin gives cargo is recorded for
/// the Node addon's build ([`cargo_env`]).
pub fn cli_wheel(build: &Build, target: &Target, out: &Path) -> Result<CliWheel, String> {
    let before = wheels(out, "scratchpad_cli-")?;
    let mut maturin = maturin(build, target, out);
    maturin.current_dir(build.workspace.join("packaging/pypi/cli"));
    cargo_env::record(build, target, &mut maturin)?;
    run(&mut maturin, &format!("building the scratchpad-cli wheel for {}", target.triple))?;
    let wheel = new_wheel(out, "scratchpad_cli-", &before)?;
    let binary = build.artifacts(target).join(target.exe);
    if !binary.is_file() {
        return Err(format!("maturin left no binary at {}", binary.display()));
    }
    Ok(CliWheel { wheel, binary })
}

/// Adds `precompiled` (if any) to the CLI's wheel as data installed into
/// `<prefix>/share/scratchpad/precompiled`, where the binary, installed into `<prefix>/bin`,
/// looks for it.
pub fn add_precompiled_to_cli_wheel(build: &Build, cli: &CliWheel, precompiled: Option<&Path>) -> Result<(), String> {
    let Some(precompiled) = precompiled else { return Ok(()) };
    // `{distribution}-{version}-{tags}.whl`; its data directory is `{distribution}-{version}.data`.
    let name = cli.wheel.file_name().unwrap_or_default().to_string_lossy();
    let mut parts = name.split('-');
    let (Some(distribution), Some(version)) = (parts.next(), parts.next()) else {
        return Err(format!("{name} is not a wheel's file name"));
    };
    let data = format!("{distribution}-{version}.data/data/share/scratchpad/precompiled");
    add_to_wheel(build, &cli.wheel, precompiled, &data)
}

/// The host's wheel for `target` (a Linux or macOS target) into `out`, with `precompiled` (if any) as
/// `scratchpad/precompiled/`, beside the extension.
pub fn host_wheel(build: &Build, target: &Target, precompiled: Option<&Path>, out: &Path) -> Result<(), String> {
    let before = wheels(out, "scratchpad_host-")?;
    let mut maturin = maturin(build, target, out);
    maturin.arg("--manifest-path").arg(build.workspace.join("bindings/python/Cargo.toml"));
    run(&mut maturin, &format!("building the scratchpad-host wheel for {}", target.triple))?;
    let wheel = new_wheel(out, "scratchpad_host-", &before)?;
    let Some(precompiled) = precompiled else { return Ok(()) };
    add_to_wheel(build, &wheel, precompiled, "scratchpad/precompiled")
}

/// Adds the files of `dir` to `wheel` under `path_in_wheel`, with their RECORD lines.
fn add_to_wheel(build: &Build, wheel: &Path, dir: &Path, path_in_wheel: &str) -> Result<(), String> {
    let script = build.workspace.join("xtask/src/dist/add_to_wheel.py");
    let mut add = Command::new("python3");
    add.arg(script).arg(wheel).arg(dir).arg(path_in_wheel);
    run(&mut add, &format!("adding {} to {}", dir.display(), wheel.display()))
}

/// The one wheel in `out` whose name starts with `prefix` that is not in `before`: the one a
/// build just wrote (a platform's wheels share a prefix).
fn new_wheel(out: &Path, prefix: &str, before: &[PathBuf]) -> Result<PathBuf, String> {
    let built: Vec<PathBuf> = wheels(out, prefix)?.into_iter().filter(|w| !before.contains(w)).collect();
    match <[PathBuf; 1]>::try_from(built) {
        Ok([wheel]) => Ok(wheel),
        Err(built) => Err(format!("expected one new {prefix}*.whl in {}, found {built:?}", out.display())),
    }
}

/// The wheels in `out` whose names start with `prefix`.
fn wheels(out: &Path, prefix: &str) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(out).map_err(|e| format!("reading {}: {e}", out.display()))?;
    let mut wheels = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("reading {}: {e}", out.display()))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(prefix) && name.ends_with(".whl") {
            wheels.push(path);
        }
    }
    Ok(wheels)
}

/// `maturin build` for `target` with the build's profile, into `out`.
fn maturin(build: &Build, target: &Target, out: &Path) -> Command {
    let mut maturin = build.tools.maturin();
    maturin
        .args(["build", "--locked", "--profile", build.profile, "--target", target.triple, "--out"])
        .arg(out)
        .env("CARGO_TARGET_DIR", build.target_dir());
    if target.linker == Linker::ZigGlibc217 {
        maturin.arg("--zig");
    }
    if let Some(compatibility) = target.python_compatibility() {
        maturin.args(["--compatibility", compatibility]);
    }
    // What the caller's cargo set for its own build must not leak into these.
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR_OVERRIDE"] {
        maturin.env_remove(var);
    }
    maturin
}
