//! The release targets this machine cannot run natively, built by `cargo xtask dist` (dev
//! profile) and run the way their users would: the aarch64 Linux binary under Debian's
//! qemu-user (with the arm64 glibc Debian ships for cross builds), the Windows binary under
//! Debian's wine. Each runs `--version` and `demo`; the Windows one also answers a hook event,
//! the path Claude Code and Codex take. What runs them is installed by `.ci/setup/release/cross.sh`
//! when missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use scratchpad_tests::dist::{VERSION, build, file};
use scratchpad_tests::runtimes::{root, run};
use scratchpad_tests::setup::ensure_commands;

/// Builds `target`'s artifacts into `target/dist-<target>` and unpacks its archive into `dir`;
/// the binary.
fn binary(target: &str, exe: &str, dir: &Path) -> PathBuf {
    ensure_commands(&scratchpad_tests::setup::CROSS, &["qemu-aarch64", "x86_64-w64-mingw32-gcc", "wine"]);
    let out = root().join(format!("target/dist-{target}"));
    build(&[target], &out);
    let archive = file(&out, &format!("scratchpad-{VERSION}-{target}"), ".tar.gz");
    run(Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(dir), "unpacking the archive");
    dir.join(format!("scratchpad-{VERSION}-{target}")).join(exe)
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
    // Wine 8 has no bcryptprimitives.dll (Rust's std imports ProcessPrng from it; every Windows
    // 10 and later has it): a stand-in beside the binary, where Windows looks for DLLs first.
    run(
        Command::new("x86_64-w64-mingw32-gcc")
            .args(["-O2", "-shared", "-o"])
            .arg(binary.with_file_name("bcryptprimitives.dll"))
            .arg(root().join("tests/wine/bcryptprimitives.c"))
            .arg("-ladvapi32"),
        "building the bcryptprimitives.dll stand-in for wine",
    );
    let wine = |args: &[&str]| {
        let mut command = Command::new("wine");
        command
            .arg(&binary)
            .args(args)
            .env("WINEPREFIX", dir.path().join("wine"))
            .env("WINEDEBUG", "-all")
            // The demo's temporary database and the compiled-component cache go under these.
            .env("TEMP", r"C:\windows\temp")
            .env("XDG_CACHE_HOME", r"C:\windows\temp\cache")
            .env("XDG_DATA_HOME", r"C:\windows\temp\data")
            .env("XDG_STATE_HOME", r"C:\windows\temp\state");
        command
    };
    let version = run(&mut wine(&["--version"]), "scratchpad.exe --version under wine");
    assert_eq!(stdout(&version).trim(), format!("scratchpad {VERSION}"));
    let demo = run(&mut wine(&["demo"]), "scratchpad.exe demo under wine");
    scratchpad_tests::assert_demo_output(&stdout(&demo));

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
