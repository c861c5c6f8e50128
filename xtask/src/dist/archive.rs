//! `scratchpad-<version>-<target>.tar.gz`: the binary (with `precompiled/` beside it when the
//! target has one), the README and the licence under one
//! folder of the same name, reproducible (entries sorted, owner and times fixed, gzip without a
//! name or time), so the same binary gives the same archive and the same digest.

use std::path::Path;
use std::process::Command;

use super::{Build, Target, VERSION, run};

/// Writes the archive of `binary` for `target` into `out`.
pub fn tarball(
    build: &Build,
    target: &Target,
    binary: &Path,
    precompiled: Option<&Path>,
    out: &Path,
) -> Result<(), String> {
    let name = format!("scratchpad-{VERSION}-{}", target.triple);
    let staging = build.scratch(&format!("archive/{name}"))?;
    let root = staging.join(&name);
    let workspace = build.workspace;
    std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    for (from, to) in
        [(binary, target.exe), (&workspace.join("README.md"), "README.md"), (&workspace.join("LICENSE"), "LICENSE")]
    {
        std::fs::copy(from, root.join(to)).map_err(|e| format!("copying {}: {e}", from.display()))?;
    }
    super::precompiled::copy_into(precompiled, &root)?;
    let archive = out.join(format!("{name}.tar.gz"));
    // The time of every entry: SOURCE_DATE_EPOCH when the caller sets one (the reproducible-builds
    // convention), else the start of the epoch.
    let mtime = std::env::var("SOURCE_DATE_EPOCH").unwrap_or_else(|_| "0".into());
    let script = format!(
        "tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@{mtime} -C \"$1\" -cf - \"$2\" | gzip -9n > \"$3\""
    );
    let mut tar = Command::new("sh");
    tar.args(["-c", &script, "sh"]).arg(&staging).arg(&name).arg(&archive);
    run(&mut tar, &format!("archiving {name}"))
}
