//! `scratchpad_read`, mode by mode on the large-observation store's big log, then binary entries, multi-byte text,
//! turn isolation and every bad input.

use base64::Engine;
use serde_json::{Value, json};

use crate::reader::{SCAN_CHUNK, not_found_message};
use crate::testing::{FakeObservation, Harness, big_log, message};
use scratchpad_plugin_sdk::ToolError;

fn with_big_log() -> (Harness, String, String) {
    let log = big_log();
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::text(&log));
    (h, id, log)
}

fn read(h: &mut Harness, args: Value) -> Value {
    h.ok("t1", &args.to_string())
}

fn log_lines(log: &str, from: usize, to: usize) -> String {
    log.split_inclusive('\n').skip(from - 1).take(to + 1 - from).collect()
}

// ---- the large-observation store's modes on the big log ----

#[test]
fn head_is_the_default_mode_and_reads_the_first_2000_characters() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id}));
    assert_eq!(out["mode"], "head");
    assert_eq!(out["kind"], "text");
    assert_eq!((out["start"].as_u64(), out["end"].as_u64()), (Some(0), Some(2000)));
    assert_eq!(out["content"], &log[..2000]);
    assert_eq!((out["size_bytes"].as_u64(), out["size_chars"].as_u64()), (Some(89_042), Some(89_042)));
    assert!(out.get("note").is_none() && out.get("truncated").is_none() && out.get("warning").is_none());
}

#[test]
fn head_and_tail_read_n_characters() {
    let (mut h, id, log) = with_big_log();
    let head = read(&mut h, json!({"scratchpad_id": id, "mode": "head", "n": 40}));
    assert_eq!(head["content"], "INFO 2026-04-26 10:00:01 event number 0\n");
    let tail = read(&mut h, json!({"scratchpad_id": id, "mode": "tail", "n": 46}));
    assert_eq!(tail["content"], "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n");
    assert_eq!((tail["start"].as_u64(), tail["end"].as_u64()), (Some(88_996), Some(89_042)));
    let default_tail = read(&mut h, json!({"scratchpad_id": id, "mode": "tail"}));
    assert_eq!(default_tail["content"], &log[log.len() - 2000..]);
}

#[test]
fn n_beyond_the_entry_returns_all_of_it_with_a_note() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "tail", "n": 100_000}));
    assert_eq!(out["content"], log.as_str());
    assert_eq!(out["note"], "`n` (100000) is more than the entry's 89042 characters; returned all of it.");
}

#[test]
fn range_reads_characters_start_to_end_exclusive() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "range", "start": 40, "end": 80}));
    assert_eq!(out["content"], &log[40..80]);
    assert_eq!(out["content"], "INFO 2026-04-26 10:00:02 event number 1\n");
    let empty = read(&mut h, json!({"scratchpad_id": id, "mode": "range", "start": 5, "end": 5}));
    assert_eq!(empty["content"], "");
}

#[test]
fn a_range_past_the_end_is_clamped_with_a_note() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "range", "start": 89_000, "end": 99_999}));
    assert_eq!(out["content"], &log[89_000..]);
    assert_eq!(out["end"], 89_042);
    assert_eq!(out["note"], "`end` (99999) is past the end of the entry; clamped to its length, 89042 characters.");
    let beyond = read(&mut h, json!({"scratchpad_id": id, "mode": "range", "start": 90_000, "end": 90_010}));
    assert_eq!(beyond["content"], "");
    assert_eq!(
        beyond["note"],
        "`start` (90000) is at or past the end of the entry (89042 characters); nothing returned."
    );
}

#[test]
fn full_reads_everything_and_warns_above_full_warn_bytes() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "full"}));
    assert_eq!(out["content"], log.as_str());
    assert!(out["warning"].as_str().unwrap().starts_with("this entry is 89042 bytes"), "{out}");

    let mut quiet = Harness::new(r#"{"fullWarnBytes": 100000}"#);
    let id = quiet.offload_id("t1", 1, &FakeObservation::text(&log));
    assert!(quiet.ok("t1", &json!({"scratchpad_id": id, "mode": "full"}).to_string()).get("warning").is_none());
}

