//! The session notepad's tools: read, write, and every update operation, over the notes space.

use scratchpad_plugin_sdk::ToolError;
use serde_json::{Value, json};

use crate::state::NOTES;
use crate::testing::Harness;

fn notepad() -> Harness {
    Harness::new(r#"{"surfaces": ["notepad"], "notesMaxChars": 30}"#)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn update(h: &mut Harness, args: Value) -> Value {
    json_of(&h.ok("update_notepad", &args.to_string()))
}

#[test]
fn read_notepad_returns_an_empty_string_before_anything_is_written() {
    let mut h = notepad();
    let empty = json!({"content": "", "usage": "notepad 0/30 chars"});
    assert_eq!(json_of(&h.ok("read_notepad", "{}")), empty, "every response states the budget");
    assert_eq!(json_of(&h.ok("read_notepad", "")), empty);
}

#[test]
fn write_notepad_replaces_everything_and_read_notepad_returns_it() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "old"}"#);
    let out = json_of(&h.ok("write_notepad", r###"{"content": "## Plan\n- [ ] a"}"###));
    assert_eq!(out, json!({"ok": true, "usage": "notepad 15/30 chars"}));
    assert_eq!(
        json_of(&h.ok("read_notepad", "{}")),
        json!({"content": "## Plan\n- [ ] a", "usage": "notepad 15/30 chars"})
    );
}

#[test]
fn write_notepad_with_an_empty_string_clears_it() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "x"}"#);
    h.ok("write_notepad", r#"{"content": ""}"#);
    assert!(!h.storage.entries.contains_key(NOTES));
}

#[test]
fn write_notepad_over_the_limit_truncates_with_a_warning() {
    let mut h = notepad();
    let out = json_of(&h.ok("write_notepad", &json!({"content": "ü".repeat(40)}).to_string()));
    assert_eq!(out["ok"], true);
    assert_eq!(out["warning"], "Notepad truncated to 30 chars (original: 40). Consider summarizing.");
    assert_eq!(out["usage"], "notepad 30/30 chars");
    assert_eq!(h.text(NOTES), "ü".repeat(30));
}

#[test]
fn find_replace_replaces_the_first_occurrence_by_default() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "- [ ] a\n- [ ] b"}"#);
    let out = update(&mut h, json!({"operation": "find_replace", "find": "- [ ]", "replace": "- [x]"}));
    assert_eq!(out["replaced"], 1);
    assert_eq!(h.text(NOTES), "- [x] a\n- [ ] b");
}

#[test]
fn find_replace_with_replace_all_replaces_every_occurrence() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "- [ ] a\n- [ ] b"}"#);
    let out =
        update(&mut h, json!({"operation": "find_replace", "find": "[ ]", "replace": "[x]", "replace_all": true}));
    assert_eq!(out["replaced"], 2);
    assert_eq!(h.text(NOTES), "- [x] a\n- [x] b");
}

#[test]
fn find_replace_of_absent_text_is_not_found_and_changes_nothing() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "abc"}"#);
    let error = h.err("update_notepad", r#"{"operation": "find_replace", "find": "xyz", "replace": ""}"#);
    assert!(matches!(error, ToolError::NotFound(m) if m.contains("`find`")));
}

#[test]
fn append_and_prepend_join_with_newlines() {
    let mut h = notepad();
    update(&mut h, json!({"operation": "append", "content": "mid"}));
    update(&mut h, json!({"operation": "append", "content": "end"}));
    let out = update(&mut h, json!({"operation": "prepend", "content": "top"}));
    assert_eq!(h.text(NOTES), "top\nmid\nend");
    assert_eq!(out, json!({"ok": true, "usage": "notepad 11/30 chars"}));
}

#[test]
fn prepend_to_an_empty_notepad_adds_no_newline() {
    let mut h = notepad();
    update(&mut h, json!({"operation": "prepend", "content": "top"}));
    assert_eq!(h.text(NOTES), "top");
}

