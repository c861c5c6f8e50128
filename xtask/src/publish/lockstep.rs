//! One version for everything a release uploads, checked on the built files themselves before
//! anything is uploaded: every npm package and every dependency between them, every wheel and
//! every archive of `dist`'s directory at the workspace's version. A file left from another
//! build (an old wheel beside the new ones, a package packed before the bump) would otherwise
//! go out beside the release, or a launcher would name platform packages of another version.

use std::collections::BTreeSet;
use std::path::Path;

use super::npm;

/// Checks that the artifacts in `dir` are all at `version` (Cargo's spelling); a line saying
/// how many were checked, or one error naming every file that is not.
pub fn artifacts(dir: &Path, version: &str) -> Result<String, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("listing {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let mut problems = Vec::new();
    let mut manifests = Vec::new();
    let (mut wheels, mut archives) = (0, 0);
    for file in &files {
        let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if name.ends_with(".tgz") {
            let manifest = npm::manifest_of(file)?;
            let found = manifest["version"].as_str().unwrap_or("(none)").to_owned();
            if found != version {
                problems.push(format!("npm package {} is {found} ({name})", manifest["name"].as_str().unwrap_or("?")));
            }
            manifests.push((name, manifest));
        } else if name.ends_with(".whl") {
            wheels += 1;
            // `{distribution}-{version}-…`: the version as PEP 440 spells it.
            let found = name.split('-').nth(1).unwrap_or("(none)");
            if found != pep440(version) {
                problems.push(format!("wheel {name} is {found}, not {}", pep440(version)));
            }
        } else if name.ends_with(".tar.gz") {
            archives += 1;
            if !name.starts_with(&format!("scratchpad-{version}-")) {
                problems.push(format!("archive {name} is not named scratchpad-{version}-<target>.tar.gz"));
            }
        }
    }
    // A package of this release that names another of them names it at exactly this version.
    let ours: BTreeSet<&str> = manifests.iter().filter_map(|(_, m)| m["name"].as_str()).collect();
    for (file, manifest) in &manifests {
        for key in ["dependencies", "optionalDependencies", "peerDependencies"] {
            for (dep, wanted) in manifest[key].as_object().into_iter().flatten() {
                if ours.contains(dep.as_str()) && wanted.as_str() != Some(version) {
                    problems.push(format!("{file} wants {dep} at {wanted} in its {key}"));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "the artifacts in {} are not all at the workspace's version {version} (nothing was published):\n  {}",
            dir.display(),
            problems.join("\n  ")
        ));
    }
    Ok(format!(
        "{}: {} npm packages, {wheels} wheels and {archives} archives at {version}",
        dir.display(),
        manifests.len()
    ))
}

/// A Cargo (SemVer) version as PEP 440 and maturin spell it: `1.2.0-rc.1` → `1.2.0rc1`,
/// `-alpha.N` → `aN`, `-beta.N` → `bN`; a release version is the same in both.
pub fn pep440(version: &str) -> String {
    let Some((release, pre)) = version.split_once('-') else { return version.to_owned() };
    let pre = pre.replacen("alpha", "a", 1).replacen("beta", "b", 1).replace('.', "");
    format!("{release}{pre}")
}