#[test]
fn a_read_longer_than_max_read_bytes_is_cut_and_says_where_to_continue() {
    let log = big_log();
    let mut h = Harness::new(r#"{"maxReadBytes": 1000}"#);
    let id = h.offload_id("t1", 1, &FakeObservation::text(&log));
    let out = h.ok("t1", &json!({"scratchpad_id": id, "mode": "full"}).to_string());
    assert_eq!(out["content"], &log[..1000]);
    assert_eq!((out["truncated"].as_bool(), out["end"].as_u64()), (Some(true), Some(1000)));
    assert_eq!(
        out["note"],
        "The result was cut at the read limit of 1000 bytes; continue with mode range from start 1000."
    );
}

// ---- the line modes ----

#[test]
fn lines_returns_the_exact_text_of_1_based_inclusive_lines() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "lines", "start_line": 2, "end_line": 3}));
    assert_eq!(out["content"], "INFO 2026-04-26 10:00:02 event number 1\nINFO 2026-04-26 10:00:03 event number 2\n");
    assert_eq!((out["start_line"].as_u64(), out["end_line"].as_u64()), (Some(2), Some(3)));
    assert_eq!((out["start"].as_u64(), out["end"].as_u64()), (Some(40), Some(120)));
    let one = read(&mut h, json!({"scratchpad_id": id, "mode": "lines", "start_line": 51, "end_line": 51}));
    assert_eq!(one["content"], log_lines(&log, 51, 51));
    assert!(one["content"].as_str().unwrap().starts_with("ERROR"));
}

#[test]
fn lines_past_the_last_line_are_clamped_with_a_note() {
    let (mut h, id, log) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "lines", "start_line": 2095, "end_line": 5000}));
    assert_eq!(out["content"], log_lines(&log, 2095, 2096));
    assert_eq!((out["end_line"].as_u64(), out["total_lines"].as_u64()), (Some(2096), Some(2096)));
    assert_eq!(out["note"], "`end_line` (5000) is past the last line; clamped to 2096.");
    let none = read(&mut h, json!({"scratchpad_id": id, "mode": "lines", "start_line": 3000, "end_line": 3001}));
    assert_eq!(none["content"], "");
    assert_eq!(none["note"], "`start_line` (3000) is past the last line: the entry has 2096 lines; nothing returned.");
}

#[test]
fn grep_returns_matching_lines_with_their_numbers() {
    let (mut h, id, _) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "grep", "pattern": "ERROR", "max_matches": 100}));
    let lines: Vec<u64> = out["matches"].as_array().unwrap().iter().map(|m| m["line"].as_u64().unwrap()).collect();
    let mut expected: Vec<u64> = (0..21).map(|k| 51 + 100 * k).collect();
    expected.push(2096);
    assert_eq!(lines, expected);
    assert_eq!(out["match_count"], 22);
    assert_eq!(out["total_lines"], 2096);
    assert_eq!(out["matches"][21]["text"], "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT");
    assert!(out.get("truncated").is_none());
}

#[test]
fn grep_stops_at_max_matches_and_says_more_may_follow() {
    let (mut h, id, _) = with_big_log();
    let out = read(&mut h, json!({"scratchpad_id": id, "mode": "grep", "pattern": "^ERROR", "max_matches": 2}));
    assert_eq!(out["match_count"], 2);
    assert_eq!(out["truncated"], true);
    assert!(out["note"].as_str().unwrap().starts_with("stopped after 2 matches (max_matches) at line 151"), "{out}");
    assert!(out.get("total_lines").is_none());
    let default = read(&mut h, json!({"scratchpad_id": id, "mode": "grep", "pattern": "ERROR"}));
    assert_eq!(default["match_count"], 20, "grepMaxMatches defaults to 20");
}

#[test]
fn grep_gives_context_lines_before_and_after() {
    let (mut h, id, _) = with_big_log();
    let args = json!({"scratchpad_id": id, "mode": "grep", "pattern": "(?i)critical", "context": 2});
    let out = read(&mut h, args);
    let only = &out["matches"][0];
    assert_eq!(only["line"], 2096);
    let before: Vec<u64> = only["before"].as_array().unwrap().iter().map(|l| l["line"].as_u64().unwrap()).collect();
    assert_eq!(before, [2094, 2095]);
    assert_eq!(only["before"][1]["text"], "INFO 2026-04-26 10:34:55 event number 2094");
    assert!(only.get("after").is_none(), "nothing follows the last line");
}

// ---- binary entries ----

fn with_binary() -> (Harness, String, Vec<u8>) {
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::binary(&bytes));
    (h, id, bytes)
}

