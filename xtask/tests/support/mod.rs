//! What xtask's test files share.

use std::path::Path;
use std::process::Command;

/// Packs `manifest` as npm does (`package/package.json` in a gzipped tar) into `dir/file`.
pub fn npm_tarball(dir: &Path, file: &str, manifest: serde_json::Value) {
    let staging = tempfile::tempdir().unwrap();
    std::fs::create_dir(staging.path().join("package")).unwrap();
    std::fs::write(staging.path().join("package/package.json"), manifest.to_string()).unwrap();
    let status = Command::new("tar")
        .arg("-czf")
        .arg(dir.join(file))
        .arg("-C")
        .arg(staging.path())
        .arg("package")
        .status()
        .unwrap();
    assert!(status.success());
}
