//! The hooks together: the large-observation store's story end to end, the tool's visibility and `enabled`.

use serde_json::{Value, json};

use super::*;
use crate::store::Source;
use crate::testing::{FakeObservation, Harness, big_log, call, message, turn};

fn names(tools: &[ToolSpec]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn the_big_log_is_offloaded_read_and_referenced_end_to_end() {
    let log = big_log();
    let mut h = Harness::new("{}");
    // Step 1: fs_read returns the 89 KB log; the model sees the synthetic observation.
    let observation = FakeObservation::text(&log).with_metadata(r#"{"path": "/tmp/big_log.txt"}"#);
    let synthetic = h.offload("t1", 1, "fs_read", &observation).unwrap();
    let id = synthetic["scratchpad_id"].as_str().unwrap().to_owned();
    assert!(synthetic["summary"].as_str().unwrap().contains("[... 88042 characters omitted ...]"));
    assert_eq!(names(&h.plugin().list_tools(&turn("t1"))), ["scratchpad_read"]);
    // Steps 2-4: the model explores.
    let head = h.ok("t1", &json!({"scratchpad_id": id, "n": 40}).to_string());
    assert_eq!(head["content"], "INFO 2026-04-26 10:00:01 event number 0\n");
    let errors = h.ok("t1", &json!({"scratchpad_id": id, "mode": "grep", "pattern": "CRITICAL"}).to_string());
    assert_eq!(errors["matches"][0]["line"], 2096);
    let tail = h.ok("t1", &json!({"scratchpad_id": id, "mode": "tail", "n": 46}).to_string());
    assert_eq!(tail["content"], "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n");
    // Step 5: fs_write gets the full content.
    let args = h.resolve("t1", 5, "fs_write", r#"{"path": "/tmp/out.txt", "content": "{{step1.content}}"}"#);
    let args: Value = serde_json::from_str(&args.unwrap().unwrap()).unwrap();
    assert_eq!(args["content"].as_str().unwrap().len(), 89_042);
}

#[test]
fn scratchpad_read_is_offered_only_while_the_turn_has_live_entries() {
    let mut h = Harness::new("{}");
    assert!(h.plugin().list_tools(&turn("t1")).is_empty(), "nothing offloaded yet");
    h.offload("t1", 1, "fs_read", &FakeObservation::text("small"));
    assert!(h.plugin().list_tools(&turn("t1")).is_empty(), "a small observation is not offloaded");
    let id = h.offload_id("t1", 2, &FakeObservation::text(&"x".repeat(5000)));
    assert_eq!(names(&h.plugin().list_tools(&turn("t1"))), ["scratchpad_read"]);
    assert!(h.plugin().list_tools(&turn("t2")).is_empty(), "another turn has no entries");
    h.blobs.expire(&id);
    assert!(h.plugin().list_tools(&turn("t1")).is_empty(), "the only entry expired");
}

#[test]
fn scratchpad_reads_own_large_results_are_never_offloaded_again() {
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::text(&big_log()));
    let full = h.plugin().call_tool(&turn("t1"), READ_TOOL, &json!({"scratchpad_id": id, "mode": "full"}).to_string());
    let full = FakeObservation::text(&full.unwrap().content);
    assert!(full.size() > 89_042);
    assert_eq!(h.offload("t1", 2, READ_TOOL, &full), None);
    assert_eq!(h.blobs.entries.len(), 1);
}

#[test]
fn the_manifest_declares_scratchpad_read_whenever_enabled() {
    let h = Harness::new("{}");
    assert_eq!(names(&manifest(&h.config).tools), ["scratchpad_read"]);
    let off = Harness::new(r#"{"enabled": false}"#);
    assert!(manifest(&off.config).tools.is_empty());
}

#[test]
fn a_disabled_component_passes_everything_through() {
    let mut h = Harness::new(r#"{"enabled": false}"#);
    assert_eq!(h.offload("t1", 1, "fs_read", &FakeObservation::text(&"x".repeat(50_000))), None);
    assert!(h.blobs.entries.is_empty());
    assert_eq!(h.resolve("t1", 2, "fs_write", r#"{"content": "{{step1.content}}"}"#).unwrap(), None);
    let error = h.plugin().call_tool(&turn("t1"), READ_TOOL, r#"{"scratchpad_id": "x"}"#).unwrap_err();
    assert!(matches!(error, ToolError::UnknownTool(_)), "{error:?}");
    assert!(h.plugin().list_tools(&turn("t1")).is_empty());
}

#[test]
fn other_tool_names_are_unknown() {
    let mut h = Harness::new("{}");
    let error = h.plugin().call_tool(&turn("t1"), "scratchpad_write", "{}").unwrap_err();
    assert!(matches!(error, ToolError::UnknownTool(_)));
    assert_eq!(message(&error), "no tool named `scratchpad_write`; this plugin offers scratchpad_read");
}

#[test]
fn the_load_manifest_matches_the_offered_spec() {
    let mut h = Harness::new("{}");
    h.offload_id("t1", 1, &FakeObservation::text(&"x".repeat(5000)));
    let offered = h.plugin().list_tools(&turn("t1"));
    let declared = h.plugin().load().tools;
    assert_eq!(offered[0].parameters, declared[0].parameters);
    assert_eq!(offered[0].description, declared[0].description);
    let _ = call(1, "x", "{}");
}
