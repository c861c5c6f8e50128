//! The Python wheel (`bindings/python`, import name `scratchpad`): the manylinux wheel `cargo
//! xtask dist` builds for this platform (`scratchpad_tests::dist`, `dist-test` profile), installed into
//! a fresh virtualenv, and tested there by pytest (`bindings/python/tests`): every method and
//! error, threads and processes on one SQLite file, PostgreSQL (a fresh database on this test
//! process's server, the Rust suite's harness), a plugin that loops forever, recall (a session
//! of a project starts from what an earlier one saved, never its private span or secret, never
//! another project's), the LangChain middleware in a real agent loop, and the OpenAI Agents SDK
//! adapter in real `Runner.run` loops against a scripted Responses API.

use std::path::Path;
use std::process::Command;

use scratchpad_tests::dist::{artifacts, file};
use scratchpad_tests::runtimes::{root, run};

/// The host wheel, as released.
fn build_wheel() -> std::path::PathBuf {
    file(artifacts(), "scratchpad_host-", ".whl")
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
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root().join("bindings/python/tests"))
        .env("SCRATCHPAD_TEST_POSTGRES", &postgres)
        .env("SCRATCHPAD_PROBE", scratchpad_tests::components::PROBE_PATH)
        .env("XDG_CACHE_HOME", cache.path())
        .current_dir(dir.path())
        .output()
        .expect("running pytest");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pytest failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(" passed") && !stdout.contains("failed"), "{stdout}");
    scratchpad_tests::assert_no_embedded_component_compiled(&cache.path().join("scratchpad"));
}
