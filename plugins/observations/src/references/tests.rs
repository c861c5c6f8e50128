//! `{{stepN.field}}` as the large-observation store's httpbin → fs_write example uses it, and every way it fails.

use serde_json::{Value, json};

use crate::testing::{FakeObservation, Harness, big_log, message};
use scratchpad_plugin_sdk::ToolError;

const METADATA: &str = r#"{"path": "/tmp/big_log.txt", "bytes": 89042, "encoding": "utf-8", "tags": ["log", "big"]}"#;

fn with_big_log() -> (Harness, String, String) {
    let log = big_log();
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::text(&log).with_metadata(METADATA));
    (h, id, log)
}

fn resolved(h: &mut Harness, step: u32, args: Value) -> Value {
    let text = h.resolve("t1", step, "fs_write", &args.to_string()).unwrap().expect("arguments replaced");
    serde_json::from_str(&text).unwrap()
}

fn invalid(h: &mut Harness, turn: &str, step: u32, args: Value) -> String {
    match h.resolve(turn, step, "fs_write", &args.to_string()) {
        Err(ToolError::InvalidArguments(m)) => m,
        other => panic!("expected invalid-arguments for {args}, got {other:?}"),
    }
}

#[test]
fn step1_content_resolves_to_the_full_stored_content_not_the_summary() {
    let (mut h, _, log) = with_big_log();
    let args = resolved(&mut h, 2, json!({"path": "/tmp/out.txt", "content": "{{step1.content}}"}));
    let content = args["content"].as_str().unwrap();
    assert_eq!(content.len(), 89_042);
    assert_eq!(content, log);
    assert_eq!(args["path"], "/tmp/out.txt");
}

