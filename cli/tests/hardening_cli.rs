//! What a hostile plugin (`tests/components/hostile`, raw WIT) can make the `scratchpad` CLI
//! print, and under which name it may load, through the real binary:
//! - plugin-supplied text never drives the terminal: control characters (escape sequences,
//!   carriage returns, NUL) are shown as `\u{..}` escapes, as `--json` escapes them;
//! - a plugin's multi-line text is an indented block under a header naming the plugin, and an
//!   error is one line, so nothing a plugin writes passes for the CLI's own output;
//! - a file cannot take a built-in plugin's name, and with it that plugin's stored data.

use scratchpad_tests::components::HOSTILE_PATH;

use crate::support;

use support::run as scratchpad;

/// Asserts no byte a terminal would obey reaches it, and returns the text.
fn inert(bytes: &[u8], what: &str) -> String {
    let text = String::from_utf8(bytes.to_vec()).expect("the CLI prints UTF-8");
    let obeyed: Vec<char> = text.chars().filter(|c| c.is_control() && *c != '\n').collect();
    assert!(obeyed.is_empty(), "{what} printed control characters {obeyed:?}:\n{text}");
    text
}

#[test]
fn plugin_text_is_escaped_and_attributed_in_every_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let config = dir.path().join("config.toml");
    // Built here and trusted: unsigned, granted every power it asks for.
    let all = scratchpad_host::Grants::ALL.names();
    // A description with an escape sequence, loaded beside the default plugins.
    std::fs::write(
        &config,
        format!(
            "[[plugin]]\nname = \"scratchpad\"\n[[plugin]]\nname = \"hostile\"\npath = {HOSTILE_PATH:?}\n\
             allow_unsigned = true\ngrants = {all:?}\n[plugin.config]\ndescription = \"title\\u001b]0;owned\\u0007 and\\rover\"\n"
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--config", config.to_str().unwrap()];
        all.extend_from_slice(args);
        scratchpad(&db, &all)
    };
    assert!(run(&["session", "create", "s"]).status.success());

    let called = run(&["call", "s", "h.run", r#"{"attack":"spoof"}"#]);
    assert!(called.status.success());
    let out = inert(&called.stdout, "call");
    assert!(out.contains("\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\u{d}"), "{out}");

    assert!(run(&["call", "s", "h.run", r#"{"attack":"stash"}"#]).status.success());
    assert!(
        run(&["call", "s", "session.scratchpad", r#"{"action":"set_notes","content":"real notes"}"#]).status.success()
    );
    let shown = run(&["show", "s"]);
    assert!(shown.status.success());
    let out = inert(&shown.stdout, "show");
    // The forged header is inside the hostile plugin's indented block; the real one is the
    // scratchpad's.
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with('[')).collect();
    assert!(headers.contains(&"[scratchpad] notes"), "{out}");
    assert!(headers.iter().all(|h| h.starts_with("[scratchpad]") || h.starts_with("[hostile]")), "{out}");
    assert!(headers.contains(&"[hostile] notes\\u{1b}[2J"), "{out}");
    assert!(out.contains("  │ [scratchpad] notes\n  │ forged notes"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("forged") || l.starts_with("error:")), "{out}");
    assert!(out.contains("[hostile] metadata flag\\u{d} = \"\\u001b]0;owned\\u0007\""), "{out}");

    for listing in [&["tools", "s"][..], &["plugins"][..]] {
        let listed = run(listing);
        assert!(listed.status.success());
        let out = inert(&listed.stdout, listing[0]);
        assert!(out.contains("title\\u{1b}]0;owned\\u{7} and\\u{d}over"), "{out}");
    }

    // A refusal's message is the plugin's: one line on stderr after the CLI's attribution.
    let refused = run(&["call", "s", "h.run", r#"{"attack":"refuse"}"#]);
    assert_eq!(refused.status.code(), Some(1));
    let err = inert(&refused.stderr, "an error");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: tool `h.run` (plugin `hostile`) refused the call: "), "{err}");
}

#[test]
fn a_file_named_after_a_built_in_plugin_does_not_get_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    assert!(scratchpad(&db, &["session", "create", "s"]).status.success());
    let note = r#"{"action":"set_notes","content":"the built-in's notes"}"#;
    assert!(scratchpad(&db, &["call", "s", "session.scratchpad", note]).status.success());

    // The built-in scratchpad not loaded; a file called scratchpad.wasm beside the observations.
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[[plugin]]\nname = \"observations\"\n").unwrap();
    let impostor = dir.path().join("scratchpad.wasm");
    std::fs::copy(HOSTILE_PATH, &impostor).unwrap();
    let args = ["--config", config.to_str().unwrap(), "--plugin", impostor.to_str().unwrap(), "show", "s"];
    let refused = scratchpad(&db, &args);
    assert_eq!(refused.status.code(), Some(3), "a plugin refused at load exits 3");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("the name `scratchpad` is reserved for the embedded component"), "{err}");
    assert!(!String::from_utf8_lossy(&refused.stdout).contains("the built-in's notes"));
}
