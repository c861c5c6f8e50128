//! The Node package of the host (`bindings/node`, `@scratchpad-dev/host`): the packages `cargo
//! xtask dist` packs for this platform (`scratchpad_tests::dist`, `dist-test` profile), installed from
//! their tarballs into a fresh directory with the pinned packages of
//! `bindings/node/test/package.json` (the AI SDK, TypeScript), then tested there on Node 24:
//! the published types by `tsc --strict`, and the package by node's test runner
//! (`bindings/node/test/*.test.mjs`): every method and error, the shared tool-name vectors, worker threads and processes on
//! one SQLite file, PostgreSQL (a fresh database on this test process's server, the Rust
//! suite's harness), a plugin that loops forever, a worker ended with calls in flight, both module systems, a platform with no
//! binary, recall (a session of a project starts from what an earlier one saved, never its
//! private span or secret, never another project's), and the AI SDK integration in real `generateText` and `streamText` loops against
//! the scripted Chat Completions server (`tests/scripted/chat.py`); and the README's example.

use std::path::Path;
use std::process::Command;

use scratchpad_tests::dist::{artifacts, file};
use scratchpad_tests::runtimes::{node24, root, run};

/// The test files, copied beside the installed packages so they resolve them as a user's
/// program would.
const FILES: &[&str] = &[
    "package.json",
    "types.ts",
    "host.test.mjs",
    "ai-sdk.test.mjs",
    "tool-names.test.mjs",
    "recall.test.mjs",
    "example.mjs",
];

/// A fresh directory with the packed packages and the tests' pinned packages installed.
fn installed(dir: &Path) {
    let tests = root().join("bindings/node/test");
    for name in FILES {
        std::fs::copy(tests.join(name), dir.join(name)).unwrap_or_else(|e| panic!("copying {name}: {e}"));
    }
    let dist = artifacts();
    run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .arg(file(dist, "scratchpad-dev-host-linux-x64-gnu-", ".tgz"))
            .arg(file(dist, "scratchpad-dev-host-0", ".tgz"))
            .current_dir(dir),
        "installing @scratchpad-dev/host from its tarballs, and the tests' packages (npm install)",
    );
}

#[test]
fn the_node_package_installs_from_its_tarballs_and_passes_its_tests() {
    let dir = tempfile::tempdir().unwrap();
    installed(dir.path());
    let addon = dir.path().join("node_modules/@scratchpad-dev/host-linux-x64-gnu/scratchpad.linux-x64-gnu.node");
    assert!(addon.is_file(), "npm installed the platform package with its addon");

    let node = node24();
    let mut path = std::ffi::OsString::from(node.parent().unwrap());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    run(
        Command::new(&node)
            .arg("node_modules/typescript/bin/tsc")
            .args(["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"])
            .args(["--target", "es2022", "--types", "node", "types.ts"])
            .current_dir(dir.path()),
        "checking the published types (tsc --strict types.ts)",
    );

    let postgres = scratchpad_tests::postgres::server().fresh_database();
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(&node)
        .args(["--test", "--test-reporter=tap"])
        .args(FILES.iter().filter(|name| name.ends_with(".test.mjs")))
        .env("PATH", path)
        .env("SCRATCHPAD_TEST_POSTGRES", &postgres)
        .env("SCRATCHPAD_PROBE", scratchpad_tests::components::PROBE_PATH)
        .env("SCRATCHPAD_SCRIPTED_CHAT", root().join("tests/scripted/chat.py"))
        .env("SCRATCHPAD_TOOL_NAME_VECTORS", root().join("tests/embed/vectors/tool_names.json"))
        .env("XDG_CACHE_HOME", cache.path())
        .current_dir(dir.path())
        .output()
        .expect("running node --test");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "node --test failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("# fail 0") && stdout.contains("# pass 18"), "{stdout}");
    scratchpad_tests::assert_no_embedded_component_compiled(&cache.path().join("scratchpad"));

    let example = run(
        Command::new(&node).arg("example.mjs").arg(dir.path().join("example.db")).current_dir(dir.path()),
        "the README's example",
    );
    assert_eq!(String::from_utf8_lossy(&example.stdout), scratchpad_tests::NODE_EXAMPLE_OUTPUT);
}
