//! The session scratchpad: three spaces (notes 4,000 chars, plan 2,000 chars, refs 50
//! items), every row of the action table and the budget enforcement — through the real host,
//! the real component and a real database (each test on SQLite and on PostgreSQL). The opt-in nudges are in `scratchpad_nudges.rs`.

use scratchpad_host::{Host, Origin, Placement, ToolErrorKind};
use scratchpad_tests::{Fixture, dump, refusal, scratchpad, stored, turn};
use serde_json::{Value, json};

scratchpad_tests::on_both_backends!(
    only_the_non_empty_spaces_are_prepended_each_under_its_heading,
    every_response_reports_what_each_space_uses_of_its_budget,
    set_notes_replaces_notes_entirely,
    append_notes_adds_a_line_without_a_leading_newline_when_notes_are_empty,
    set_plan_replaces_the_plan_as_steps_complete,
    refs_add_adds_one_ref_and_moves_a_present_one_to_newest_instead_of_duplicating,
    refs_remove_removes_one_ref_by_exact_match,
    refs_remove_of_an_absent_ref_is_an_error_naming_it_and_changes_nothing,
    refs_set_replaces_all_refs,
    set_notes_truncates_to_4000_chars_and_warns_in_the_response,
    append_notes_that_would_exceed_4000_chars_is_rejected_and_notes_are_unchanged,
    set_plan_truncates_to_2000_chars_and_warns_in_the_response,
    refs_add_at_capacity_drops_the_oldest_atomically_never_leaving_49_or_51_items,
    refs_set_caps_to_the_first_50_and_silently_drops_non_strings,
    the_limits_are_configurable,
    malformed_arguments_are_invalid_naming_the_field_and_change_nothing,
);

const TOOL: &str = "session.scratchpad";
const START: &str = "[Session Scratchpad - your persistent working memory]";
const END: &str = "[End Scratchpad]";

/// A host with the scratchpad configured by `config` and one session, `s`.
async fn session(fx: Fixture, config: Value) -> (Fixture, Host) {
    let host = fx.open(vec![scratchpad(config)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    (fx, host)
}

/// Calls `session.scratchpad` in turn `t1`; the response text.
async fn call(host: &Host, args: Value) -> scratchpad_host::Result<String> {
    host.call_tool(&turn("s", "t1"), TOOL, &args.to_string()).await.map(|out| out.content)
}

/// What the scratchpad prepends to the message of turn `turn_id`.
async fn prepended(host: &Host, turn_id: &str) -> String {
    host.before_query(&turn("s", turn_id), "continue").await.unwrap().text(Placement::PrependContext)
}

fn refs(fx: &Fixture) -> Vec<String> {
    stored(&fx.database, "s", "refs").map(|json| serde_json::from_str(&json).unwrap()).unwrap_or_default()
}

fn first_line(response: &str) -> &str {
    response.lines().next().unwrap()
}

// ## The three spaces

async fn only_the_non_empty_spaces_are_prepended_each_under_its_heading(fx: Fixture) {
    let (_fx, host) = session(fx, json!({})).await;
    assert_eq!(prepended(&host, "t0").await, "", "nothing at all while every space is empty");

    call(&host, json!({"action": "set_plan", "content": "1. Fix auth bug\n2. Add test\n3. Update docs"}))
        .await
        .unwrap();
    let plan_only = format!("{START}\n## Plan\n1. Fix auth bug\n2. Add test\n3. Update docs\n{END}");
    assert_eq!(prepended(&host, "t2").await, plan_only);

    call(&host, json!({"action": "append_notes", "content": "Root cause: timezone mismatch in token expiry"}))
        .await
        .unwrap();
    call(&host, json!({"action": "refs.add", "ref": "src/auth/login.ts"})).await.unwrap();
    let all = format!(
        "{START}\n## Notes\nRoot cause: timezone mismatch in token expiry\n## Plan\n1. Fix auth bug\n2. Add test\n\
         3. Update docs\n## Refs\n- src/auth/login.ts\n{END}"
    );
    assert_eq!(prepended(&host, "t3").await, all);
}

async fn every_response_reports_what_each_space_uses_of_its_budget(fx: Fixture) {
    let (_fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "refs.add", "ref": "src/auth/login.ts"})).await.unwrap();
    let response = call(&host, json!({"action": "set_notes", "content": "héllo"})).await.unwrap();
    assert_eq!(response, "Notes set.\nUsage: notes 5/4000 chars; plan 0/2000 chars; refs 1/50 items");
}

// ## Actions

async fn set_notes_replaces_notes_entirely(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "set_notes", "content": "first draft"})).await.unwrap();
    call(&host, json!({"action": "set_notes", "content": "root cause: tz"})).await.unwrap();
    assert_eq!(stored(&fx.database, "s", "notes").as_deref(), Some("root cause: tz"));
}

