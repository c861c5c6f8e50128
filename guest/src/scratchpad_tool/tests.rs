//! `session.scratchpad`, row by row as the session scratchpad (actions, budgets) and the scratchpad extension (legacy form,
//! token budget messages) describe it.

use scratchpad_plugin_sdk::ToolError;

use crate::plugin::Scratchpad;
use crate::state::{NOTES, PLAN, REFS, read_refs};
use crate::testing::{Harness, RecordingStorage, WordTokenizer, turn};

const TOOL: &str = "session.scratchpad";

fn small() -> Harness {
    Harness::new(r#"{"notesMaxChars": 20, "planMaxChars": 10, "refsMaxItems": 3}"#)
}

fn refs(h: &Harness) -> Vec<String> {
    read_refs(&h.storage)
}

fn message(error: ToolError) -> String {
    match error {
        ToolError::InvalidArguments(m) | ToolError::Rejected(m) | ToolError::NotFound(m) => m,
        other => panic!("unexpected error {other:?}"),
    }
}

// ---- 000: actions ----

#[test]
fn set_notes_replaces_notes_entirely_and_reports_usage() {
    let mut h = Harness::new("{}");
    h.ok(TOOL, r#"{"action": "set_notes", "content": "first"}"#);
    let out = h.ok(TOOL, r#"{"action": "set_notes", "content": "Root cause: timezone"}"#);
    assert_eq!(h.text(NOTES), "Root cause: timezone");
    assert_eq!(out, "Notes set.\nUsage: notes 20/4000 chars; plan 0/2000 chars; refs 0/50 items");
}

#[test]
fn append_notes_joins_with_a_newline_and_no_leading_newline_when_empty() {
    let mut h = Harness::new("{}");
    h.ok(TOOL, r#"{"action": "append_notes", "content": "one"}"#);
    let out = h.ok(TOOL, r#"{"action": "append_notes", "content": "two"}"#);
    assert_eq!(h.text(NOTES), "one\ntwo");
    assert!(out.starts_with("Appended to notes.\nUsage: notes 7/4000 chars"), "{out}");
}

#[test]
fn set_plan_replaces_the_plan_entirely() {
    let mut h = Harness::new("{}");
    h.ok(TOOL, r#"{"action": "set_plan", "content": "1. Fix auth bug\n2. Add test\n3. Update docs"}"#);
    let out = h.ok(TOOL, r#"{"action": "set_plan", "content": "1. ~~Fix auth bug~~ DONE\n2. Add test <-- current"}"#);
    assert_eq!(h.text(PLAN), "1. ~~Fix auth bug~~ DONE\n2. Add test <-- current");
    assert!(out.contains("plan 48/2000 chars"), "{out}");
}

#[test]
fn refs_add_appends_one_ref_as_newest() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.add", "ref": "src/auth/login.ts"}"#);
    let out = h.ok(TOOL, r#"{"action": "refs.add", "ref": "https://github.com/org/repo/issues/42"}"#);
    assert_eq!(refs(&h), ["src/auth/login.ts", "https://github.com/org/repo/issues/42"]);
    assert!(out.starts_with("Ref added: https://github.com/org/repo/issues/42\n"), "{out}");
    assert!(out.ends_with("refs 2/3 items"), "{out}");
}

#[test]
fn refs_add_at_capacity_drops_the_oldest_in_one_write() {
    let mut h = small();
    for r in ["a", "b", "c", "d"] {
        h.ok(TOOL, &format!(r#"{{"action": "refs.add", "ref": "{r}"}}"#));
    }
    assert_eq!(refs(&h), ["b", "c", "d"]);
    assert_eq!(h.storage.entries[REFS], br#"["b","c","d"]"#);
    let mut recorder = RecordingStorage::new(&h.storage);
    let out = Scratchpad::new(&mut recorder, &WordTokenizer, &h.config)
        .call_tool(&turn(1), TOOL, r#"{"action": "refs.add", "ref": "e"}"#)
        .unwrap();
    assert_eq!(recorder.writes, ["refs", "meta/last-update-turn"]);
    assert!(out.content.starts_with("Ref added: e (refs were full; dropped oldest: b)\n"), "{}", out.content);
}

#[test]
fn refs_add_of_a_present_ref_moves_it_to_newest_without_duplicating() {
    let mut h = small();
    for r in ["a", "b", "c", "a"] {
        h.ok(TOOL, &format!(r#"{{"action": "refs.add", "ref": "{r}"}}"#));
    }
    assert_eq!(refs(&h), ["b", "c", "a"]);
}

#[test]
fn refs_add_of_an_empty_ref_is_invalid_and_changes_nothing() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.add", "ref": "a"}"#);
    assert!(message(h.err(TOOL, r#"{"action": "refs.add", "ref": ""}"#)).contains("`ref`"));
    assert!(message(h.err(TOOL, r#"{"action": "refs.add"}"#)).contains("`ref`"));
    assert!(message(h.err(TOOL, r#"{"action": "refs.add", "ref": 7}"#)).contains("`ref`"));
}

#[test]
fn refs_remove_removes_an_exact_match() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.set", "items": ["src/auth/login.ts", "b"]}"#);
    let out = h.ok(TOOL, r#"{"action": "refs.remove", "ref": "src/auth/login.ts"}"#);
    assert_eq!(refs(&h), ["b"]);
    assert!(out.starts_with("Ref removed: src/auth/login.ts\n"));
}

#[test]
fn refs_remove_of_an_absent_ref_is_not_found_naming_it_and_changes_nothing() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.set", "items": ["src/auth/login.ts"]}"#);
    match h.err(TOOL, r#"{"action": "refs.remove", "ref": "src/auth/LOGIN.ts"}"#) {
        ToolError::NotFound(m) => assert!(m.contains("\"src/auth/LOGIN.ts\""), "{m}"),
        other => panic!("expected not-found, got {other:?}"),
    }
}

#[test]
fn refs_set_replaces_all_keeping_the_first_n_and_dropping_non_strings_silently() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.set", "items": ["old"]}"#);
    let out = h.ok(TOOL, r#"{"action": "refs.set", "items": [1, "a", null, "", "b", {"x": 1}, "a", "c", "d"]}"#);
    assert_eq!(refs(&h), ["a", "b", "c"]);
    assert!(out.starts_with("Refs set (3 items).\n"), "{out}");
}

#[test]
fn refs_set_with_an_empty_list_clears_refs() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.set", "items": ["a"]}"#);
    h.ok(TOOL, r#"{"action": "refs.set", "items": []}"#);
    assert!(refs(&h).is_empty());
}

#[test]
fn refs_set_without_an_array_is_invalid_and_changes_nothing() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "refs.set", "items": ["a"]}"#);
    assert!(message(h.err(TOOL, r#"{"action": "refs.set", "items": "a"}"#)).contains("`items` must be an array"));
    assert!(message(h.err(TOOL, r#"{"action": "refs.set"}"#)).contains("`items` is required"));
}

// ---- 000: budget enforcement ----

#[test]
fn set_notes_over_the_limit_truncates_and_says_so_with_original_and_kept_sizes() {
    let mut h = small();
    let out = h.ok(TOOL, r#"{"action": "set_notes", "content": "0123456789abcdefghijKLMNO"}"#);
    assert_eq!(h.text(NOTES), "0123456789abcdefghij");
    assert!(out.starts_with("Notes truncated to 20 chars (original: 25). Consider summarizing.\n"), "{out}");
    assert!(out.contains("notes 20/20 chars"), "{out}");
}

#[test]
fn set_notes_truncation_never_splits_a_multibyte_char() {
    let mut h = small();
    let content = "é".repeat(15) + &"😀".repeat(10);
    h.ok(TOOL, &serde_json::json!({"action": "set_notes", "content": content}).to_string());
    assert_eq!(h.text(NOTES), "é".repeat(15) + &"😀".repeat(5));
}

#[test]
fn set_plan_over_the_limit_truncates_and_warns() {
    let mut h = small();
    let out = h.ok(TOOL, r#"{"action": "set_plan", "content": "1. a\n2. b\n3. c"}"#);
    assert_eq!(h.text(PLAN), "1. a\n2. b\n");
    assert!(out.starts_with("Plan truncated to 10 chars (original: 14)."), "{out}");
}

#[test]
fn append_notes_over_the_limit_is_rejected_and_leaves_notes_unchanged() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "set_notes", "content": "0123456789"}"#);
    match h.err(TOOL, r#"{"action": "append_notes", "content": "abcdefghijk"}"#) {
        ToolError::Rejected(m) => {
            assert!(m.contains("(22 chars) would exceed the 20 char budget"), "{m}");
            assert!(m.contains("(current: 10, append: 11)"), "{m}");
            assert!(m.contains("set_notes"), "{m}");
        }
        other => panic!("expected rejected, got {other:?}"),
    }
    assert_eq!(h.text(NOTES), "0123456789");
}

#[test]
fn append_notes_exactly_to_the_limit_is_accepted() {
    let mut h = small();
    h.ok(TOOL, r#"{"action": "set_notes", "content": "0123456789"}"#);
    h.ok(TOOL, r#"{"action": "append_notes", "content": "abcdefghi"}"#);
    assert_eq!(h.text(NOTES).chars().count(), 20);
}

// ---- malformed arguments ----

#[test]
fn malformed_arguments_are_invalid_naming_the_field_and_change_nothing() {
    let mut h = Harness::new("{}");
    h.ok(TOOL, r#"{"action": "set_notes", "content": "keep"}"#);
    let cases = [
        ("not json", "not valid JSON"),
        ("[]", "JSON object"),
        ("{}", "`action` is required"),
        (r#"{"action": 3}"#, "`action` must be a string"),
        (r#"{"action": "delete_everything"}"#, "`action` must be one of"),
        (r#"{"action": "set_notes"}"#, "`content` is required"),
        (r#"{"action": "set_plan", "content": ["x"]}"#, "`content` must be a string"),
        (r#"{"action": "append_notes", "content": ""}"#, "`content` must not be empty"),
        (r#"{"content": "x", "mode": "merge"}"#, "`mode` must be"),
        (r#"{"content": "x", "mode": 1}"#, "`mode` must be a string"),
    ];
    for (args, expected) in cases {
        match h.err(TOOL, args) {
            ToolError::InvalidArguments(m) => assert!(m.contains(expected), "{args}: {m}"),
            other => panic!("{args}: expected invalid-arguments, got {other:?}"),
        }
    }
}

// ---- the scratchpad extension: legacy form and token budget ----

#[test]
fn legacy_replace_is_the_default_mode_and_reports_chars_without_a_token_budget() {
    let mut h = Harness::new("{}");
    let out = h.ok(TOOL, r###"{"content": "## Plan\n1. Fix X\n2. Test Y"}"###);
    assert_eq!(h.text(NOTES), "## Plan\n1. Fix X\n2. Test Y");
    assert!(out.starts_with("Scratchpad updated (26 chars / 4000 budget)\n"), "{out}");
}

#[test]
fn legacy_replace_with_a_token_budget_reports_001s_message() {
    let mut h = Harness::new(r#"{"tokenBudget": true}"#);
    let words = vec!["w"; 45].join(" ");
    let out = h.ok(TOOL, &format!(r#"{{"content": "{words}", "mode": "replace"}}"#));
    assert!(out.starts_with("Scratchpad updated (45 tokens / 2000 budget)\n"), "{out}");
    assert!(out.contains("notes 89/4000 chars, 45/2000 tokens"), "{out}");
}

#[test]
fn legacy_replace_over_the_token_budget_truncates_with_001s_message() {
    let mut h = Harness::new(r#"{"tokenBudget": true, "notesMaxChars": 100000}"#);
    let words = vec!["w"; 3200].join(" ");
    let out = h.ok(TOOL, &format!(r#"{{"content": "{words}"}}"#));
    assert!(out.starts_with("Scratchpad truncated to 2000 tokens (original: 3200). Consider summarizing.\n"), "{out}");
    assert_eq!(h.text(NOTES).split_whitespace().count(), 2000);
}

#[test]
fn legacy_append_over_the_token_budget_is_rejected_with_001s_message() {
    let mut h = Harness::new(r#"{"tokenBudget": true, "notesMaxChars": 100000}"#);
    h.ok(TOOL, &format!(r#"{{"content": "{}"}}"#, vec!["w"; 1800].join(" ")));
    let before = h.text(NOTES);
    let error = h.err(TOOL, &format!(r#"{{"content": "{}", "mode": "append"}}"#, vec!["w"; 500].join(" ")));
    match error {
        ToolError::Rejected(m) => assert_eq!(
            m,
            "Append would exceed 2000 token budget (current: 1800, append: 500). Use mode 'replace' to rewrite, \
             or reduce content."
        ),
        other => panic!("expected rejected, got {other:?}"),
    }
    assert_eq!(h.text(NOTES), before);
}

#[test]
fn legacy_append_over_the_char_limit_is_rejected_with_the_char_equivalent() {
    let mut h = small();
    h.ok(TOOL, r#"{"content": "0123456789"}"#);
    assert_eq!(
        message(h.err(TOOL, r#"{"content": "abcdefghijk", "mode": "append"}"#)),
        "Append would exceed 20 char budget (current: 10, append: 11). Use mode 'replace' to rewrite, or reduce content."
    );
}

#[test]
fn legacy_append_adds_a_line_and_reports_the_new_size() {
    let mut h = Harness::new(r#"{"tokenBudget": true}"#);
    h.ok(TOOL, r#"{"content": "a b"}"#);
    let out = h.ok(TOOL, r#"{"content": "c", "mode": "append"}"#);
    assert_eq!(h.text(NOTES), "a b\nc");
    assert!(out.starts_with("Scratchpad updated (3 tokens / 2000 budget)\n"), "{out}");
}

#[test]
fn the_token_budget_also_limits_actions_on_notes() {
    let mut h = Harness::new(r#"{"tokenBudget": true, "maxTokens": 3}"#);
    let out = h.ok(TOOL, r#"{"action": "set_notes", "content": "a b c d e"}"#);
    assert!(out.starts_with("Notes truncated to 3 tokens (original: 5). Consider summarizing.\n"), "{out}");
    assert!(message(h.err(TOOL, r#"{"action": "append_notes", "content": "f"}"#)).contains("3 token budget"));
}
