//! The release artifacts the install tests install: `cargo xtask dist` for this machine's
//! platform (`x86_64-unknown-linux-gnu`: the CLI linked against glibc 2.17 through zig, its
//! tarball, npm packages and wheel, and the host's manylinux wheel), in the `dist-test` profile
//! (the root `Cargo.toml`: unoptimised but for Cranelift) to keep the suite's build short, into
//! `target/dist-test`. Built once per `cargo test` run: the first test process that asks
//! builds, the others of the same run (`cargo test` runs each test binary as a child of one cargo
//! process) reuse what it built. Cargo keeps the build itself
//! warm across runs (`target/dist-build`).

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
        // Which run built them, beside them: `SHA256SUMS` lists everything in `out`.
        let stamp = root().join("target/dist-test.run");
        // A test process of the same run waits here while another builds.
        let lock = std::fs::File::create(root().join("target/dist-test.lock")).expect("creating target/dist-test.lock");
        lock.lock().expect("locking target/dist-test.lock");
        let run = test_run();
        let built = run.is_some() && std::fs::read_to_string(&stamp).ok() == run;
        if !built {
            // Gone first: a build that fails leaves no stamp naming this run.
            let _ = std::fs::remove_file(&stamp);
            build(&[TARGET], &out);
            if let Some(run) = &run {
                std::fs::write(&stamp, run).expect("writing target/dist-test.run");
            }
        }
        out
    })
}

/// The `cargo test` (or nextest) run this test process is part of: its parent's process ID and
/// start time. `None` when the parent is something else (a test binary run by hand, from a
/// shell whose sources may have changed since): that process builds.
fn test_run() -> Option<String> {
    let parent = std::os::unix::process::parent_id();
    let name = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
    if !matches!(name.trim_end(), "cargo" | "cargo-nextest") {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{parent}/stat")).ok()?;
    // proc(5): field 22, `starttime`; fields from the third on follow the name's `)`.
    let start = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?;
    Some(format!("{parent} {start}"))
}

/// The cargo profile of the artifacts the tests build.
const PROFILE: &str = "dist-test";

/// Runs `cargo xtask dist` for `targets` in the [`PROFILE`] into `out`.
pub fn build(targets: &[&str], out: &Path) {
    let mut xtask = Command::new(env!("CARGO"));
    xtask.args(["xtask", "dist", "--profile", PROFILE, "--out"]).arg(out).current_dir(root());
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

#[cfg(test)]
mod tests {
    use super::test_run;

    #[test]
    fn a_test_process_under_cargo_names_its_run_by_the_parent_cargo() {
        // This unit test runs under `cargo test` (or nextest), as the suite's binaries do.
        let run = test_run().expect("the parent is cargo, so the run has a name");
        let (pid, start) = run.split_once(' ').expect("`PID START`");
        assert_eq!(pid, std::os::unix::process::parent_id().to_string());
        assert!(start.parse::<u64>().is_ok_and(|ticks| ticks > 0), "a start time in clock ticks: {run}");
        assert_eq!(test_run(), Some(run), "the same run each time it is asked");
    }
}