fn decoded(out: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(out["content_base64"].as_str().unwrap()).unwrap()
}

#[test]
fn binary_entries_read_bytes_as_base64() {
    let (mut h, id, bytes) = with_binary();
    let head = read(&mut h, json!({"scratchpad_id": id, "n": 16}));
    assert_eq!((head["kind"].as_str(), decoded(&head)), (Some("binary"), bytes[..16].to_vec()));
    assert!(head.get("content").is_none() && head.get("size_chars").is_none());
    let tail = read(&mut h, json!({"scratchpad_id": id, "mode": "tail", "n": 10}));
    assert_eq!(decoded(&tail), bytes[4990..]);
    let range = read(&mut h, json!({"scratchpad_id": id, "mode": "range", "start": 100, "end": 6000}));
    assert_eq!(decoded(&range), bytes[100..]);
    assert!(range["note"].as_str().unwrap().contains("clamped to its length, 5000 bytes"));
    let full = read(&mut h, json!({"scratchpad_id": id, "mode": "full"}));
    assert_eq!(decoded(&full), bytes);
}

#[test]
fn lines_and_grep_refuse_binary_entries() {
    let (mut h, id, _) = with_binary();
    for args in [
        json!({"scratchpad_id": id, "mode": "lines", "start_line": 1, "end_line": 2}),
        json!({"scratchpad_id": id, "mode": "grep", "pattern": "x"}),
    ] {
        let error = h.read("t1", &args.to_string()).unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{error:?}");
        assert!(message(&error).contains("is binary"), "{error:?}");
    }
}

// ---- multi-byte text ----

#[test]
fn multibyte_text_is_read_by_characters_and_never_split() {
    let text = "a€é😀\n".repeat(2000); // 5 characters, 11 bytes per repetition
    let mut h = Harness::new(r#"{"maxReadBytes": 1001}"#);
    let id = h.offload_id("t1", 1, &FakeObservation::text(&text));
    let chars: Vec<char> = text.chars().collect();
    let range = h.ok("t1", &json!({"scratchpad_id": id, "mode": "range", "start": 7, "end": 13}).to_string());
    assert_eq!(range["content"], chars[7..13].iter().collect::<String>());
    let tail = h.ok("t1", &json!({"scratchpad_id": id, "mode": "tail", "n": 3}).to_string());
    assert_eq!(tail["content"], "é😀\n");

    // 1001 bytes end inside a character: the read stops before it, and continuing from `end`
    // loses nothing.
    let mut joined = String::new();
    let mut start = 0;
    while start < chars.len() as u64 {
        let args = json!({"scratchpad_id": id, "mode": "range", "start": start, "end": chars.len()});
        let out = h.ok("t1", &args.to_string());
        let content = out["content"].as_str().unwrap();
        assert!(content.len() <= 1001 && !content.contains('\u{FFFD}'));
        joined.push_str(content);
        start = out["end"].as_u64().unwrap();
    }
    assert_eq!(joined, text);
}

// ---- isolation and expiry ----

#[test]
fn an_id_from_another_turn_is_not_found_exactly_like_an_unknown_id() {
    let (mut h, id, _) = with_big_log();
    let other_turn = h.read("t2", &json!({"scratchpad_id": id}).to_string()).unwrap_err();
    assert!(matches!(&other_turn, ToolError::NotFound(m) if *m == not_found_message(&id)), "{other_turn:?}");
    let unknown = h.read("t1", &json!({"scratchpad_id": "0000000000000000"}).to_string()).unwrap_err();
    assert!(matches!(&unknown, ToolError::NotFound(m) if *m == not_found_message("0000000000000000")));
    assert_eq!(message(&other_turn).replace(&id, "ID"), message(&unknown).replace("0000000000000000", "ID"));
}

#[test]
fn an_id_from_another_session_is_not_found() {
    let (_, id, _) = with_big_log();
    let mut other_session = Harness::new("{}");
    let error = other_session.read("t1", &json!({"scratchpad_id": id}).to_string()).unwrap_err();
    assert!(matches!(&error, ToolError::NotFound(m) if *m == not_found_message(&id)));
}

#[test]
fn an_expired_id_is_not_found_and_says_it_expired() {
    let (mut h, id, _) = with_big_log();
    h.blobs.expire(&id);
    let error = h.read("t1", &json!({"scratchpad_id": id}).to_string()).unwrap_err();
    assert!(matches!(error, ToolError::NotFound(_)));
    assert_eq!(
        message(&error),
        format!("scratchpad entry `{id}` expired (entries are kept 3600 seconds); run the tool that produced it again")
    );
    let other_turn = h.read("t2", &json!({"scratchpad_id": id}).to_string()).unwrap_err();
    assert_eq!(message(&other_turn), not_found_message(&id), "expiry is not revealed to another turn");
}

// ---- streaming ----

#[test]
fn a_2_kb_range_from_a_large_ascii_entry_reads_about_2_kb() {
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::text(&"0123456789".repeat(500_000)));
    h.blobs.requested.set(0);
    let out =
        h.ok("t1", &json!({"scratchpad_id": id, "mode": "range", "start": 4_000_000, "end": 4_002_048}).to_string());
    assert_eq!(out["content"].as_str().unwrap().len(), 2048);
    assert_eq!(h.blobs.requested.get(), 2048);
    assert!(h.blobs.largest_read.get() <= SCAN_CHUNK);
}

