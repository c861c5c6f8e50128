//! The environment `maturin --zig` gives cargo, recorded so the Node addon builds in it too.
//!
//! maturin links the Linux binaries against glibc 2.17 by setting a dozen variables for cargo
//! (zig wrappers as `CC_<target>` and the linker, `CARGO_TARGET_APPLIES_TO_HOST`, …). cargo
//! fingerprints build scripts by the variables they read, so a crate built with any other
//! environment for the same target rebuilds every crate with a build script and everything
//! above it, wasmtime included (measured here: 5.5 min cold on 2 cores, against 1 s when the
//! addon's build is given the same environment). maturin builds only Python packages, so the
//! Node addon takes the environment maturin used for the CLI's wheel: a `cargo` on maturin's
//! `PATH` records it, then runs the real cargo. The record is the whole environment, so it is
//! written readable by its owner only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Build, Target};

/// Where the recorder and the recorded environments live, under the build directory.
fn dir(build: &Build) -> PathBuf {
    build.target_dir().join("cargo-env")
}

/// The file holding the environment recorded for `target`.
fn recorded(build: &Build, target: &Target) -> PathBuf {
    dir(build).join(format!("{}.env", target.triple))
}

/// The real cargo: the one running this xtask.
fn real_cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Makes `maturin` (a command building for `target`) run cargo through the recorder.
pub fn record(build: &Build, target: &Target, maturin: &mut Command) -> Result<(), String> {
    let dir = dir(build);
    let recorder = dir.join("cargo");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let script = "#!/bin/sh\n# cargo xtask dist: records the environment of cargo's build (see xtask/src/dist/cargo_env.rs).\n\
                  if [ \"$1\" = rustc ]; then rm -f \"$SCRATCHPAD_DIST_CARGO_ENV\"; (umask 077; env -0 > \"$SCRATCHPAD_DIST_CARGO_ENV\"); fi\n\
                  exec \"$SCRATCHPAD_DIST_CARGO\" \"$@\"\n";
    write_executable(&recorder, script)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![dir.clone()];
    paths.extend(std::env::split_paths(&path));
    maturin
        .env("PATH", std::env::join_paths(paths).map_err(|e| format!("PATH: {e}"))?)
        .env("CARGO", &recorder)
        .env("SCRATCHPAD_DIST_CARGO", real_cargo())
        .env("SCRATCHPAD_DIST_CARGO_ENV", recorded(build, target));
    Ok(())
}

/// A cargo command with the environment recorded for `target`'s last maturin build, the
/// recorder taken out again.
pub fn replay(build: &Build, target: &Target) -> Result<Command, String> {
    let file = recorded(build, target);
    let bytes = std::fs::read(&file)
        .map_err(|e| format!("reading {} (maturin has not built for {} yet): {e}", file.display(), target.triple))?;
    let mut cargo = Command::new(real_cargo());
    cargo.env_clear().current_dir(build.workspace);
    let recorder_dir = dir(build);
    for entry in bytes.split(|b| *b == 0).filter(|entry| !entry.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((name, value)) = entry.split_once('=') else { continue };
        match name {
            "SCRATCHPAD_DIST_CARGO" | "SCRATCHPAD_DIST_CARGO_ENV" | "CARGO" => {}
            "PATH" => {
                let paths = std::env::split_paths(value).filter(|p| p != &recorder_dir);
                cargo.env("PATH", std::env::join_paths(paths).map_err(|e| format!("PATH: {e}"))?);
            }
            _ => {
                cargo.env(name, value);
            }
        }
    }
    Ok(cargo)
}

fn write_executable(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    super::set_executable(path)
}
