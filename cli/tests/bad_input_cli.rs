//! Bad command lines, table-driven, through the real `scratchpad` binary: each gets a clear
//! message and its documented exit status (2 usage, 1 refused or failed, 3 plugin refused),
//! and leaves the database byte-for-byte unchanged. (The API's table is
//! `tests/tests/bad_input.rs`.)

use crate::support;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use scratchpad_tests::dump_all;
use support::run as scratchpad;

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

#[test]
fn every_bad_command_line_gets_a_clear_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let setup = [
        args(&["session", "create", "s"]),
        args(&["call", "s", "session.scratchpad", r#"{"action":"set_notes","content":"kept"}"#, "--turn", "t1"]),
    ];
    for command in setup {
        let out = scratchpad(&db, &command);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let file = dir.path().join("observation.txt");
    std::fs::write(&file, "output").unwrap();
    let file = file.to_str().unwrap();
    let text_file = dir.path().join("notes.wasm");
    std::fs::write(&text_file, "not wasm").unwrap();
    let text_file = text_file.to_str().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\x00\x00\x00").unwrap();
    let core = core.to_str().unwrap();
    let bad_utf8_config = dir.path().join("bad.toml");
    std::fs::write(&bad_utf8_config, b"database = \"\xff\"\n").unwrap();
    let bad_utf8_config = bad_utf8_config.to_str().unwrap();
    let zero_timeout = dir.path().join("zero.toml");
    std::fs::write(&zero_timeout, "[limits]\ncall_timeout_ms = 0\n").unwrap();
    let zero_timeout = zero_timeout.to_str().unwrap();
    let invalid_utf8 = |before: &[&str], bad: &[u8], after: &[&str]| {
        let mut list = args(before);
        list.push(OsString::from_vec(bad.to_vec()));
        list.extend(args(after));
        list
    };
    let call = |json: &str| args(&["call", "s", "session.scratchpad", json, "--turn", "t1"]);
    let precompiled = dir.path().join("precompiled");
    let precompiled = precompiled.to_str().unwrap();

    let cases: Vec<(&str, Vec<OsString>, i32, &str)> = vec![
        ("unknown subcommand", args(&["frobnicate"]), 2, "unrecognized subcommand 'frobnicate'"),
        ("missing JSON", args(&["call", "s", "session.scratchpad"]), 2, "<JSON>"),
        ("fork and spawn", args(&["session", "create", "x", "--fork", "s", "--spawn", "s"]), 2, "cannot be used with"),
        ("copy without spawn", args(&["session", "create", "x", "--copy"]), 2, "--spawn"),
        ("unknown flag", args(&["session", "list", "--colour"]), 2, "unexpected argument '--colour'"),
        ("negative tokens", args(&["query", "s", "hi", "--turn", "t1", "--tokens-used", "-5"]), 2, "-5"),
        (
            "tokens not a number",
            args(&["query", "s", "hi", "--turn", "t1", "--context-window", "lots"]),
            2,
            "invalid digit",
        ),
        (
            "tokens past u64",
            args(&["query", "s", "hi", "--turn", "t1", "--tokens-used", "18446744073709551616"]),
            2,
            "too large",
        ),
        ("negative step", args(&["observe", "s", "fs_read", file, "--turn", "t1", "--step", "-1"]), 2, "-1"),
        ("invalid UTF-8 session", invalid_utf8(&["show"], b"s\xff", &[]), 2, "invalid UTF-8"),
        (
            "invalid UTF-8 JSON",
            invalid_utf8(&["call", "s", "session.scratchpad"], b"{\"\xff\"}", &["--turn", "t1"]),
            2,
            "invalid UTF-8",
        ),
        ("malformed JSON", call("{oops"), 1, "not valid JSON"),
        ("arguments an array", call("[1]"), 1, "must be a JSON object, got an array"),
        ("unknown action", call(r#"{"action":"explode"}"#), 1, "`action` must be one of"),
        (
            "unknown tool",
            args(&["call", "s", "nosuch.tool", "{}", "--turn", "t1"]),
            1,
            "no loaded plugin offers a tool named `nosuch.tool`",
        ),
        (
            "missing session",
            args(&["call", "nope", "session.scratchpad", "{}", "--turn", "t1"]),
            1,
            "session `nope` does not exist",
        ),
        ("show a missing session", args(&["show", "nope"]), 1, "session `nope` does not exist"),
        ("empty session id", args(&["session", "create", ""]), 1, "session id: must not be empty"),
        (
            "oversize session id",
            args(&["session", "create", &"x".repeat(257)]),
            1,
            "is 257 bytes long; the limit is 256",
        ),
        ("oversize turn id", args(&["tools", "s", "--turn", &"t".repeat(257)]), 1, "turn id: is 257 bytes long"),
        ("duplicate session", args(&["session", "create", "s"]), 1, "session `s` already exists"),
        (
            "precompile for no target",
            args(&["precompile", precompiled, "--target", "nonsense"]),
            1,
            "target `nonsense`",
        ),
        (
            "precompile for a target this build cannot compile for",
            args(&["precompile", precompiled, "--target", "riscv64gc-unknown-linux-gnu"]),
            1,
            "compiling for `riscv64gc-unknown-linux-gnu`",
        ),
        (
            "fork of a missing parent",
            args(&["session", "create", "x", "--fork", "ghost"]),
            1,
            "session `ghost` does not exist",
        ),
        (
            "metadata an array",
            args(&["observe", "s", "fs_read", file, "--turn", "t1", "--metadata", "[1]"]),
            1,
            "--metadata must be a JSON object",
        ),
        (
            "metadata not JSON",
            args(&["observe", "s", "fs_read", file, "--turn", "t1", "--metadata", "{"]),
            1,
            "--metadata must be a JSON object",
        ),
        (
            "observe a missing file",
            args(&["observe", "s", "fs_read", "/nonexistent/x", "--turn", "t1"]),
            1,
            "reading /nonexistent/x",
        ),
        (
            "missing config file",
            args(&["--config", "/nonexistent/c.toml", "session", "list"]),
            1,
            "reading config file /nonexistent/c.toml",
        ),
        ("config not UTF-8", args(&["--config", bad_utf8_config, "session", "list"]), 1, "UTF-8"),
        (
            "config with a zero limit",
            args(&["--config", zero_timeout, "session", "list"]),
            1,
            "call_timeout_ms must be greater than 0",
        ),
        ("inspect a text file", args(&["inspect", text_file]), 3, "not a WebAssembly file"),
        (
            "plugin a core module",
            args(&["--plugin", core, "--allow-unsigned", "core", "session", "list"]),
            3,
            "core WebAssembly module, not a component",
        ),
        (
            "plugin an unsigned file",
            args(&["--plugin", core, "session", "list"]),
            3,
            "its signature was not accepted: no signature",
        ),
        (
            "grant an unknown power",
            args(&["--plugin", core, "--grant", "core=root", "session", "list"]),
            1,
            "unknown power(s) `root`",
        ),
        (
            "grant to no plugin",
            args(&["--grant", "nobody=inject", "session", "list"]),
            1,
            "no plugin is named `nobody`",
        ),
        (
            "plugin a missing file",
            args(&["--plugin", "/nonexistent/p.wasm", "session", "list"]),
            3,
            "reading /nonexistent/p.wasm",
        ),
    ];
    let mut failures = Vec::new();
    for (name, command, status, needle) in cases {
        let before = dump_all(&db);
        let out = scratchpad(&db, &command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(status) || !stderr.contains(needle) {
            failures
                .push(format!("{name}: expected exit {status} and {needle:?}, got {:?}: {stderr}", out.status.code()));
        }
        if dump_all(&db) != before {
            failures.push(format!("{name}: the stored state changed"));
        }
    }
    assert!(failures.is_empty(), "{} bad command lines misbehaved:\n{}", failures.len(), failures.join("\n"));
    assert!(!Path::new(precompiled).exists(), "a refused `precompile` wrote nothing");

    // With --json the error is a value on stdout, with the tool error's kind.
    let out = scratchpad(&db, &[args(&["--json"]), call("[1]")].concat());
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((body["ok"].as_bool(), body["error"]["code"].as_str()), (Some(false), Some("invalid-arguments")));

    // A command line clap refuses is JSON too under --json, with the usage exit status.
    let out = scratchpad(&db, &args(&["--json", "call", "s"]));
    assert_eq!(out.status.code(), Some(2));
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a usage error is JSON on stdout");
    assert_eq!((body["ok"].as_bool(), body["error"]["code"].as_str()), (Some(false), Some("usage")));
    assert!(body["error"]["message"].as_str().unwrap().contains("required arguments were not provided"), "{body}");
}
