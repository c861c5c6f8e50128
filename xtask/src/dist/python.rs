//! The wheels, built by maturin: the CLI as a binary wheel (`scratchpad-cli`, from
//! `packaging/pypi/cli/pyproject.toml`, `bindings = "bin"`: the ruff pattern, so `pip install`
//! or `uvx` puts `scratchpad` on `PATH`) and the host as a Python extension (`scratchpad-host`,
//! `bindings/python`). On Linux both link glibc 2.17 through zig and maturin checks the
//! manylinux2014 policy (the symbols and libraries a wheel may use) before tagging them.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::targets::Linker;
use super::{Build, Target, cargo_env, run};

/// The CLI's wheel for `target` into `out`; the path of the binary the build left behind (the
/// same bytes the wheel holds), for the archive and the npm package. The environment maturin
/// gives cargo is recorded for the Node addon's build ([`cargo_env`]).
pub fn cli_wheel(build: &Build, target: &Target, out: &Path) -> Result<PathBuf, String> {
    let mut maturin = maturin(build, target, out);
    maturin.current_dir(build.workspace.join("packaging/pypi/cli"));
    cargo_env::record(build, target, &mut maturin)?;
    run(&mut maturin, &format!("building the scratchpad-cli wheel for {}", target.triple))?;
    let binary = build.artifacts(target).join(target.exe);
    if binary.is_file() { Ok(binary) } else { Err(format!("maturin left no binary at {}", binary.display())) }
}

/// The host's wheel for `target` (a Linux target) into `out`, with `precompiled` (if any) as
/// `scratchpad/precompiled/`, beside the extension.
pub fn host_wheel(build: &Build, target: &Target, precompiled: Option<&Path>, out: &Path) -> Result<(), String> {
    let before = wheels(out)?;
    let mut maturin = maturin(build, target, out);
    maturin.arg("--manifest-path").arg(build.workspace.join("bindings/python/Cargo.toml"));
    run(&mut maturin, &format!("building the scratchpad-host wheel for {}", target.triple))?;
    let Some(precompiled) = precompiled else { return Ok(()) };
    let built: Vec<PathBuf> = wheels(out)?.into_iter().filter(|w| !before.contains(w)).collect();
    let [wheel] = built.as_slice() else {
        return Err(format!("expected one new scratchpad-host wheel in {}, found {built:?}", out.display()));
    };
    let script = build.workspace.join("xtask/src/dist/add_to_wheel.py");
    let mut add = Command::new("python3");
    add.arg(script).arg(wheel).arg(precompiled).arg("scratchpad/precompiled");
    run(&mut add, &format!("adding the precompiled components to {}", wheel.display()))
}

/// The host wheels in `out`.
fn wheels(out: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(out).map_err(|e| format!("reading {}: {e}", out.display()))?;
    let mut wheels = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("reading {}: {e}", out.display()))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("scratchpad_host-") && name.ends_with(".whl") {
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