#[test]
fn delete_removes_the_given_text() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "keep\nobsolete\nkeep"}"#);
    update(&mut h, json!({"operation": "delete", "content": "\nobsolete"}));
    assert_eq!(h.text(NOTES), "keep\nkeep");
}

#[test]
fn delete_of_absent_text_is_not_found_and_changes_nothing() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "abc"}"#);
    assert!(matches!(h.err("update_notepad", r#"{"operation": "delete", "content": "zzz"}"#), ToolError::NotFound(_)));
}

#[test]
fn an_update_over_the_limit_is_rejected_and_changes_nothing() {
    let mut h = notepad();
    h.ok("write_notepad", &json!({"content": "x".repeat(25)}).to_string());
    for args in [
        json!({"operation": "append", "content": "123456"}),
        json!({"operation": "prepend", "content": "123456"}),
        json!({"operation": "find_replace", "find": "x", "replace": "1234567"}),
    ] {
        match h.err("update_notepad", &args.to_string()) {
            ToolError::Rejected(m) => assert!(m.contains("30 char budget") && m.contains("write_notepad"), "{m}"),
            other => panic!("{args}: expected rejected, got {other:?}"),
        }
    }
}

#[test]
fn the_token_budget_applies_to_the_notepad() {
    let mut h = Harness::new(r#"{"surfaces": ["notepad"], "tokenBudget": true, "maxTokens": 2}"#);
    let out = json_of(&h.ok("write_notepad", r#"{"content": "a b c"}"#));
    assert_eq!(out["warning"], "Notepad truncated to 2 tokens (original: 3). Consider summarizing.");
    assert!(matches!(
        h.err("update_notepad", r#"{"operation": "append", "content": "z"}"#),
        ToolError::Rejected(m) if m.contains("2 token budget")
    ));
}

#[test]
fn malformed_update_arguments_are_invalid_naming_the_field_and_change_nothing() {
    let mut h = notepad();
    h.ok("write_notepad", r#"{"content": "abc"}"#);
    let cases = [
        ("{}", "`operation` is required"),
        (r#"{"operation": "rewrite"}"#, "`operation` must be one of"),
        (r#"{"operation": "append"}"#, "`content` is required"),
        (r#"{"operation": "append", "content": ""}"#, "`content` must not be empty"),
        (r#"{"operation": "find_replace", "replace": "x"}"#, "`find` is required"),
        (r#"{"operation": "find_replace", "find": "a"}"#, "`replace` is required"),
        (r#"{"operation": "find_replace", "find": "", "replace": "x"}"#, "`find` must not be empty"),
        (r#"{"operation": "find_replace", "find": "a", "replace": "x", "replace_all": "yes"}"#, "`replace_all`"),
        ("nope", "not valid JSON"),
    ];
    for (args, expected) in cases {
        match h.err("update_notepad", args) {
            ToolError::InvalidArguments(m) => assert!(m.contains(expected), "{args}: {m}"),
            other => panic!("{args}: expected invalid-arguments, got {other:?}"),
        }
    }
    assert!(
        matches!(h.err("write_notepad", r#"{"content": 5}"#), ToolError::InvalidArguments(m) if m.contains("`content`"))
    );
    assert!(matches!(h.err("read_notepad", "[1]"), ToolError::InvalidArguments(_)));
}

#[test]
fn the_notepad_is_the_notes_space_of_session_scratchpad() {
    let mut h = Harness::new(r#"{"surfaces": ["scratchpad", "notepad"]}"#);
    h.ok("session.scratchpad", r#"{"action": "set_notes", "content": "shared"}"#);
    assert_eq!(json_of(&h.ok("read_notepad", "{}")), json!({"content": "shared", "usage": "notepad 6/4000 chars"}));
    update(&mut h, json!({"operation": "append", "content": "more"}));
    assert!(h.ok("session.scratchpad", r#"{"action": "set_plan", "content": "p"}"#).contains("notes 11/4000 chars"));
}