// ---- bad input ----

#[test]
fn every_bad_input_is_an_error_naming_the_field() {
    let (mut h, id, _) = with_big_log();
    let invalid = [
        (json!({}), "`scratchpad_id` is required"),
        (json!({"scratchpad_id": 7}), "`scratchpad_id` must be a string, got a number"),
        (json!({"scratchpad_id": ""}), "`scratchpad_id` must be a non-empty string"),
        (json!({"scratchpad_id": id, "mode": "middle"}), "unknown `mode` \"middle\"; use one of full, head, tail"),
        (json!({"scratchpad_id": id, "mode": 3}), "`mode` must be a string"),
        (json!({"scratchpad_id": id, "n": 0}), "`n` must be at least 1, got 0"),
        (json!({"scratchpad_id": id, "mode": "tail", "n": -5}), "`n` must not be negative, got -5"),
        (json!({"scratchpad_id": id, "n": "20"}), "`n` must be an integer, got a string"),
        (json!({"scratchpad_id": id, "n": 2.5}), "`n` must be an integer, got 2.5"),
        (json!({"scratchpad_id": id, "mode": "range", "end": 5}), "`start` is required for mode range"),
        (json!({"scratchpad_id": id, "mode": "range", "start": 5}), "`end` is required for mode range"),
        (json!({"scratchpad_id": id, "mode": "range", "start": -1, "end": 5}), "`start` must not be negative"),
        (json!({"scratchpad_id": id, "mode": "range", "start": 10, "end": 5}), "`end` (5) is before `start` (10)"),
        (
            json!({"scratchpad_id": id, "mode": "lines", "start_line": 0, "end_line": 3}),
            "`start_line` must be at least 1",
        ),
        (json!({"scratchpad_id": id, "mode": "lines", "start_line": 4, "end_line": 3}), "`end_line` (3) is before"),
        (json!({"scratchpad_id": id, "mode": "lines", "start_line": 4}), "`end_line` is required for mode lines"),
        (json!({"scratchpad_id": id, "mode": "grep"}), "`pattern` is required"),
        (json!({"scratchpad_id": id, "mode": "grep", "pattern": "(unclosed"}), "`pattern` is not a valid regular"),
        (json!({"scratchpad_id": id, "mode": "grep", "pattern": "x", "max_matches": 0}), "`max_matches` must be at"),
        (json!({"scratchpad_id": id, "mode": "grep", "pattern": "x", "context": 51}), "`context` must be at most 50"),
        (json!({"scratchpad_id": id, "mode": "grep", "pattern": "x", "context": -1}), "`context` must not be negative"),
        (json!([id]), "arguments must be a JSON object, got an array"),
    ];
    for (args, expected) in invalid {
        let error = h.read("t1", &args.to_string()).unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{args}: {error:?}");
        assert!(message(&error).contains(expected), "{args}: {error:?}");
    }
    let not_json = h.read("t1", "{oops").unwrap_err();
    assert!(message(&not_json).contains("not valid JSON"), "{not_json:?}");
}

#[test]
fn argument_errors_come_before_the_lookup() {
    let mut h = Harness::new("{}");
    let error = h.read("t1", r#"{"scratchpad_id": "unknown", "mode": "middle"}"#).unwrap_err();
    assert!(matches!(error, ToolError::InvalidArguments(_)), "{error:?}");
}
