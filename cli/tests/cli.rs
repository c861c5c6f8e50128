//! The `scratchpad` binary as a user runs it: every command a fresh process on one database.

use std::process::Command;

use serde_json::Value;

use crate::support;

use support::{json_of, run as scratchpad, text};

#[test]
fn state_written_by_one_process_is_injected_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    assert!(scratchpad(&db, &["session", "create", "s1"]).status.success());
    let set = scratchpad(&db, &["call", "s1", "session.scratchpad", r#"{"action":"set_plan","content":"1. ship it"}"#]);
    assert!(set.status.success(), "{}", text(&set.stderr));

    let query = scratchpad(&db, &["query", "s1", "continue", "--system", "You are an agent."]);
    assert!(query.status.success(), "{}", text(&query.stderr));
    let out = text(&query.stdout);
    assert!(out.contains("[Session Scratchpad - your persistent working memory]"), "{out}");
    assert!(out.contains("1. ship it"), "{out}");
    assert!(out.contains("You are an agent."), "{out}");
    assert!(out.trim_end().ends_with("continue"), "the message comes last, untouched: {out}");
}

#[test]
fn json_output_carries_results_injections_by_placement_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    assert!(scratchpad(&db, &["session", "create", "s1"]).status.success());

    let ok = scratchpad(&db, &["--json", "call", "s1", "session.scratchpad", r#"{"action":"refs.add","ref":"a.rs"}"#]);
    assert!(ok.status.success());
    let ok = json_of(&ok);
    assert_eq!(ok["ok"], true);
    assert_eq!(ok["plugin"], "scratchpad");
    assert!(ok["content"].as_str().unwrap().contains("a.rs"));

    let refused =
        scratchpad(&db, &["--json", "call", "s1", "session.scratchpad", r#"{"action":"refs.remove","ref":"b.rs"}"#]);
    assert_eq!(refused.status.code(), Some(1), "a tool error exits 1");
    let refused = json_of(&refused);
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"]["code"], "not-found");
    assert_eq!(refused["error"]["tool"], "session.scratchpad");

    let query = json_of(&scratchpad(&db, &["--json", "query", "s1", "hi"]));
    let context = query["injections"]["prepend-context"].as_array().unwrap();
    assert!(context.iter().any(|i| i["text"].as_str().unwrap().contains("- a.rs")), "{query}");
    assert!(query["injections"]["append-system"].as_array().unwrap().iter().any(|i| i["plugin"] == "scratchpad"));
    assert!(query["rendered"]["user"].as_str().unwrap().ends_with("hi"));

    let missing = scratchpad(&db, &["--json", "show", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(json_of(&missing)["error"]["code"], "session-not-found");
}

#[test]
fn fork_and_spawn_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    assert!(scratchpad(&db, &["session", "create", "p"]).status.success());
    let notes = r#"{"action":"set_notes","content":"parent notes"}"#;
    assert!(scratchpad(&db, &["call", "p", "session.scratchpad", notes]).status.success());
    assert!(scratchpad(&db, &["session", "create", "f", "--fork", "p"]).status.success());
    assert!(scratchpad(&db, &["session", "create", "c", "--spawn", "p", "--copy"]).status.success());
    assert!(scratchpad(&db, &["session", "create", "e", "--spawn", "p"]).status.success());
    for (session, has_notes) in [("f", true), ("c", true), ("e", false)] {
        let shown = text(&scratchpad(&db, &["show", session]).stdout);
        assert_eq!(shown.contains("parent notes"), has_notes, "{session}: {shown}");
    }
    let orphan = scratchpad(&db, &["session", "create", "x", "--fork", "missing"]);
    assert_eq!(orphan.status.code(), Some(1));
    assert!(text(&orphan.stderr).contains("session `missing` does not exist"));
}

#[test]
fn inspect_lists_a_components_exports_and_tools_and_refuses_non_components() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let component = scratchpad_tests::first_party("scratchpad");
    let report = scratchpad(&db, &["inspect", component.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    let out = text(&report.stdout);
    assert!(out.contains("scratchpad:plugin/hooks@0.1.3"), "{out}");
    let asks = "asks for: inject, guidance, compaction-warnings, storage, checkpoints, tokens, log, config, index";
    assert!(out.contains(asks), "{out}");
    let digest = scratchpad_tests::digest_of(&component);
    assert!(out.contains(&format!("identity: {digest}")), "{out}");
    assert!(out.contains("session.scratchpad"), "{out}");

    let bogus = dir.path().join("bogus.wasm");
    std::fs::write(&bogus, b"definitely not wasm").unwrap();
    let refused = scratchpad(&db, &["--json", "inspect", bogus.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(3), "a refused plugin exits 3");
    let refused = json_of(&refused);
    assert!(refused["plugin"]["error"].as_str().unwrap().contains("not a WebAssembly file"), "{refused}");
}

#[test]
fn the_demo_shows_the_spaces_a_rejected_append_and_the_block_after_a_restart() {
    let output = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
        .arg("demo")
        .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    scratchpad_tests::assert_demo_output(&text(&output.stdout));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    assert_eq!(scratchpad(&db, &["session", "create", "x", "--copy"]).status.code(), Some(2));
    assert_eq!(scratchpad(&db, &["call", "only-session"]).status.code(), Some(2));
}

#[test]
fn observe_offloads_a_file_and_the_model_reads_it_back_in_the_same_turn() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let log = dir.path().join("big.log");
    let text_of_log: String = (0..2000).map(|i| format!("INFO line {i}\n")).collect();
    std::fs::write(&log, &text_of_log).unwrap();
    assert!(scratchpad(&db, &["session", "create", "s1"]).status.success());

    let observed = scratchpad(&db, &["observe", "s1", "fs_read", log.to_str().unwrap(), "--turn", "t1"]);
    assert!(observed.status.success(), "{}", text(&observed.stderr));
    let seen = json_of(&observed);
    assert_eq!(seen["size_bytes"], text_of_log.len(), "stdout is exactly the synthetic observation: {seen}");
    let id = seen["scratchpad_id"].as_str().unwrap().to_owned();
    assert!(text(&observed.stderr).contains("turn t1, step 1"));

    // Another process, the same turn: the tool is offered and reads the stored content.
    let tools = text(&scratchpad(&db, &["tools", "s1", "--turn", "t1"]).stdout);
    assert!(tools.contains("scratchpad_read"), "{tools}");
    let args = format!(r#"{{"scratchpad_id":"{id}","mode":"head","n":20}}"#);
    let read = json_of(&scratchpad(&db, &["--json", "call", "s1", "scratchpad_read", &args, "--turn", "t1"]));
    let content: Value = serde_json::from_str(read["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["content"], text_of_log[..20]);
    // A turn of its own (no --turn) does not see it: the large-observation store's turn isolation.
    let elsewhere = scratchpad(&db, &["--json", "call", "s1", "scratchpad_read", &args]);
    assert_eq!(elsewhere.status.code(), Some(1));
    let refused = json_of(&elsewhere);
    assert_eq!(refused["error"]["code"], "not-found", "{refused}");

    // Small results pass through: the text as the model sees it.
    let small = dir.path().join("small.txt");
    std::fs::write(&small, "just a line").unwrap();
    let passed = scratchpad(&db, &["observe", "s1", "fs_read", small.to_str().unwrap(), "--turn", "t1"]);
    assert_eq!(text(&passed.stdout), "just a line\n");

    // gc removes nothing that has not expired.
    let gc = json_of(&scratchpad(&db, &["--json", "gc"]));
    assert_eq!(gc["removed"], 0, "{gc}");
    let shown = json_of(&scratchpad(&db, &["--json", "show", "s1"]));
    assert_eq!(shown["observations"].as_array().unwrap().len(), 1);
}

#[cfg(unix)]
#[test]
fn a_reader_that_goes_away_ends_a_command_quietly_not_with_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::command()
        .args(["--db", dir.path().join("d.db").to_str().unwrap(), "demo"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader is gone before the first line (the host takes far longer to open than this),
    // as with `scratchpad demo | true`.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = support::text(&output.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "ended by SIGPIPE: {:?}", output.status);
}