async fn append_notes_adds_a_line_without_a_leading_newline_when_notes_are_empty(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    let response = call(&host, json!({"action": "append_notes", "content": "finding 1"})).await.unwrap();
    assert_eq!(first_line(&response), "Appended to notes.");
    call(&host, json!({"action": "append_notes", "content": "finding 2"})).await.unwrap();
    assert_eq!(stored(&fx.database, "s", "notes").as_deref(), Some("finding 1\nfinding 2"));
}

async fn set_plan_replaces_the_plan_as_steps_complete(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "set_plan", "content": "1. Fix auth bug\n2. Add test\n3. Update docs"}))
        .await
        .unwrap();
    let updated = "1. ~~Fix auth bug~~ DONE\n2. Add test <-- current\n3. Update docs";
    let response = call(&host, json!({"action": "set_plan", "content": updated})).await.unwrap();
    assert_eq!(first_line(&response), "Plan set.");
    assert_eq!(stored(&fx.database, "s", "plan").as_deref(), Some(updated));
}

async fn refs_add_adds_one_ref_and_moves_a_present_one_to_newest_instead_of_duplicating(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    for r in ["src/auth/login.ts", "https://github.com/org/repo/issues/42"] {
        let response = call(&host, json!({"action": "refs.add", "ref": r})).await.unwrap();
        assert_eq!(first_line(&response), format!("Ref added: {r}"));
    }
    let response = call(&host, json!({"action": "refs.add", "ref": "src/auth/login.ts"})).await.unwrap();
    assert_eq!(first_line(&response), "Ref already present, moved to newest: src/auth/login.ts");
    assert_eq!(refs(&fx), ["https://github.com/org/repo/issues/42", "src/auth/login.ts"]);
}

async fn refs_remove_removes_one_ref_by_exact_match(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "refs.set", "items": ["src/auth/login.ts", "src/auth/login.test.ts"]})).await.unwrap();
    let response = call(&host, json!({"action": "refs.remove", "ref": "src/auth/login.ts"})).await.unwrap();
    assert_eq!(first_line(&response), "Ref removed: src/auth/login.ts");
    assert_eq!(refs(&fx), ["src/auth/login.test.ts"]);
}

async fn refs_remove_of_an_absent_ref_is_an_error_naming_it_and_changes_nothing(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "refs.add", "ref": "src/auth/login.ts"})).await.unwrap();
    let before = dump(&fx.database, "s");
    for absent in ["src/auth/login", "SRC/auth/login.ts", "src/auth/login.ts "] {
        let (kind, message) = refusal(call(&host, json!({"action": "refs.remove", "ref": absent})).await);
        assert_eq!(kind, ToolErrorKind::NotFound);
        assert!(message.contains(&format!("\"{absent}\"")), "{message}");
    }
    assert_eq!(dump(&fx.database, "s"), before);
}

async fn refs_set_replaces_all_refs(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "refs.add", "ref": "old.rs"})).await.unwrap();
    let items = ["src/auth/login.ts", "https://github.com/org/repo/issues/42"];
    let response = call(&host, json!({"action": "refs.set", "items": items})).await.unwrap();
    assert_eq!(first_line(&response), "Refs set (2 items).");
    assert_eq!(refs(&fx), items);
}

// ## Budget enforcement

async fn set_notes_truncates_to_4000_chars_and_warns_in_the_response(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    // Two-byte chars: the limit counts chars, and the cut never splits one.
    let response = call(&host, json!({"action": "set_notes", "content": "é".repeat(4100)})).await.unwrap();
    assert_eq!(first_line(&response), "Notes truncated to 4000 chars (original: 4100). Consider summarizing.");
    assert!(response.ends_with("Usage: notes 4000/4000 chars; plan 0/2000 chars; refs 0/50 items"), "{response}");
    assert_eq!(stored(&fx.database, "s", "notes"), Some("é".repeat(4000)));
}

async fn append_notes_that_would_exceed_4000_chars_is_rejected_and_notes_are_unchanged(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "set_notes", "content": "n".repeat(3990)})).await.unwrap();
    let before = dump(&fx.database, "s");

    let (kind, message) = refusal(call(&host, json!({"action": "append_notes", "content": "x".repeat(10)})).await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert!(message.contains("notes unchanged"), "{message}");
    assert!(message.contains("4001 chars") && message.contains("4000 char budget"), "{message}");
    assert!(message.contains("(current: 3990, append: 10)"), "{message}");
    assert!(message.contains("Use set_notes"), "suggests overwriting with a summary: {message}");
    assert_eq!(dump(&fx.database, "s"), before, "notes unchanged, byte for byte");

    // Exactly at the limit (3990 + newline + 9) is accepted.
    call(&host, json!({"action": "append_notes", "content": "x".repeat(9)})).await.unwrap();
    assert_eq!(stored(&fx.database, "s", "notes").unwrap().chars().count(), 4000);
}

async fn set_plan_truncates_to_2000_chars_and_warns_in_the_response(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    let response = call(&host, json!({"action": "set_plan", "content": "😀".repeat(2001)})).await.unwrap();
    assert_eq!(first_line(&response), "Plan truncated to 2000 chars (original: 2001). Consider summarizing.");
    assert_eq!(stored(&fx.database, "s", "plan"), Some("😀".repeat(2000)));
}

