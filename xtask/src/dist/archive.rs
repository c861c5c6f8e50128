//! `scratchpad-<version>-<target>.tar.gz`: the binary (with `precompiled/` beside it when the
//! target has one), the README and the licence under one
//! folder of the same name, reproducible (entries sorted, owner and times fixed, gzip without a
//! name or time), so the same binary gives the same archive and the same digest. GNU tar makes
//! it: `tar` on Linux, `gtar` on macOS (GitHub's macOS runners have it; elsewhere Homebrew's
//! `gnu-tar`), whose own `tar` is bsdtar, which has none of those options.

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
        "\"$1\" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@{mtime} -C \"$2\" -cf - \"$3\" | gzip -9n > \"$4\""
    );
    let mut tar = Command::new("sh");
    tar.args(["-c", &script, "sh", gnu_tar()?]).arg(&staging).arg(&name).arg(&archive);
    run(&mut tar, &format!("archiving {name}"))
}

/// The name GNU tar has here: `tar`, else `gtar`.
fn gnu_tar() -> Result<&'static str, String> {
    let is_gnu = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("GNU tar"))
    };
    ["tar", "gtar"].into_iter().find(|program| is_gnu(program)).ok_or_else(|| {
        "the archives need GNU tar (`tar --sort=name …`), and neither `tar` nor `gtar` is GNU tar here \
         (on macOS: `brew install gnu-tar`)"
            .to_owned()
    })
}
