//! `scratchpad ui` in a real browser: Debian's headless Chromium driven by Selenium through
//! chromium-driver (installed by `.ci/setup/browser.sh` when missing; Selenium pinned in
//! tests/clients/browser-requirements.txt), on a SQLite file and on the suite's PostgreSQL. The
//! script (tests/clients/viewer_browser.py) starts the viewer on 127.0.0.1 and kills it by PID;
//! the SQLite run writes the screenshot docs/viewer.md shows (to target/viewer, copied by hand).

use scratchpad_tests::runtimes::{python_with, root};
use scratchpad_tests::{Fixture, setup};

use crate::support;

/// Runs the browser script against `database`, writing the screenshot to `screenshot`.
fn browse(database: &str, screenshot: &std::path::Path) {
    setup::ensure_commands(&setup::BROWSER, &["chromium", "chromedriver"]);
    let mut python = python_with("tests/clients/browser-requirements.txt", "target/python-browser");
    let output = python
        .arg(root().join("tests/clients/viewer_browser.py"))
        .arg(env!("CARGO_BIN_EXE_scratchpad"))
        .arg(database)
        .arg(screenshot)
        .env("SCRATCHPAD_TEST_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("running python3");
    let (stdout, stderr) = (support::text(&output.stdout), support::text(&output.stderr));
    assert!(output.status.success(), "the browser script failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
}

#[test]
fn chromium_shows_sessions_plan_prompt_and_observations_and_live_updates_on_sqlite() {
    let fx = Fixture::new();
    let shots = root().join("target/viewer");
    std::fs::create_dir_all(&shots).unwrap();
    browse(&fx.database_arg(), &shots.join("session.png"));
}

#[test]
fn chromium_shows_the_same_on_postgresql() {
    let fx = Fixture::postgres();
    browse(&fx.database_arg(), &fx.dir.path().join("session.png"));
}

#[test]
fn a_port_in_use_is_one_line_naming_the_port_and_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let output: std::process::Output = support::command()
        .args(["--db", db.to_str().unwrap(), "ui", "--addr", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = support::text(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("port {port} on 127.0.0.1 is in use")) && stderr.contains("--addr"), "{stderr}");
    assert!(!db.exists(), "a refused start opened no database");
}
