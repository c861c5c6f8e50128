//! What gets indexed: plan versions once per text, each added note and ref, the latest
//! checkpoint once; only with read-write access; never at the cost of a tool call.

use scratchpad_plugin_sdk::{
    Access, Document, Hit, Index, IndexError, MemoryIndex, MemoryStorage, Query, Quota, Stored,
};

use crate::config::Config;
use crate::plugin::Scratchpad;
use crate::state::RECALL_CHECKPOINT;
use crate::testing::{DAY, Harness, LatestCheckpoint, MARCH_1_2024, TestClock, WordTokenizer, checkpoint, turn};

use super::*;

fn set_plan(h: &mut Harness, plan: &str) {
    h.ok("session.scratchpad", &serde_json::json!({"action": "set_plan", "content": plan}).to_string());
}

fn append(h: &mut Harness, note: &str) {
    h.ok("session.scratchpad", &serde_json::json!({"action": "append_notes", "content": note}).to_string());
}

fn texts(h: &Harness, kind: &str) -> Vec<String> {
    h.documents().into_iter().filter(|d| d.kind == kind).map(|d| d.text).collect()
}

#[test]
fn fnv1a64_is_the_standard_hash() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn an_id_is_the_kind_and_the_hash_of_the_text_with_whitespace_runs_as_one_space() {
    assert_eq!(document_id("plan", "1. Fix X"), "plan:20b862206871e865");
    assert_eq!(document_id("plan", "  1.\tFix\n X \n"), "plan:20b862206871e865");
    assert_eq!(document_id("note", "1. Fix X"), "note:20b862206871e865");
    assert_ne!(document_id("plan", "1. Fix Y"), "plan:20b862206871e865");
}

#[test]
fn notes_are_lines_with_a_word_titled_by_their_heading() {
    let found = notes("Root cause: tz\n\n## Findings\n- EMEA rows 234-267\n---\n  - dup  \n#42 is the bug\n#\nlast");
    assert_eq!(
        found,
        [
            Note { title: "Note", text: "Root cause: tz" },
            Note { title: "Findings", text: "- EMEA rows 234-267" },
            Note { title: "Findings", text: "- dup" },
            Note { title: "Findings", text: "#42 is the bug" },
            Note { title: "Note", text: "last" },
        ]
    );
}

#[test]
fn every_plan_version_is_indexed_once_per_text() {
    let mut h = Harness::new("{}");
    set_plan(&mut h, "1. Reproduce\n2. Fix");
    set_plan(&mut h, "1. Reproduce\n2. Fix");
    assert_eq!(h.ids("plan"), [document_id(PLAN, "1. Reproduce 2. Fix")]);
    h.clock.0.set(MARCH_1_2024 + DAY);
    set_plan(&mut h, "1. Reproduce\n2. Fix\n3. Test");
    assert_eq!(texts(&h, "plan"), ["1. Reproduce\n2. Fix", "1. Reproduce\n2. Fix\n3. Test"]);
    let plan = &h.index.documents[&document_id(PLAN, "1. Reproduce 2. Fix 3. Test")];
    assert_eq!((plan.title.as_str(), plan.session.as_str(), plan.at_ms), ("Plan", "s1", MARCH_1_2024 + DAY));
    // Clearing the plan indexes nothing and removes nothing.
    set_plan(&mut h, "");
    assert_eq!(h.ids("plan").len(), 2);
    // The first version again: still one document, now the newest.
    h.clock.0.set(MARCH_1_2024 + 2 * DAY);
    set_plan(&mut h, "1. Reproduce 2. Fix");
    assert_eq!(h.ids("plan").len(), 2);
    assert_eq!(h.documents().last().unwrap().text, "1. Reproduce 2. Fix");
}

