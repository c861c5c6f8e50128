//! `recall_search` and `recall_read`: hits as lines, whole documents with their provenance,
//! every bad input an error that changes nothing, and no project said plainly.

use scratchpad_plugin_sdk::{Access, MemoryIndex, MemoryStorage, ToolError, ToolSpec};
use serde_json::{Value, json};

use crate::config::Config;
use crate::plugin::Scratchpad;
use crate::recall::index::{NOTE, PLAN, REF, document_id};
use crate::testing::{DAY, Harness, LatestCheckpoint, MARCH_1_2024, TestClock, WordTokenizer, turn};

use super::*;

/// Session `s0` saved on 2024-03-01: a plan, two notes and a ref; session `s1` (a day later)
/// saved a note of its own.
fn project() -> Harness {
    let mut h = Harness::new("{}");
    h.index.session = "s0".into();
    let calls = [
        json!({"action": "set_plan", "content": "1. Fix the tz offset\n2. Test DST"}),
        json!({"action": "append_notes", "content": "tz offset applied twice in utils/time.rs"}),
        json!({"action": "append_notes", "content": "CI flaky on macOS"}),
        json!({"action": "refs.add", "ref": "https://tracker/tz-offset"}),
    ];
    for call in calls {
        h.ok("session.scratchpad", &call.to_string());
    }
    h.next_session("s1");
    h.ok("session.scratchpad", r#"{"action": "append_notes", "content": "DST offset handled"}"#);
    h
}

fn search(h: &mut Harness, arguments: Value) -> String {
    h.ok(RECALL_SEARCH, &arguments.to_string())
}

fn invalid_message(error: ToolError) -> String {
    match error {
        ToolError::InvalidArguments(message) => message,
        other => panic!("expected invalid-arguments, got {other:?}"),
    }
}

#[test]
fn the_specs_are_object_schemas_with_their_required_fields() {
    let specs: Vec<ToolSpec> = specs();
    let schema = |i: usize| serde_json::from_str::<Value>(&specs[i].parameters).unwrap();
    assert_eq!((specs[0].name.as_str(), specs[1].name.as_str()), (RECALL_SEARCH, RECALL_READ));
    assert_eq!(schema(0)["required"], json!(["query"]));
    assert_eq!(schema(0)["properties"]["kind"]["enum"], json!(["plan", "note", "ref", "checkpoint"]));
    assert_eq!(
        schema(0)["properties"]["limit"],
        json!({
            "type": "integer", "minimum": 1, "maximum": 20, "default": 8, "description": "Most hits to return."
        })
    );
    assert_eq!(schema(1)["required"], json!(["id"]));
}

#[test]
fn a_search_lists_one_hit_per_line_across_the_projects_sessions() {
    let mut h = project();
    let found = search(&mut h, json!({"query": "offset"}));
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(lines.len(), 4, "{found}");
    assert!(
        lines.contains(
            &format!("- [note · s1 · 2024-03-02] DST offset handled ({})", document_id(NOTE, "DST offset handled"))
                .as_str()
        ),
        "this session's documents are searched too: {found}"
    );
    assert!(
        lines.contains(
            &format!(
                "- [ref · s0 · 2024-03-01] https://tracker/tz-offset ({})",
                document_id(REF, "https://tracker/tz-offset")
            )
            .as_str()
        )
    );
    assert_eq!(
        lines[0],
        format!("- [note · s1 · 2024-03-02] DST offset handled ({})", document_id(NOTE, "DST offset handled")),
        "ties newest first"
    );
}

#[test]
fn a_search_narrows_by_kind_session_date_and_limit() {
    let mut h = project();
    let plans = search(&mut h, json!({"query": "offset", "kind": "plan"}));
    assert_eq!(
        plans,
        format!(
            "- [plan · s0 · 2024-03-01] 1. Fix the tz offset 2. Test DST ({})",
            document_id(PLAN, "1. Fix the tz offset 2. Test DST")
        )
    );
    assert_eq!(search(&mut h, json!({"query": "offset", "session": "s0"})).lines().count(), 3);
    let since = search(&mut h, json!({"query": "offset", "since": "2024-03-02"}));
    assert!(since.starts_with("- [note · s1 · 2024-03-02] DST offset handled") && since.lines().count() == 1);
    assert_eq!(search(&mut h, json!({"query": "offset", "limit": 2})).lines().count(), 2);
    assert_eq!(
        search(&mut h, json!({"query": "offset", "kind": null, "session": null, "since": null, "limit": null}))
            .lines()
            .count(),
        4
    );
}

#[test]
fn a_search_without_hits_says_no_match() {
    let mut h = project();
    assert_eq!(search(&mut h, json!({"query": "kubernetes"})), "No match.");
    assert_eq!(search(&mut h, json!({"query": "offset", "kind": "checkpoint"})), "No match.");
}

#[test]
fn reading_gives_the_whole_document_with_its_provenance() {
    let mut h = project();
    let id = document_id(PLAN, "1. Fix the tz offset 2. Test DST");
    assert_eq!(
        h.ok(RECALL_READ, &json!({"id": id}).to_string()),
        format!("[plan · s0 · 2024-03-01] Plan ({id})\n1. Fix the tz offset\n2. Test DST")
    );
}

#[test]
fn reading_an_unknown_id_is_not_found() {
    let mut h = project();
    let error = h.err(RECALL_READ, r#"{"id": "note:0000000000000000"}"#);
    assert!(
        matches!(error, ToolError::NotFound(m) if m.contains("`note:0000000000000000`") && m.contains("recall_search"))
    );
}

#[test]
fn every_bad_input_is_invalid_arguments_naming_the_field_and_changes_nothing() {
    let mut h = project();
    let cases = [
        (RECALL_SEARCH, "{oops", "not valid JSON"),
        (RECALL_SEARCH, "{}", "`query` is required"),
        (RECALL_SEARCH, r#"{"query": "  "}"#, "`query` must be a non-empty string"),
        (RECALL_SEARCH, r#"{"query": 3}"#, "`query` must be a string, got a number"),
        (RECALL_SEARCH, r#"{"query": "x", "kind": "todo"}"#, "`kind` must be one of plan, note, ref, checkpoint"),
        (RECALL_SEARCH, r#"{"query": "x", "kind": ["note"]}"#, "`kind` must be a string"),
        (RECALL_SEARCH, r#"{"query": "x", "session": ""}"#, "`session` must be a non-empty string"),
        (RECALL_SEARCH, r#"{"query": "x", "since": "2024-02-30"}"#, "`since` must be a date YYYY-MM-DD"),
        (RECALL_SEARCH, r#"{"query": "x", "since": "last week"}"#, "`since` must be a date YYYY-MM-DD"),
        (RECALL_SEARCH, r#"{"query": "x", "since": 1709251200000}"#, "`since` must be a string"),
        (RECALL_SEARCH, r#"{"query": "x", "limit": 0}"#, "`limit` must be at least 1"),
        (RECALL_SEARCH, r#"{"query": "x", "limit": 21}"#, "`limit` must be at most 20"),
        (RECALL_SEARCH, r#"{"query": "x", "limit": "5"}"#, "`limit` must be an integer"),
        (RECALL_SEARCH, r#"{"query": "x", "limit": 2.5}"#, "`limit` must be an integer"),
        (RECALL_READ, "{}", "`id` is required"),
        (RECALL_READ, r#"{"id": 7}"#, "`id` must be a string"),
        (RECALL_READ, r#"{"id": ""}"#, "`id` must be a non-empty string"),
    ];
    for (tool, arguments, expected) in cases {
        let message = invalid_message(h.err(tool, arguments));
        assert!(message.contains(expected), "{tool} {arguments}: {message}");
    }
}

#[test]
fn the_hosts_invalid_answer_is_passed_through() {
    let mut h = project();
    assert_eq!(invalid_message(h.err(RECALL_SEARCH, r#"{"query": "?!"}"#)), "the query has no words");
}

#[test]
fn read_only_access_searches_and_reads() {
    let mut h = project();
    h.index.access = Access::Read;
    assert_eq!(search(&mut h, json!({"query": "macOS"})).lines().count(), 1);
    let id = document_id(NOTE, "CI flaky on macOS");
    assert!(h.ok(RECALL_READ, &json!({"id": id}).to_string()).ends_with("\nCI flaky on macOS"));
}

#[test]
fn a_session_without_a_project_is_told_so() {
    let mut h = project();
    h.index.access = Access::None;
    for (tool, arguments) in [(RECALL_SEARCH, r#"{"query": "offset"}"#), (RECALL_READ, r#"{"id": "note:1"}"#)] {
        let error = h.err(tool, arguments);
        assert!(
            matches!(&error, ToolError::Failed(m) if m.starts_with("this session belongs to no project")),
            "{error:?}"
        );
    }
}

#[test]
fn without_an_index_the_recall_tools_fail_and_are_not_offered() {
    let (config, mut storage) = (Config::default(), MemoryStorage::default());
    let mut pad = Scratchpad::new(&mut storage, &WordTokenizer, &config);
    assert!(pad.list_tools(&turn(0)).iter().all(|tool| !tool.name.starts_with("recall_")));
    let error = pad.call_tool(&turn(0), RECALL_SEARCH, r#"{"query": "offset"}"#).unwrap_err();
    assert!(matches!(error, ToolError::Failed(m) if m.contains("not available")));
}

#[test]
fn disabled_recall_has_no_tools() {
    let (mut index, checkpoints, clock) =
        (MemoryIndex::new("s1"), LatestCheckpoint::default(), TestClock((MARCH_1_2024 + DAY).into()));
    let (config, mut storage) =
        (Config::from_json(r#"{"recall": {"enabled": false}}"#).unwrap(), MemoryStorage::default());
    let mut pad = Scratchpad::new(&mut storage, &WordTokenizer, &config).with_recall(&mut index, &checkpoints, &clock);
    assert_eq!(pad.recall_access(), Access::None);
    assert!(pad.load().tools.iter().chain(&pad.list_tools(&turn(0))).all(|tool| !tool.name.starts_with("recall_")));
    for tool in [RECALL_SEARCH, RECALL_READ] {
        assert!(matches!(
            pad.call_tool(&turn(0), tool, r#"{"query": "x", "id": "x"}"#),
            Err(ToolError::UnknownTool(_))
        ));
    }
}