#[test]
fn references_inside_longer_strings_are_substituted_textually() {
    let (mut h, id, _) = with_big_log();
    let args = resolved(
        &mut h,
        3,
        json!({
            "message": "Saved {{step1.size_bytes}} bytes ({{ step1.kind }}) from {{step1.path}} as {{step1.scratchpad_id}}",
            "nested": [{"enc": "{{step1.metadata.encoding}}"}, "{{step1.tags.1}}", 7, null],
            "tags": "{{step1.tags}}",
            "unrelated": "{{user}} and {{ stepping }}"
        }),
    );
    assert_eq!(args["message"], format!("Saved 89042 bytes (text) from /tmp/big_log.txt as {id}"));
    assert_eq!(args["nested"], json!([{"enc": "utf-8"}, "big", 7, null]));
    assert_eq!(args["tags"], r#"["log","big"]"#, "non-string metadata values are substituted as JSON text");
    assert_eq!(args["unrelated"], "{{user}} and {{ stepping }}");
}

#[test]
fn summary_tool_and_sha256_fields_resolve() {
    let (mut h, id, _) = with_big_log();
    let entry = h.blobs.entry(&id).clone();
    let args = resolved(&mut h, 2, json!({"a": "{{step1.summary}}", "b": "{{step1.tool}}", "c": "{{step1.sha256}}"}));
    assert_eq!((args["a"].as_str(), args["b"].as_str()), (Some(entry.summary.as_str()), Some("fs_read")));
    assert_eq!(args["c"], entry.sha256.as_str());
}

#[test]
fn arguments_without_references_are_left_untouched() {
    let (mut h, _, _) = with_big_log();
    for args in [r#"{"path": "/tmp/x"}"#, r#"{"text": "{{user}}"}"#, "not json {{step1.content}}", ""] {
        assert_eq!(h.resolve("t1", 2, "fs_write", args).unwrap(), None, "{args}");
    }
    let reads = h.blobs.requested.get();
    assert_eq!(reads, 0, "nothing was read");
}

#[test]
fn object_keys_are_not_resolved() {
    let (mut h, _, _) = with_big_log();
    assert_eq!(h.resolve("t1", 2, "fs_write", r#"{"{{step1.path}}": 1}"#).unwrap(), None);
}

#[test]
fn a_step_below_the_threshold_was_not_offloaded_and_says_so() {
    let (mut h, _, _) = with_big_log();
    assert_eq!(h.offload("t1", 2, "fs_read", &FakeObservation::text("small")), None);
    let error = invalid(&mut h, "t1", 3, json!({"content": "{{step2.content}}"}));
    assert_eq!(
        error,
        "`{{step2.content}}`: step 2 was not offloaded; only offloaded steps can be referenced (offloaded steps in \
         this turn: 1)"
    );
}

#[test]
fn a_step_that_has_not_run_yet_and_step_zero_are_errors() {
    let (mut h, _, _) = with_big_log();
    let later = invalid(&mut h, "t1", 2, json!({"content": "{{step2.content}}"}));
    assert_eq!(later, "`{{step2.content}}`: step 2 has not run yet (this call is step 2)");
    let zero = invalid(&mut h, "t1", 2, json!({"content": "{{step0.content}}"}));
    assert_eq!(zero, "`{{step0.content}}`: steps are numbered from 1");
    let huge = invalid(&mut h, "t1", 2, json!({"content": "{{step99999999999.content}}"}));
    assert!(huge.contains("there is no such step"), "{huge}");
}

#[test]
fn an_unknown_field_lists_the_known_ones() {
    let (mut h, _, _) = with_big_log();
    let error = invalid(&mut h, "t1", 2, json!({"x": "{{step1.colour}}"}));
    assert_eq!(
        error,
        "`{{step1.colour}}`: step 1 has no field `colour`; fields: content, summary, scratchpad_id, size_bytes, \
         size_chars, kind, tool, sha256, metadata, or a metadata key (bytes, encoding, path, tags)"
    );
    let no_field = invalid(&mut h, "t1", 2, json!({"x": "{{step1}}"}));
    assert!(no_field.starts_with("`{{step1}}` names no field: write e.g. {{step1.content}}"), "{no_field}");
}

#[test]
fn the_content_of_a_binary_step_is_an_error() {
    let mut h = Harness::new("{}");
    h.offload_id("t1", 1, &FakeObservation::binary(&[0xFF; 5000]));
    let error = invalid(&mut h, "t1", 2, json!({"content": "{{step1.content}}"}));
    assert!(error.contains("the observation of step 1 is binary (5000 bytes)"), "{error}");
    let id = resolved(&mut h, 2, json!({"id": "{{step1.scratchpad_id}}"}));
    assert_eq!(id["id"].as_str().unwrap().len(), 16);
}

#[test]
fn content_larger_than_max_argument_bytes_is_rejected() {
    let mut h = Harness::new(r#"{"maxArgumentBytes": 10000}"#);
    h.offload_id("t1", 1, &FakeObservation::text(&"x".repeat(10_001)));
    let error = h.resolve("t1", 2, "fs_write", r#"{"content": "{{step1.content}}"}"#).unwrap_err();
    assert!(matches!(error, ToolError::Rejected(_)), "{error:?}");
    assert!(message(&error).contains("10001 bytes, more than the 10000 bytes"), "{error:?}");
}

#[test]
fn arguments_that_would_grow_past_max_argument_bytes_are_rejected_with_their_size() {
    // 9,000 newlines fit the limit as content but take 18,000 bytes escaped in JSON.
    let mut h = Harness::new(r#"{"maxArgumentBytes": 10000}"#);
    h.offload_id("t1", 1, &FakeObservation::text(&"\n".repeat(9_000)));
    let error = h.resolve("t1", 2, "fs_write", r#"{"content": "{{step1.content}}"}"#).unwrap_err();
    assert!(matches!(error, ToolError::Rejected(_)), "{error:?}");
    assert!(message(&error).contains("arguments of `fs_write` 18014 bytes long, more than the 10000"), "{error:?}");
}

#[test]
fn an_800_kb_file_passes_whole_with_the_default_limits() {
    let mut h = Harness::new("{}");
    let log = "2026-04-26 10:00:01 INFO a line of a large log\n".repeat(800_000 / 46);
    h.offload_id("t1", 1, &FakeObservation::text(&log));
    let args = resolved(&mut h, 2, json!({"content": "{{step1.content}}"}));
    assert_eq!(args["content"].as_str().unwrap().len(), log.len());
    assert!(log.len() > 790_000);
}

#[test]
fn steps_of_another_turn_cannot_be_referenced() {
    let (mut h, _, _) = with_big_log();
    let error = invalid(&mut h, "t2", 2, json!({"content": "{{step1.content}}"}));
    assert!(error.contains("step 1 was not offloaded"), "{error}");
    assert!(error.contains("no step of this turn was offloaded"), "{error}");
}

#[test]
fn an_expired_step_is_an_error() {
    let (mut h, id, _) = with_big_log();
    h.blobs.expire(&id);
    let error = invalid(&mut h, "t1", 2, json!({"content": "{{step1.content}}"}));
    assert_eq!(error, "`{{step1.content}}`: the scratchpad entry of step 1 expired; run that step's tool again");
}

#[test]
fn the_same_content_referenced_twice_is_read_once() {
    let (mut h, _, log) = with_big_log();
    let args = resolved(&mut h, 2, json!({"a": "{{step1.content}}", "b": "{{step1.content}}"}));
    assert_eq!((args["a"].as_str(), args["b"].as_str()), (Some(log.as_str()), Some(log.as_str())));
    assert_eq!(h.blobs.requested.get(), 89_042);
}

#[test]
fn a_json_escaped_reference_is_found_too() {
    let (mut h, _, _) = with_big_log();
    let text = h.resolve("t1", 2, "fs_write", r#"{"p": "\u007b{step1.path}}"}"#).unwrap().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["p"], "/tmp/big_log.txt");
}
