//! The embedded components compiled ahead of time for a target, shipped in `precompiled/`
//! beside its `scratchpad` binary so a fresh install's first start does not compile them
//! (`scratchpad_host::precompiled`). They are made by a binary of the same build that runs on
//! the build machine (`scratchpad precompile --target`): the target's own (Linux x86-64, and
//! each macOS target on the macOS runner of its architecture), or for another operating system
//! on the same architecture (Windows x86-64 on Linux x86-64) the build machine's, whose compiler
//! has that architecture's backend. wasmtime's check at load refuses
//! an artifact whose version, settings or target do not match the loading engine's, so a
//! mistake here costs a compile at first start, never wrong code. Other architectures'
//! packages ship without them and compile at first start, as before.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Build, Target, run};

/// The directory of `target`'s precompiled components, made by `compiler` (a binary of this
/// build that runs here); `None` without one, or when it cannot compile for `target`'s
/// architecture.
pub fn components(build: &Build, target: &Target, compiler: Option<&Path>) -> Result<Option<PathBuf>, String> {
    let Some(compiler) = compiler else { return Ok(None) };
    if target.arch() != std::env::consts::ARCH {
        return Ok(None);
    }
    let dir = build.scratch(&format!("precompiled/{}", target.triple))?;
    run(
        Command::new(compiler).arg("precompile").arg(&dir).args(["--target", target.triple]),
        &format!("precompiling the components for {}", target.triple),
    )?;
    Ok(Some(dir))
}

/// Copies the files of `precompiled` (if any) into `to/precompiled`.
pub fn copy_into(precompiled: Option<&Path>, to: &Path) -> Result<(), String> {
    let Some(from) = precompiled else { return Ok(()) };
    let entries = std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("reading {}: {e}", from.display()))?.path();
        let name = path.file_name().expect("a directory entry has a name");
        super::npm::copy(&path, &to.join("precompiled").join(name))?;
    }
    Ok(())
}
