//! Grep details the big-log tests do not reach: overlapping context, CRLF, long lines and the
//! read limit.

use scratchpad_plugin_sdk::NewEntry;

use super::*;
use crate::store::Blobs;
use crate::testing::{FakeObservation, MemoryBlobs};

fn grep_in(text: &str, pattern: &str, max_matches: u64, context: u64, max_bytes: u64) -> Found {
    let mut blobs = MemoryBlobs::default();
    let new = NewEntry { turn_id: "t".into(), step: 1, tool: "x".into(), summary: String::new(), ttl_seconds: 1 };
    let id = blobs.store(&FakeObservation::text(text), new).unwrap();
    let entry = blobs.entry(&id).clone();
    let grep = Grep::new(pattern, max_matches, context).unwrap();
    grep.run(&EntryReader::new(&blobs, &entry).with_chunk(3), max_bytes).unwrap()
}

fn numbers(lines: &[Line]) -> Vec<u64> {
    lines.iter().map(|l| l.line).collect()
}

#[test]
fn close_matches_each_get_their_own_context() {
    let found = grep_in("a\nhit 1\nb\nhit 2\nc\nd\n", "hit", 10, 1, 1 << 20);
    assert_eq!(found.matches.len(), 2);
    assert_eq!((numbers(&found.matches[0].before), numbers(&found.matches[0].after)), (vec![1], vec![3]));
    assert_eq!((numbers(&found.matches[1].before), numbers(&found.matches[1].after)), (vec![3], vec![5]));
    assert_eq!(found.total_lines, Some(6));
    assert_eq!(found.stopped, None);
}

#[test]
fn crlf_line_ends_are_not_part_of_the_line() {
    let found = grep_in("one\r\ntwo$\r\n", r"(e|\$)$", 10, 0, 1 << 20);
    let texts: Vec<&str> = found.matches.iter().map(|m| m.line.text.as_str()).collect();
    assert_eq!(texts, ["one", "two$"]);
}

#[test]
fn the_scan_waits_for_the_last_matchs_context_before_stopping() {
    let found = grep_in("x\nx\ny\nz\nx\n", "x", 2, 2, 1 << 20);
    assert_eq!(found.matches.len(), 2);
    assert_eq!(numbers(&found.matches[1].after), [3, 4]);
    assert!(found.stopped.unwrap().starts_with("stopped after 2 matches (max_matches) at line 4"));
}

#[test]
fn long_lines_are_shown_cut_and_flagged() {
    let long = format!("{}MATCH", "é".repeat(2000));
    let found = grep_in(&long, "MATCH", 10, 0, 1 << 20);
    let line = &found.matches[0].line;
    assert!(line.cut);
    assert_eq!(line.text.chars().count() as u64, SHOWN_CHARS);
}

#[test]
fn the_result_stops_at_the_read_limit() {
    let text = "match this line\n".repeat(100);
    let found = grep_in(&text, "match", 1000, 0, 100);
    assert!(found.matches.len() < 10, "{}", found.matches.len());
    assert!(found.stopped.unwrap().contains("the result reached the read limit of 100 bytes"));
}

/// Grep the obvious way, line by line over the whole text: what [`Grep::run`] must agree with.
fn naive(text: &str, pattern: &str, max_matches: usize, context: usize) -> Vec<(u64, Vec<u64>, Vec<u64>)> {
    let regex = regex::Regex::new(pattern).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let hits = lines.iter().enumerate().filter(|(_, l)| regex.is_match(l)).map(|(i, _)| i).take(max_matches);
    hits.map(|i| {
        let before = (i.saturating_sub(context)..i).map(|j| j as u64 + 1).collect();
        let after = (i + 1..(i + 1 + context).min(lines.len())).map(|j| j as u64 + 1).collect();
        (i as u64 + 1, before, after)
    })
    .collect()
}

#[test]
fn skipping_blocks_finds_exactly_what_a_line_by_line_grep_finds() {
    let text: String = (0..12_000u32)
        .map(|i| match i % 997 {
            0 => format!("ERROR at {i}\n"),
            1 => "x\r\n".to_owned(),
            _ => format!("INFO line {i} é\n"),
        })
        .collect();
    let mut blobs = MemoryBlobs::default();
    let new = NewEntry { turn_id: "t".into(), step: 1, tool: "x".into(), summary: String::new(), ttl_seconds: 1 };
    let id = blobs.store(&FakeObservation::text(&text), new).unwrap();
    let entry = blobs.entry(&id).clone();
    for pattern in ["ERROR", "^x$", r"\Ax", "(?i)error at 3", r"(?-m)^INFO line 1199\d é$", "7 é$"] {
        for context in [0, 1, 3] {
            for chunk in [512, 8192] {
                let grep = Grep::new(pattern, 30, context).unwrap();
                let found = grep.run(&EntryReader::new(&blobs, &entry).with_chunk(chunk), 1 << 30).unwrap();
                let got: Vec<_> =
                    found.matches.iter().map(|m| (m.line.line, numbers(&m.before), numbers(&m.after))).collect();
                assert_eq!(
                    got,
                    naive(&text, pattern, 30, context as usize),
                    "{pattern} context {context} chunk {chunk}"
                );
            }
        }
    }
}

#[test]
fn patterns_anchored_to_the_haystack_or_turning_flags_off_are_searched_line_by_line() {
    assert!(block_safe("ERROR"));
    assert!(block_safe("(?i)^error$"));
    assert!(block_safe("(?x: a b )"));
    assert!(!block_safe(r"\Aabc"));
    assert!(!block_safe(r"abc\z"));
    assert!(!block_safe("(?-m)^abc"));
    assert!(!block_safe("(?i-R:abc)$"));
}
