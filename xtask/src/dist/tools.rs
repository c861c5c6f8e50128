//! The pinned build tools of `cargo xtask dist` (`packaging/requirements-dist.txt`): maturin
//! and zig, from PyPI, installed once under `target/dist-tools` (never into the system), and
//! the Rust targets, added with rustup when missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run;

/// The requirements file, relative to the workspace's root.
const REQUIREMENTS: &str = "packaging/requirements-dist.txt";

/// Where the tools live: put [`Tools::dir`] on `PYTHONPATH` and run [`Tools::maturin`].
pub struct Tools {
    /// The `pip install --target` directory.
    pub dir: PathBuf,
}

impl Tools {
    /// The tools at their pinned versions, installed when missing.
    pub fn install(workspace: &Path) -> Result<Tools, String> {
        Ok(Tools { dir: install_pins(workspace, REQUIREMENTS, "dist-tools")? })
    }

    /// A `maturin` command that finds zig (`python3 -m ziglang`) beside it.
    pub fn maturin(&self) -> Command {
        let mut maturin = Command::new(self.dir.join("bin/maturin"));
        maturin.env("PYTHONPATH", &self.dir);
        maturin
    }
}

/// The Python packages `requirements` (a file of `name==version` lines, relative to the
/// workspace's root) pins, installed with pip into `<target>/<dir>` when that directory does not
/// hold exactly those versions; the directory, for `PYTHONPATH`.
pub fn install_pins(workspace: &Path, requirements: &str, dir: &str) -> Result<PathBuf, String> {
    let path = workspace.join(requirements);
    let dir = crate::target_dir(workspace).join(dir);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {requirements}: {e}"))?;
    let pins: Vec<(&str, &str)> = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
        .map(|line| line.split_once("==").ok_or_else(|| format!("{requirements}: `{line}` is not pinned with ==")))
        .collect::<Result<_, _>>()?;
    let checks: Vec<String> = pins.iter().map(|(name, version)| format!("v({name:?}) == {version:?}")).collect();
    let probe = format!("from importlib.metadata import version as v\nassert {}", checks.join(" and "));
    let installed =
        Command::new("python3").args(["-c", &probe]).env("PYTHONPATH", &dir).output().is_ok_and(|o| o.status.success());
    if !installed {
        let mut pip = Command::new("python3");
        pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--upgrade", "--target"])
            .arg(&dir)
            .arg("-r")
            .arg(&path);
        run(&mut pip, &format!("installing {requirements} (pip)"))?;
    }
    Ok(dir)
}

/// Adds the Rust target `triple` with rustup when the toolchain lacks it.
pub fn ensure_rust_target(workspace: &Path, triple: &str) -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .current_dir(workspace)
        .output()
        .map_err(|e| format!("running rustup: {e}"))?;
    if String::from_utf8_lossy(&installed.stdout).lines().any(|line| line.trim() == triple) {
        return Ok(());
    }
    run(
        Command::new("rustup").args(["target", "add", triple]).current_dir(workspace),
        &format!("rustup target add {triple}"),
    )
}