#[test]
fn each_added_note_is_indexed_once_and_removed_notes_stay() {
    let mut h = Harness::new(r#"{"surfaces": ["scratchpad", "notepad"]}"#);
    append(&mut h, "## Findings");
    assert!(h.ids("note").is_empty(), "a heading alone is no note");
    append(&mut h, "- EMEA rows 234-267 missing");
    append(&mut h, "- tz offset wrong");
    let mut notes: Vec<(String, String)> =
        h.documents().into_iter().filter(|d| d.kind == "note").map(|d| (d.title, d.text)).collect();
    notes.sort();
    let note = |text: &str| ("Findings".to_string(), text.to_string());
    assert_eq!(notes, [note("- EMEA rows 234-267 missing"), note("- tz offset wrong")]);
    // Rewriting keeps what is already indexed and adds the new line only.
    h.ok("write_notepad", r###"{"content": "## Findings\n- tz offset wrong\nfixed in utils/time.rs"}"###);
    assert_eq!(h.ids("note").len(), 3);
    assert!(texts(&h, "note").contains(&"fixed in utils/time.rs".to_string()));
    h.ok("update_notepad", r#"{"operation": "delete", "content": "- tz offset wrong"}"#);
    assert_eq!(h.ids("note").len(), 3, "removing a note from the scratchpad leaves it in the index");
    h.ok("update_notepad", r#"{"operation": "find_replace", "find": "fixed", "replace": "Fixed"}"#);
    assert!(texts(&h, "note").contains(&"Fixed in utils/time.rs".to_string()));
}

#[test]
fn each_added_ref_is_indexed_and_removed_refs_stay() {
    let mut h = Harness::new("{}");
    h.ok("session.scratchpad", r#"{"action": "refs.add", "ref": "src/time.rs"}"#);
    h.ok("session.scratchpad", r#"{"action": "refs.set", "items": ["src/time.rs", "https://x/1", "JIRA-7"]}"#);
    h.ok("session.scratchpad", r#"{"action": "refs.remove", "ref": "JIRA-7"}"#);
    let mut refs = texts(&h, "ref");
    refs.sort();
    assert_eq!(refs, ["JIRA-7", "https://x/1", "src/time.rs"]);
    assert!(h.documents().iter().all(|d| d.title == "Ref" && d.id == document_id(REF, &d.text)));
}

#[test]
fn one_call_puts_at_most_the_hosts_limit() {
    let mut h = Harness::new(r#"{"refsMaxItems": 100}"#);
    let items: Vec<String> = (0..70).map(|i| format!("ref-{i}")).collect();
    h.ok("session.scratchpad", &serde_json::json!({"action": "refs.set", "items": items}).to_string());
    assert_eq!(h.ids("ref").len(), MAX_PUTS_PER_CALL);
}

#[test]
fn reading_and_failing_calls_index_nothing() {
    let mut h = Harness::new(r#"{"surfaces": ["notepad"]}"#);
    h.ok("read_notepad", "{}");
    h.err("update_notepad", r#"{"operation": "delete", "content": "absent"}"#);
    h.err("session.scratchpad", r#"{"action": "set_plan"}"#);
    assert!(h.index.documents.is_empty());
}

#[test]
fn the_latest_checkpoint_is_indexed_once_with_its_decisions_and_questions() {
    let mut h = Harness::new("{}");
    h.checkpoints.0 =
        Some(checkpoint("1709_ab12", MARCH_1_2024 - 5, "Fixed the tz bug.", &["keep UTC", "no chrono"], &["DST?"]));
    h.pad().before_query(&turn(3), "go on");
    let documents = h.documents();
    assert_eq!(documents.len(), 1);
    let indexed = &documents[0];
    assert_eq!(
        (indexed.id.as_str(), indexed.kind.as_str(), indexed.title.as_str()),
        ("checkpoint:1709_ab12", "checkpoint", "Checkpoint")
    );
    assert_eq!(indexed.text, "Fixed the tz bug.\nDecisions: keep UTC; no chrono\nOpen questions: DST?");
    assert_eq!(indexed.at_ms, MARCH_1_2024 - 5, "dated when the checkpoint was stored");
    assert_eq!(h.text(RECALL_CHECKPOINT), "1709_ab12");
    // Not put again for the same checkpoint, even when the index lost it.
    h.index.documents.clear();
    h.pad().before_query(&turn(4), "go on");
    assert!(h.index.documents.is_empty());
    h.checkpoints.0 = Some(checkpoint("1710_cd34", MARCH_1_2024, "Then the DST case.", &[], &[]));
    h.pad().before_query(&turn(5), "go on");
    assert_eq!(texts(&h, "checkpoint"), ["Then the DST case."]);
}

#[test]
fn read_only_access_indexes_nothing() {
    let mut h = Harness::new("{}");
    h.index.access = Access::Read;
    h.checkpoints.0 = Some(checkpoint("1709_ab12", MARCH_1_2024, "Summary.", &[], &[]));
    set_plan(&mut h, "1. a");
    append(&mut h, "a note");
    h.pad().before_query(&turn(1), "go on");
    assert!(h.index.documents.is_empty());
    assert_eq!(h.text(RECALL_CHECKPOINT), "", "nothing remembered as indexed");
}

#[test]
fn disabled_recall_indexes_nothing() {
    let mut h = Harness::new(r#"{"recall": {"enabled": false}}"#);
    h.checkpoints.0 = Some(checkpoint("1709_ab12", MARCH_1_2024, "Summary.", &[], &[]));
    set_plan(&mut h, "1. a");
    h.pad().before_query(&turn(1), "go on");
    assert!(h.index.documents.is_empty());
}

/// An index whose every write is over the quota.
struct FullIndex(MemoryIndex);

impl Index for FullIndex {
    fn access(&self) -> Access {
        self.0.access()
    }
    fn put(&mut self, _document: Document) -> Result<(), IndexError> {
        Err(IndexError::QuotaExceeded(Quota { used: 10, requested: 5, limit: 10 }))
    }
    fn remove(&mut self, id: &str) -> Result<bool, IndexError> {
        self.0.remove(id)
    }
    fn get(&self, id: &str) -> Option<Stored> {
        self.0.get(id)
    }
    fn search(&self, query: &Query) -> Result<Vec<Hit>, IndexError> {
        self.0.search(query)
    }
    fn recent(&self, kind: Option<&str>, other_sessions: bool, limit: u32) -> Result<Vec<Stored>, IndexError> {
        self.0.recent(kind, other_sessions, limit)
    }
}

#[test]
fn an_index_error_is_a_warning_and_the_tool_call_succeeds() {
    let (config, mut storage, clock) = (Config::default(), MemoryStorage::default(), TestClock(MARCH_1_2024.into()));
    let (mut index, checkpoints) = (FullIndex(MemoryIndex::new("s1")), LatestCheckpoint::default());
    let mut pad = Scratchpad::new(&mut storage, &WordTokenizer, &config).with_recall(&mut index, &checkpoints, &clock);
    let output = pad.call_tool(&turn(0), "session.scratchpad", r#"{"action": "refs.set", "items": ["a", "b"]}"#);
    assert!(output.unwrap().content.starts_with("Refs set (2 items)."));
    let warnings = pad.take_warnings();
    assert_eq!(warnings.len(), 1, "the first refusal stops the call's indexing: {warnings:?}");
    assert!(warnings[0].starts_with("recall: indexing `ref:") && warnings[0].contains("QuotaExceeded"));
    assert!(pad.take_warnings().is_empty());
    assert_eq!(crate::state::read_refs(&storage), ["a", "b"]);
}