async fn refs_add_at_capacity_drops_the_oldest_atomically_never_leaving_49_or_51_items(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    let full: Vec<String> = (0..50).map(|i| format!("src/file_{i}.rs")).collect();
    call(&host, json!({"action": "refs.set", "items": full})).await.unwrap();

    for i in 50..60 {
        let new = format!("src/file_{i}.rs");
        let response = call(&host, json!({"action": "refs.add", "ref": new})).await.unwrap();
        let dropped = format!("src/file_{}.rs", i - 50);
        assert_eq!(first_line(&response), format!("Ref added: {new} (refs were full; dropped oldest: {dropped})"));
        let now = refs(&fx);
        let expected: Vec<String> = (i - 49..=i).map(|k| format!("src/file_{k}.rs")).collect();
        assert_eq!(now, expected, "exactly 50 whole refs, oldest first, after adding {new}");
    }
    // A present ref at capacity moves to newest: nothing is dropped.
    call(&host, json!({"action": "refs.add", "ref": "src/file_10.rs"})).await.unwrap();
    let now = refs(&fx);
    assert_eq!(
        (now.len(), now.first().unwrap().as_str(), now.last().unwrap().as_str()),
        (50, "src/file_11.rs", "src/file_10.rs")
    );
}

async fn refs_set_caps_to_the_first_50_and_silently_drops_non_strings(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    let mut items = vec![json!(1), json!(null), json!({"path": "a.rs"}), json!(["b.rs"]), json!(true), json!("")];
    items.extend((0..60).map(|i| json!(format!("ref-{i}"))));
    let response = call(&host, json!({"action": "refs.set", "items": items})).await.unwrap();
    assert_eq!(first_line(&response), "Refs set (50 items).");
    assert_eq!(refs(&fx), (0..50).map(|i| format!("ref-{i}")).collect::<Vec<_>>());
}

async fn the_limits_are_configurable(fx: Fixture) {
    let (fx, host) = session(fx, json!({"notesMaxChars": 10, "planMaxChars": 5, "refsMaxItems": 2})).await;
    let response = call(&host, json!({"action": "set_notes", "content": "0123456789abc"})).await.unwrap();
    assert_eq!(first_line(&response), "Notes truncated to 10 chars (original: 13). Consider summarizing.");
    call(&host, json!({"action": "set_plan", "content": "1. a 2. b"})).await.unwrap();
    for r in ["a", "b", "c"] {
        call(&host, json!({"action": "refs.add", "ref": r})).await.unwrap();
    }
    let response = call(&host, json!({"action": "append_notes", "content": "x"})).await;
    assert_eq!(refusal(response).0, ToolErrorKind::Rejected);
    assert_eq!(stored(&fx.database, "s", "plan").as_deref(), Some("1. a "));
    assert_eq!(refs(&fx), ["b", "c"]);
    let usage = call(&host, json!({"action": "refs.add", "ref": "c"})).await.unwrap();
    assert!(usage.ends_with("Usage: notes 10/10 chars; plan 5/5 chars; refs 2/2 items"), "{usage}");
}

// ## Malformed arguments

async fn malformed_arguments_are_invalid_naming_the_field_and_change_nothing(fx: Fixture) {
    let (fx, host) = session(fx, json!({})).await;
    call(&host, json!({"action": "set_notes", "content": "keep me"})).await.unwrap();
    call(&host, json!({"action": "refs.add", "ref": "keep.rs"})).await.unwrap();
    let before = dump(&fx.database, "s");
    let cases = [
        ("not json", "not valid JSON"),
        ("[\"set_notes\"]", "JSON object"),
        ("{}", "`action` is required"),
        (r#"{"action": "delete_notes", "content": "x"}"#, "`action` must be one of"),
        (r#"{"action": 7}"#, "`action` must be a string"),
        (r#"{"action": "set_notes"}"#, "`content` is required"),
        (r#"{"action": "set_plan", "content": ["1. a"]}"#, "`content` must be a string"),
        (r#"{"action": "append_notes", "content": ""}"#, "`content` must not be empty"),
        (r#"{"action": "refs.add"}"#, "`ref` is required"),
        (r#"{"action": "refs.add", "ref": "  "}"#, "`ref` must be a non-empty string"),
        (r#"{"action": "refs.remove", "ref": 3}"#, "`ref` must be a string"),
        (r#"{"action": "refs.set", "items": "a.rs"}"#, "`items` must be an array"),
        (r#"{"action": "refs.set"}"#, "`items` is required"),
    ];
    for (args, expected) in cases {
        let (kind, message) = refusal(host.call_tool(&turn("s", "t1"), TOOL, args).await);
        assert_eq!(kind, ToolErrorKind::InvalidArguments, "{args}");
        assert!(message.contains(expected), "{args}: {message}");
    }
    assert_eq!(dump(&fx.database, "s"), before);
}
