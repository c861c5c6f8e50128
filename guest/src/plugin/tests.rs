//! The hooks as the host calls them: manifest, tools offered, routing, `enabled`, session
//! origins, the per-turn injection and the data flow of the scratchpad extension.

use scratchpad_plugin_sdk::{Access, Origin, Placement, SessionInfo, SpawnOrigin, ToolError};

use crate::testing::{Harness, RecordingStorage, WordTokenizer, turn};

use super::*;

const ALL_TOOLS: [&str; 4] = ["session.scratchpad", "read_notepad", "write_notepad", "update_notepad"];
const RECALL_TOOLS: [&str; 2] = ["recall_search", "recall_read"];

fn names(tools: &[ToolSpec]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

fn session(origin: Origin) -> SessionInfo {
    SessionInfo { session_id: "child".into(), origin }
}

#[test]
fn the_manifest_declares_all_four_tools_and_the_recall_tools_whenever_enabled() {
    for json in ["{}", r#"{"surfaces": ["notepad"]}"#, r#"{"surfaces": []}"#] {
        let mut h = Harness::new(json);
        assert_eq!(names(&h.pad().load().tools), [&ALL_TOOLS[..], &RECALL_TOOLS].concat(), "{json}");
    }
    let mut h = Harness::new(r#"{"recall": {"enabled": false}}"#);
    assert_eq!(names(&h.pad().load().tools), ALL_TOOLS);
}

#[test]
fn list_tools_offers_only_the_configured_surfaces_and_recall_while_it_may_read() {
    let mut h = Harness::new("{}");
    assert_eq!(names(&h.pad().list_tools(&turn(0))), ["session.scratchpad", "recall_search", "recall_read"]);
    let mut h = Harness::new(r#"{"surfaces": ["notepad"]}"#);
    h.index.access = Access::None;
    assert_eq!(names(&h.pad().list_tools(&turn(0))), ["read_notepad", "write_notepad", "update_notepad"]);
}

#[test]
fn an_unknown_tool_names_the_tools_there_are() {
    let mut h = Harness::new(r#"{"recall": {"enabled": false}}"#);
    let ToolError::UnknownTool(message) = h.err("recall_search", r#"{"query": "x"}"#) else { panic!() };
    assert_eq!(
        message,
        "no tool named `recall_search`; this plugin offers session.scratchpad, read_notepad, write_notepad and \
         update_notepad"
    );
}

#[test]
fn notepad_tools_run_even_when_not_offered_for_the_sandbox_api() {
    let mut h = Harness::new("{}");
    h.ok("update_notepad", r#"{"operation": "append", "content": "progress: 40%"}"#);
    assert_eq!(h.ok("read_notepad", "{}"), r#"{"content":"progress: 40%","usage":"notepad 13/4000 chars"}"#);
}

#[test]
fn an_unknown_tool_is_unknown_tool_and_changes_nothing() {
    let mut h = Harness::new("{}");
    assert!(matches!(h.err("scratchpad_read", "{}"), ToolError::UnknownTool(m) if m.contains("`scratchpad_read`")));
}

#[test]
fn disabled_means_no_tools_no_injection_no_guidance() {
    let mut h = Harness::new(r#"{"enabled": false, "nudgeAfterCompaction": 1}"#);
    h.storage.set("notes", b"left over").unwrap();
    let mut pad = h.pad();
    assert!(pad.load().tools.is_empty());
    assert!(pad.list_tools(&turn(0)).is_empty());
    assert!(pad.before_query(&turn(1), "hi").is_empty());
    let setup = pad.before_session_create(&session(Origin::Fork("parent".into())));
    assert!(setup.injections.is_empty() && !setup.inherit_parent_state);
    assert_eq!(pad.before_compaction(&turn(1)), None);
    pad.after_compaction(&turn(1));
    assert!(matches!(pad.call_tool(&turn(1), "session.scratchpad", "{}"), Err(ToolError::UnknownTool(_))));
    assert_eq!(h.storage.entries.len(), 1);
}

#[test]
fn a_new_session_gets_guidance_and_inherits_nothing() {
    let mut h = Harness::new("{}");
    let setup = h.pad().before_session_create(&session(Origin::New));
    assert!(!setup.inherit_parent_state);
    assert_eq!(setup.injections.len(), 1);
    assert_eq!(setup.injections[0].placement, Placement::AppendSystem);
}

#[test]
fn a_spawned_session_inherits_only_when_a_copy_was_requested() {
    let mut h = Harness::new("{}");
    for copy_requested in [false, true] {
        let origin = Origin::Spawn(SpawnOrigin { parent: "p".into(), copy_requested });
        assert_eq!(h.pad().before_session_create(&session(origin)).inherit_parent_state, copy_requested);
    }
}

#[test]
fn a_forked_session_always_inherits() {
    let mut h = Harness::new("{}");
    assert!(h.pad().before_session_create(&session(Origin::Fork("p".into()))).inherit_parent_state);
}

#[test]
fn before_query_injects_nothing_while_empty_and_never_echoes_the_message() {
    let mut h = Harness::new("{}");
    assert!(h.pad().before_query(&turn(0), "[Session Scratchpad - x]").is_empty());
    assert!(h.storage.entries.is_empty());
}

#[test]
fn a_write_on_turn_n_is_injected_on_turn_n_plus_1_at_the_configured_placement() {
    let mut h = Harness::new("{}");
    h.pad().call_tool(&turn(3), "session.scratchpad", r###"{"content": "## Plan\n1. Fix X\n2. Test Y"}"###).unwrap();
    let injections = h.pad().before_query(&turn(4), "continue with step 2");
    assert_eq!(injections.len(), 1);
    assert_eq!(injections[0].placement, Placement::PrependContext);
    assert_eq!(
        injections[0].text,
        "[Session Scratchpad - your persistent working memory]\n## Notes\n## Plan\n1. Fix X\n2. Test Y\n[End Scratchpad]"
    );
}

#[test]
fn state_survives_a_restart_and_compaction_because_it_lives_only_in_storage() {
    let mut h = Harness::new(r#"{"placement": "append-system", "surfaces": ["notepad"]}"#);
    h.ok("write_notepad", r#"{"content": "Q3 gap: EMEA rows 234-267"}"#);
    // A "restart": a new scratchpad over the same storage, as every hook call in the component.
    let mut pad = h.pad();
    assert!(pad.before_compaction(&turn(9)).unwrap().starts_with("[System] Context is approaching"));
    pad.after_compaction(&turn(9));
    let injections = pad.before_query(&turn(10), "what's next?");
    assert_eq!(injections.len(), 2, "recall's reminder, then the notepad");
    assert_eq!(injections[1].placement, Placement::AppendSystem);
    assert_eq!(injections[1].text, "## Session Notepad\nQ3 gap: EMEA rows 234-267");
}

#[test]
fn a_storage_failure_is_a_failed_error_and_writes_nothing() {
    let h = Harness::new("{}");
    let mut storage = RecordingStorage::new(&h.storage);
    storage.full = true;
    let result = Scratchpad::new(&mut storage, &WordTokenizer, &h.config).call_tool(
        &turn(0),
        "session.scratchpad",
        r#"{"action": "set_notes", "content": "x"}"#,
    );
    assert!(matches!(result, Err(ToolError::Failed(m)) if m.contains("quota")));
    assert!(storage.writes.is_empty() && storage.inner.entries.is_empty());
}

#[test]
fn the_view_shows_plan_notes_and_refs_with_their_usage_under_their_keys() {
    use scratchpad_plugin_sdk::Content;
    let mut h = Harness::new("{}");
    h.ok("session.scratchpad", r#"{"action": "set_plan", "content": "1. read"}"#);
    h.ok("session.scratchpad", r#"{"action": "append_notes", "content": "héllo"}"#);
    h.ok("session.scratchpad", r#"{"action": "refs.add", "ref": "src/a.rs"}"#);
    let view = h.pad().describe();
    let shown: Vec<_> = view.iter().map(|s| (s.title.as_str(), s.key.as_str(), s.usage.as_deref())).collect();
    assert_eq!(
        shown,
        [
            ("Plan", "plan", Some("7/2000 chars")),
            ("Notes", "notes", Some("5/4000 chars")),
            ("References", "refs", Some("1/50 items"))
        ]
    );
    assert!(matches!(&view[0].content, Content::Text(t) if t == "1. read"));
    assert!(matches!(&view[1].content, Content::Text(t) if t == "héllo"));
    assert!(matches!(&view[2].content, Content::Items(i) if i == &["src/a.rs"]));
}
