//! The Python wheel (`bindings/python`, import name `scratchpad`): built by maturin from the
//! sources in the dev profile, installed into a fresh virtualenv, and tested there by pytest
//! (`bindings/python/tests`): every method and error, threads and processes on one SQLite file,
//! PostgreSQL (a fresh database on this test process's server, the Rust suite's harness), a
//! plugin that loops forever, and the LangChain middleware in a real agent loop.

use std::path::Path;
use std::process::Command;

use scratchpad_tests::runtimes::{python_with, root, run};

/// Builds the wheel with the pinned maturin; its path. The nested cargo uses a target
/// directory of its own: the outer `cargo test` holds the workspace's.
fn build_wheel() -> std::path::PathBuf {
    let out = root().join("target/python-wheel/dist");
    let _ = std::fs::remove_dir_all(&out);
    // Installs the pin when the interpreter lacks it; the pin's own binary, or the one on PATH.
    python_with("bindings/python/requirements-build.txt", "target/python-wheel/maturin");
    let installed = root().join("target/python-wheel/maturin/bin/maturin");
    let mut maturin = Command::new(if installed.exists() { installed } else { "maturin".into() });
    run(
        maturin
            .args(["build", "--profile", "dev", "--manifest-path"])
            .arg(root().join("bindings/python/Cargo.toml"))
            .arg("--out")
            .arg(&out)
            .env("CARGO_TARGET_DIR", root().join("target/python-wheel/cargo"))
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTFLAGS"),
        "building the wheel (maturin build)",
    );
    let wheel = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"));
    wheel.expect("maturin built a wheel")
}

/// A fresh virtualenv in `dir` with the wheel and the pinned test requirements.
fn venv(dir: &Path, wheel: &Path) -> std::path::PathBuf {
    let venv = dir.join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "creating a virtualenv");
    let python = venv.join("bin/python");
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .arg(wheel)
            .arg("-r")
            .arg(root().join("bindings/python/requirements-test.txt")),
        "installing the wheel and its test requirements into the virtualenv",
    );
    python
}

#[test]
fn the_wheel_passes_its_python_tests_in_a_fresh_virtualenv() {
    let wheel = build_wheel();
    let dir = tempfile::tempdir().unwrap();
    let python = venv(dir.path(), &wheel);
    let postgres = scratchpad_tests::postgres::server().fresh_database();
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root().join("bindings/python/tests"))
        .env("SCRATCHPAD_TEST_POSTGRES", &postgres)
        .env("SCRATCHPAD_PROBE", scratchpad_tests::components::PROBE_PATH)
        .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
        .current_dir(dir.path())
        .output()
        .expect("running pytest");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pytest failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(" passed") && !stdout.contains("failed"), "{stdout}");
}
