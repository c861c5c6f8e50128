//! The large-observation store's offload rule, synthetic observation and summary.

use serde_json::json;

use super::*;
use crate::testing::{FAKE_SHA, FakeObservation, Harness, big_log};

const BIG_LOG_METADATA: &str = r#"{"path": "/tmp/big_log.txt", "bytes": 89042, "encoding": "utf-8"}"#;

fn is_scratchpad_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn an_observation_at_the_threshold_passes_through_and_one_byte_more_is_offloaded() {
    let mut h = Harness::new("{}");
    assert_eq!(h.offload("t1", 1, "fs_read", &FakeObservation::text(&"a".repeat(4096))), None);
    assert!(h.blobs.entries.is_empty(), "nothing stored below the threshold");
    let synthetic = h.offload("t1", 2, "fs_read", &FakeObservation::text(&"a".repeat(4097))).unwrap();
    assert_eq!(synthetic["size_bytes"], 4097);
    assert_eq!(h.blobs.entries.len(), 1);
}

#[test]
fn the_threshold_is_configurable() {
    let mut h = Harness::new(r#"{"thresholdBytes": 10}"#);
    assert!(h.offload("t1", 1, "fs_read", &FakeObservation::text("eleven byte")).is_some());
    assert!(h.offload("t1", 2, "fs_read", &FakeObservation::text("ten bytes.")).is_none());
}

#[test]
fn the_89_kb_log_becomes_its_synthetic_observation() {
    let log = big_log();
    let mut h = Harness::new("{}");
    let observation = FakeObservation::text(&log).with_metadata(BIG_LOG_METADATA);
    let text = h
        .plugin()
        .after_tool_result(&crate::testing::turn("t1"), &crate::testing::call(1, "fs_read", "{}"), &observation)
        .unwrap();

    let synthetic: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = synthetic.as_object().unwrap().keys().map(String::as_str).collect();
    let mut in_order = ["ok", "scratchpad_id", "size_bytes", "kind", "summary", "metadata", "_note"];
    assert_eq!(keys.len(), in_order.len());
    let positions: Vec<usize> = in_order.iter().map(|k| text.find(&format!("\"{k}\":")).unwrap()).collect();
    assert!(positions.is_sorted(), "fields are in the large-observation store's order: {text}");
    in_order.sort_unstable();
    assert_eq!(keys, in_order);

    assert_eq!(synthetic["ok"], true);
    assert!(is_scratchpad_id(synthetic["scratchpad_id"].as_str().unwrap()), "{}", synthetic["scratchpad_id"]);
    assert_eq!(synthetic["size_bytes"], 89_042);
    assert_eq!(synthetic["kind"], "text");
    let summary = format!("{}\n[... 88042 characters omitted ...]\n{}", &log[..500], &log[log.len() - 500..]);
    assert_eq!(synthetic["summary"], summary.as_str());
    assert!(summary.starts_with("INFO 2026-04-26 10:00:01 event number 0\nINFO 2026-04-26 10:00:02 event number 1\n"));
    assert!(summary.ends_with("ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n"));
    assert_eq!(synthetic["metadata"], json!({"path": "/tmp/big_log.txt", "bytes": 89042, "encoding": "utf-8"}));
    assert_eq!(synthetic["_note"], NOTE);
    assert_eq!(
        NOTE,
        "Large observation saved in scratchpad. To read it in full or partially, use the scratchpad_read tool."
    );
}

#[test]
fn the_entry_records_turn_step_tool_summary_and_ttl() {
    let mut h = Harness::new(r#"{"ttlSeconds": 90}"#);
    let synthetic = h.offload("turn-7", 3, "web_fetch", &FakeObservation::text(&"x".repeat(5000))).unwrap();
    let entry = h.blobs.entry(synthetic["scratchpad_id"].as_str().unwrap());
    assert_eq!((entry.turn_id.as_str(), entry.step, entry.tool.as_str()), ("turn-7", 3, "web_fetch"));
    assert_eq!(entry.summary, synthetic["summary"].as_str().unwrap());
    assert_eq!(entry.expires_at_ms - entry.created_at_ms, 90_000);
}

#[test]
fn a_tools_ttl_seconds_metadata_sets_that_entrys_ttl() {
    let mut h = Harness::new("{}");
    let short = FakeObservation::text(&"x".repeat(5000)).with_metadata(r#"{"ttl_seconds": 60, "path": "/a"}"#);
    let id = h.offload_id("t1", 1, &short);
    assert_eq!(h.blobs.entry(&id).expires_at_ms - h.blobs.entry(&id).created_at_ms, 60_000);
    // Anything but a positive integer leaves the configured TTL.
    for bad in [r#"{"ttl_seconds": 0}"#, r#"{"ttl_seconds": "60"}"#, r#"{"ttl_seconds": -5}"#] {
        let id = h.offload_id("t1", 2, &FakeObservation::text(&"x".repeat(5000)).with_metadata(bad));
        assert_eq!(h.blobs.entry(&id).expires_at_ms - h.blobs.entry(&id).created_at_ms, 3_600_000, "{bad}");
    }
}

#[test]
fn the_default_ttl_is_one_hour() {
    let mut h = Harness::new("{}");
    let id = h.offload_id("t1", 1, &FakeObservation::text(&"x".repeat(5000)));
    let entry = h.blobs.entry(&id);
    assert_eq!(entry.expires_at_ms - entry.created_at_ms, 3_600_000);
}

#[test]
fn a_binary_observation_is_summarised_by_size_and_sha256() {
    let mut h = Harness::new("{}");
    let bytes: Vec<u8> = (0..45_123u32).map(|i| (i * 7 % 256) as u8).collect();
    let synthetic = h.offload("t1", 1, "fs_read", &FakeObservation::binary(&bytes)).unwrap();
    assert_eq!(synthetic["kind"], "binary");
    assert_eq!(synthetic["size_bytes"], 45_123);
    assert_eq!(synthetic["summary"], format!("[BINARY: 45123 bytes, sha256={FAKE_SHA}]"));
}

#[test]
fn text_with_at_most_head_plus_tail_characters_is_summarised_whole() {
    let mut h = Harness::new(r#"{"thresholdBytes": 10}"#);
    let text = "é".repeat(1000); // 1000 characters, 2000 bytes
    let synthetic = h.offload("t1", 1, "fs_read", &FakeObservation::text(&text)).unwrap();
    assert_eq!(synthetic["summary"], text.as_str());
}

#[test]
fn a_multibyte_summary_counts_characters_and_never_splits_one() {
    let mut h = Harness::new("{}");
    // 1-, 2-, 3- and 4-byte characters, so the 4*500-byte windows end inside characters.
    let text = "a€é😀".repeat(1500);
    let chars = text.chars().count();
    let synthetic = h.offload("t1", 1, "fs_read", &FakeObservation::text(&text)).unwrap();
    let summary = synthetic["summary"].as_str().unwrap();
    let head: String = text.chars().take(500).collect();
    let tail: String = text.chars().skip(chars - 500).collect();
    assert_eq!(summary, format!("{head}\n[... {} characters omitted ...]\n{tail}", chars - 1000));
    assert!(!summary.contains('\u{FFFD}'));
}

#[test]
fn head_and_tail_sizes_are_configurable() {
    let mut h = Harness::new(r#"{"headChars": 3, "tailChars": 0}"#);
    let synthetic = h.offload("t1", 1, "fs_read", &FakeObservation::text(&"abcdef".repeat(1000))).unwrap();
    assert_eq!(synthetic["summary"], "abc\n[... 5997 characters omitted ...]\n");
}

#[test]
fn offloading_100_mb_reads_only_the_two_ends_of_the_observation() {
    let unit = "2026-04-26 10:00:01 é😀 event\n"; // 33 bytes, 29 characters
    let times = 100 * 1024 * 1024 / unit.len() as u64 + 1;
    let observation = FakeObservation::repeated(unit, times).with_read_budget(64 * 1024);
    let mut h = Harness::new("{}");
    let synthetic = h.offload("t1", 1, "fs_read", &observation).unwrap();
    assert!(observation.size() >= 100 * 1024 * 1024);
    assert!(observation.requested() <= 4000, "read {} bytes", observation.requested());
    let summary = synthetic["summary"].as_str().unwrap();
    let omitted = observation.size_chars() - 1000;
    assert!(summary.contains(&format!("\n[... {omitted} characters omitted ...]\n")), "{summary}");
    assert_eq!(
        summary.chars().count() as u64,
        1000 + format!("\n[... {omitted} characters omitted ...]\n").len() as u64
    );
    assert!(summary.ends_with("event\n"));
}

#[test]
#[should_panic(expected = "more than its budget")]
fn the_streaming_proof_fails_for_a_guest_that_reads_the_whole_observation() {
    let observation = FakeObservation::repeated("0123456789", 10_000).with_read_budget(64 * 1024);
    let _ = read(&observation, 0, observation.size());
}

#[test]
fn a_store_failure_shows_only_the_summary_and_says_why() {
    let mut h = Harness::new("{}");
    h.blobs.refuse = Some("blob store full".into());
    let synthetic = h.offload("t1", 1, "fs_read", &FakeObservation::text(&"z".repeat(9000))).unwrap();
    assert!(synthetic.get("scratchpad_id").is_none());
    assert_eq!(synthetic["size_bytes"], 9000);
    assert!(synthetic["summary"].as_str().unwrap().contains("[... 8000 characters omitted ...]"));
    assert!(synthetic["_note"].as_str().unwrap().contains("could not be saved in the scratchpad (blob store full)"));
}

#[test]
fn metadata_that_is_not_a_json_object_becomes_an_empty_object() {
    let mut h = Harness::new("{}");
    for metadata in ["not json", "[1, 2]", ""] {
        let observation = FakeObservation::text(&"x".repeat(5000)).with_metadata(metadata);
        assert_eq!(h.offload("t1", 1, "fs_read", &observation).unwrap()["metadata"], json!({}));
    }
}
