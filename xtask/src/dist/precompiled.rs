//! The embedded components compiled ahead of time for a target, shipped in `precompiled/`
//! beside its `scratchpad` binary so a fresh install's first start does not compile them
//! (`scratchpad_host::precompiled`). They are made by the target's own binary
//! (`scratchpad precompile`), so for a target whose binary runs on the build machine; the
//! others' packages ship without them and compile at first start, as before.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Build, Target, run};

/// The directory of `target`'s precompiled components, made by running `binary`; `None` when
/// that binary does not run here.
pub fn components(build: &Build, target: &Target, binary: &Path) -> Result<Option<PathBuf>, String> {
    if !target.runs_here() {
        return Ok(None);
    }
    let dir = build.scratch(&format!("precompiled/{}", target.triple))?;
    run(
        Command::new(binary).arg("precompile").arg(&dir),
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
