//! `cargo xtask publish wheels --dir DIR --out OUT [--index URL]`: the wheels of `DIR` alone
//! into `OUT`, the directory `pypa/gh-action-pypi-publish` uploads whole (it runs twine). With
//! `--index` (a PEP 503 "simple" index: `https://pypi.org/simple/`), a wheel whose file the
//! index already lists stops everything first: an index takes a file once, and a second upload
//! of a version is a version that was not bumped.
//!
//! [`upload`] is what the publishing action does, for the release rehearsal's local index.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Copies the wheels of `dir` into `out` (emptied first), after checking none is on `index`
/// already; their paths.
pub fn copy(dir: &Path, out: &Path, index: Option<&str>) -> Result<Vec<String>, String> {
    let wheels = super::files(dir, |name| name.ends_with(".whl"))?;
    if wheels.is_empty() {
        return Err(format!("{} holds no wheel: run `cargo xtask dist` first", dir.display()));
    }
    if let Some(index) = index {
        let there = already_on_index(&wheels, index)?;
        if !there.is_empty() {
            return Err(format!(
                "the Python index {index} already has {}: a file is uploaded once, so nothing was published (bump \
                 the version, docs/releasing.md)",
                there.join(", ")
            ));
        }
    }
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("emptying {}: {e}", out.display()))?;
    }
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut copied = Vec::new();
    for wheel in wheels {
        let to = out.join(wheel.file_name().unwrap());
        std::fs::copy(&wheel, &to).map_err(|e| format!("copying {}: {e}", wheel.display()))?;
        copied.push(to.display().to_string());
    }
    Ok(copied)
}

/// The file names of `wheels` that the simple index at `index` already lists (each project's
/// page, `<index>/<normalized name>/`; a project it does not have is a 404).
pub fn already_on_index(wheels: &[PathBuf], index: &str) -> Result<Vec<String>, String> {
    // PEP 503's normalized name of the wheel's distribution (`scratchpad_cli` → `scratchpad-cli`).
    let mut projects: Vec<String> = wheels
        .iter()
        .filter_map(|wheel| wheel.file_name()?.to_str()?.split('-').next().map(str::to_owned))
        .map(|name| name.to_lowercase().replace(['_', '.'], "-"))
        .collect();
    projects.sort();
    projects.dedup();
    let mut listed = String::new();
    for project in projects {
        listed.push_str(&project_page(&format!("{}/{project}/", index.trim_end_matches('/')))?);
    }
    Ok(wheels
        .iter()
        .filter_map(|wheel| wheel.file_name()?.to_str().map(str::to_owned))
        .filter(|name| listed.contains(&format!(">{name}<")) || listed.contains(&format!("/{name}#")))
        .collect())
}

/// The HTML of a project's page on a simple index, empty when the index has no such project.
fn project_page(url: &str) -> Result<String, String> {
    let script = "import sys, urllib.request, urllib.error\n\
                   try:\n    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=60).read().decode())\n\
                   except urllib.error.HTTPError as e:\n    sys.exit(0 if e.code == 404 else f'{sys.argv[1]}: {e}')\n";
    let output = Command::new("python3")
        .args(["-c", script, url])
        .output()
        .map_err(|e| format!("running python3 to read {url}: {e}"))?;
    if !output.status.success() {
        return Err(format!("reading the index page {url}: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Uploads every wheel of `dir` to the index whose upload endpoint is `url` with twine (the
/// uploader `pypa/gh-action-pypi-publish` runs), found on `pythonpath`.
pub fn upload(dir: &Path, url: &str, pythonpath: &Path) -> Result<Vec<String>, String> {
    let wheels = super::files(dir, |name| name.ends_with(".whl"))?;
    let mut twine = Command::new("python3");
    twine
        .args(["-m", "twine", "upload", "--non-interactive", "--disable-progress-bar", "--repository-url", url])
        .args(["--username", "rehearsal", "--password", "rehearsal"])
        .args(&wheels)
        .env("PYTHONPATH", pythonpath);
    crate::dist::run(&mut twine, &format!("twine upload to {url}"))?;
    Ok(wheels
        .iter()
        .map(|wheel| format!("{} uploaded to {url}", wheel.file_name().unwrap().to_string_lossy()))
        .collect())
}
