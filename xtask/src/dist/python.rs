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

/// The host's wheel for `target` (a Linux target) into `out`.
pub fn host_wheel(build: &Build, target: &Target, out: &Path) -> Result<(), String> {
    let mut maturin = maturin(build, target, out);
    maturin.arg("--manifest-path").arg(build.workspace.join("bindings/python/Cargo.toml"));
    run(&mut maturin, &format!("building the scratchpad-host wheel for {}", target.triple))
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
