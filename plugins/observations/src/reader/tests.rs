//! Chunked reads of an entry: every chunk size puts boundaries inside characters and lines,
//! and the results must not depend on where they fall.

use std::ops::ControlFlow;

use scratchpad_plugin_sdk::NewEntry;

use super::*;
use crate::testing::{FakeObservation, MemoryBlobs};

const CHUNKS: &[u32] = &[1, 2, 3, 5, 7, 64, SCAN_CHUNK];

fn store(blobs: &mut MemoryBlobs, observation: FakeObservation) -> Entry {
    let new =
        NewEntry { turn_id: "t1".into(), step: 1, tool: "fs_read".into(), summary: String::new(), ttl_seconds: 60 };
    let id = blobs.store(&observation, new).unwrap();
    blobs.entry(&id).clone()
}

fn text_entry(text: &str) -> (MemoryBlobs, Entry) {
    let mut blobs = MemoryBlobs::default();
    let entry = store(&mut blobs, FakeObservation::text(text));
    (blobs, entry)
}

#[test]
fn character_offsets_map_to_byte_offsets_from_either_end_with_any_chunk_size() {
    let text = "aé€😀\nb".repeat(7);
    let (blobs, entry) = text_entry(&text);
    assert!(!entry.ascii);
    let mut expected: Vec<u64> = text.char_indices().map(|(i, _)| i as u64).collect();
    expected.push(text.len() as u64);
    for &chunk in CHUNKS {
        let reader = EntryReader::new(&blobs, &entry).with_chunk(chunk);
        for (c, byte) in expected.iter().enumerate() {
            assert_eq!(reader.char_to_byte(c as u64).unwrap(), *byte, "char {c} with chunks of {chunk}");
        }
        assert_eq!(reader.char_to_byte(10_000).unwrap(), text.len() as u64, "past the end clamps");
    }
}

#[test]
fn ascii_entries_map_characters_to_bytes_without_reading() {
    let (blobs, entry) = text_entry(&"x".repeat(10_000));
    assert!(entry.ascii);
    let reader = EntryReader::new(&blobs, &entry);
    assert_eq!(reader.char_to_byte(7_777).unwrap(), 7_777);
    assert_eq!(blobs.requested.get(), 0);
}

#[test]
fn text_reads_whole_characters_and_stops_at_the_read_limit_on_a_boundary() {
    let text = "€€€€€"; // 3 bytes each
    let (blobs, entry) = text_entry(text);
    for &chunk in CHUNKS {
        let reader = EntryReader::new(&blobs, &entry).with_chunk(chunk);
        assert_eq!(reader.text(1, 4, 100).unwrap(), ("€€€".to_owned(), 4));
        assert_eq!(reader.text(1, 4, 7).unwrap(), ("€€".to_owned(), 3), "7 bytes hold two whole characters");
        assert_eq!(reader.text(0, 5, 2).unwrap(), (String::new(), 0), "2 bytes hold none");
    }
}

#[test]
fn lines_are_located_by_number_with_their_character_offsets() {
    let text = "é1\nline2\n\nlast";
    let (blobs, entry) = text_entry(text);
    for &chunk in CHUNKS {
        let reader = EntryReader::new(&blobs, &entry).with_chunk(chunk);
        let span = reader.lines(2, 3).unwrap();
        assert_eq!(span.start, Some(Position { byte: 4, char: 3 }));
        assert_eq!(span.end, Position { byte: 11, char: 10 });
        assert_eq!(span.total_lines, None, "the scan stops after the last line asked for");
        assert_eq!(reader.text_between(span.start.unwrap(), span.end, 100).unwrap().0, "line2\n\n");

        let to_end = reader.lines(4, 9).unwrap();
        assert_eq!(to_end.start, Some(Position { byte: 11, char: 10 }));
        assert_eq!(to_end.end, Position { byte: 15, char: 14 });
        assert_eq!(to_end.total_lines, Some(4));
        assert_eq!(reader.lines(5, 5).unwrap().start, None, "there is no line 5");
    }
}

#[test]
fn a_final_newline_does_not_start_another_line_and_an_empty_entry_has_none() {
    let (blobs, entry) = text_entry("a\nb\n");
    let reader = EntryReader::new(&blobs, &entry);
    assert_eq!(
        reader.lines(3, 3).unwrap(),
        LineSpan { start: None, end: Position { byte: 4, char: 4 }, total_lines: Some(2) }
    );
    let (blobs, entry) = text_entry("");
    let span = EntryReader::new(&blobs, &entry).lines(1, 1).unwrap();
    assert_eq!((span.start, span.total_lines), (None, Some(0)));
}

#[test]
fn every_line_is_visited_once_whatever_the_chunks_and_long_lines_are_capped() {
    let text = "short\n\nexactly ten\na line that is much longer than the cap\nlast";
    let (blobs, entry) = text_entry(text);
    for &chunk in CHUNKS {
        let reader = EntryReader::new(&blobs, &entry).with_chunk(chunk);
        let mut seen = Vec::new();
        reader
            .for_each_line(11, |n, line, cut| {
                seen.push((n, String::from_utf8(line.to_vec()).unwrap(), cut));
                ControlFlow::Continue(())
            })
            .unwrap();
        let expected = [
            (1, "short", false),
            (2, "", false),
            (3, "exactly ten", false),
            (4, "a line that", true),
            (5, "last", false),
        ];
        let expected: Vec<_> = expected.iter().map(|(n, l, c)| (*n, l.to_string(), *c)).collect();
        assert_eq!(seen, expected, "chunks of {chunk}");
    }
}

#[test]
fn a_line_scan_stops_when_the_visitor_breaks() {
    let (blobs, entry) = text_entry(&"line\n".repeat(400_000));
    let mut visited = 0;
    EntryReader::new(&blobs, &entry)
        .for_each_line(100, |n, _, _| {
            visited += 1;
            if n == 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
    assert_eq!(visited, 3);
    assert_eq!(blobs.requested.get(), u64::from(SCAN_CHUNK), "one chunk was enough");
}

#[test]
fn reads_never_ask_the_host_for_more_than_a_chunk() {
    let (blobs, entry) = text_entry(&"é".repeat(400_000));
    let reader = EntryReader::new(&blobs, &entry);
    assert_eq!(reader.text(399_990, 400_000, 1 << 30).unwrap().0, "é".repeat(10));
    reader.lines(1, 1).unwrap();
    assert!(blobs.largest_read.get() <= SCAN_CHUNK);
}

#[test]
fn an_entry_removed_meanwhile_is_not_found() {
    let (mut blobs, entry) = text_entry("gone");
    blobs.entries.clear();
    let error = EntryReader::new(&blobs, &entry).bytes(0, 4).unwrap_err();
    assert!(matches!(&error, ToolError::NotFound(m) if *m == not_found_message(&entry.id)), "{error:?}");
}
