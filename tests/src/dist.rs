//! The release artifacts the install tests install: `cargo xtask dist` for this machine's
//! platform (`x86_64-unknown-linux-gnu`: the CLI linked against glibc 2.17 through zig, its
//! tarball, npm packages and wheel, and the host's manylinux wheel), in the `dev` profile to
//! keep the suite's build short, into `target/dist-test`. Built once per test process; cargo
//! keeps the build itself warm across runs (`target/dist-build`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::runtimes::{root, run};

/// The platform the tests build and install.
pub const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The version every artifact carries: the workspace's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The directory of the built artifacts (with `SHA256SUMS`).
pub fn artifacts() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = root().join("target/dist-test");
        build(&[TARGET], &out);
        out
    })
}

/// Runs `cargo xtask dist` for `targets` in the `dev` profile into `out`.
pub fn build(targets: &[&str], out: &Path) {
    let mut xtask = Command::new(env!("CARGO"));
    xtask.args(["xtask", "dist", "--profile", "dev", "--out"]).arg(out).current_dir(root());
    for target in targets {
        xtask.args(["--target", target]);
    }
    // The variables cargo set for this test's own build are not the xtask's.
    for var in ["CARGO_TARGET_DIR", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET"] {
        xtask.env_remove(var);
    }
    run(&mut xtask, &format!("cargo xtask dist --target {}", targets.join(" --target ")));
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
pub fn file(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}…{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().unwrap()
}
