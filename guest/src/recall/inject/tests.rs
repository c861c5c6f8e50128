//! The first turn's recall block (latest plan offered, matches, the newest, within the
//! budget) and the reminder after a compaction.

use scratchpad_plugin_sdk::{Access, Injection, Placement, Tokenizer};

use crate::recall::index::{NOTE, REF, document_id};
use crate::testing::{Harness, WordTokenizer, turn};

use super::*;

const PLAN_TEXT: &str = "1. Reproduce the tz bug\n2. Fix utils/time.rs";
const NOTE_TEXT: &str = "Root cause: tz offset applied twice";
const REF_TEXT: &str = "src/utils/time.rs";
const HOUR: u64 = 3_600_000;

fn tool(h: &mut Harness, arguments: serde_json::Value) {
    h.ok("session.scratchpad", &arguments.to_string());
}

fn later(h: &mut Harness, ms: u64) {
    h.clock.0.set(h.clock.0.get() + ms);
}

/// Session `s0` saved a plan, a note and a ref on 2024-03-01; session `s1` starts a day later.
fn after_an_earlier_session(json: &str) -> Harness {
    let mut h = Harness::new(json);
    h.index.session = "s0".into();
    tool(&mut h, serde_json::json!({"action": "set_plan", "content": PLAN_TEXT}));
    tool(&mut h, serde_json::json!({"action": "append_notes", "content": NOTE_TEXT}));
    tool(&mut h, serde_json::json!({"action": "refs.add", "ref": REF_TEXT}));
    h.next_session("s1");
    h
}

/// The block of a session's first turn, as if it had not been given one yet.
fn first_turn(h: &mut Harness, message: &str) -> Vec<Injection> {
    h.storage.entries.remove(crate::state::RECALL_OFFERED);
    h.pad().before_query(&turn(0), message)
}

fn block_of(h: &mut Harness, message: &str) -> String {
    let injections = first_turn(h, message);
    assert_eq!(injections.len(), 1, "{injections:?}");
    injections[0].text.clone()
}

fn lines(block: &str) -> Vec<&str> {
    block.lines().filter(|line| line.starts_with("- [")).collect()
}

#[test]
fn query_words_drop_short_and_common_words_and_repeats() {
    assert_eq!(query_words("Fix the tz offset bug, then fix it in v2 and 42!"), "fix offset bug v2 42");
    assert_eq!(query_words("ok? so: do it."), "");
    assert_eq!(query_words("Ünïcode wörds stay"), "ünïcode wörds stay");
    let many: String = (0..40).map(|i| format!("word{i} ")).collect();
    assert_eq!(query_words(&many).split(' ').count(), 32);
}

#[test]
fn the_first_turn_offers_the_latest_plan_then_the_matches_then_the_newest() {
    let mut h = after_an_earlier_session("{}");
    let injections = first_turn(&mut h, "Fix the tz offset bug");
    assert_eq!(injections.len(), 1);
    assert_eq!(injections[0].placement, Placement::AppendSystem);
    assert_eq!(
        injections[0].text,
        format!(
            "## What earlier sessions of this project left\n\
             (Found by recall; search more with recall_search, read one whole with recall_read.)\n\
             Latest plan, from session s0 on 2024-03-01 — offered, not adopted; copy it into your plan if it still \
             applies:\n\
             1. Reproduce the tz bug\n\
             2. Fix utils/time.rs\n\
             - [note · s0 · 2024-03-01] Root cause: tz offset applied twice ({})\n\
             - [ref · s0 · 2024-03-01] src/utils/time.rs ({})",
            document_id(NOTE, NOTE_TEXT),
            document_id(REF, REF_TEXT)
        )
    );
}

#[test]
fn the_latest_plan_is_offered_never_adopted() {
    let mut h = after_an_earlier_session("{}");
    assert!(block_of(&mut h, "Fix the tz offset bug").contains(PLAN_TEXT));
    assert_eq!(h.text("plan"), "");
    let written: Vec<&String> = h.storage.entries.keys().collect();
    assert_eq!(written, [crate::state::RECALL_OFFERED], "only the mark that the block was given");
    let turn_1 = h.pad().before_query(&turn(1), "go on");
    assert!(turn_1.is_empty(), "no scratchpad block, no recall block: {turn_1:?}");
}

#[test]
fn superseded_plans_are_not_injected() {
    let mut h = Harness::new("{}");
    h.index.session = "s0".into();
    tool(&mut h, serde_json::json!({"action": "set_plan", "content": "1. Try the cache fix"}));
    later(&mut h, HOUR);
    tool(&mut h, serde_json::json!({"action": "set_plan", "content": "1. Revert the cache fix\n2. Profile"}));
    h.next_session("s1");
    let block = block_of(&mut h, "the cache fix");
    assert!(block.contains("still applies:\n1. Revert the cache fix\n2. Profile"), "{block}");
    assert!(!block.contains("Try the cache fix"), "{block}");
    assert!(lines(&block).is_empty(), "{block}");
}

#[test]
fn a_session_with_a_plan_of_its_own_is_offered_none() {
    let mut h = after_an_earlier_session("{}");
    h.storage.set("plan", b"1. inherited").unwrap();
    let injections = first_turn(&mut h, "Fix the tz offset bug");
    assert_eq!(injections.len(), 2, "the scratchpad's block, then recall's: {injections:?}");
    let block = &injections[1].text;
    assert!(!block.contains("Latest plan") && lines(block).len() == 2, "{block}");
}

#[test]
fn without_matching_words_the_newest_documents_fill_the_block_newest_first() {
    let mut h = Harness::new(r#"{"recall": {"maxHits": 2}}"#);
    h.index.session = "s0".into();
    for note in ["first note", "second note", "third note"] {
        tool(&mut h, serde_json::json!({"action": "append_notes", "content": note}));
        later(&mut h, HOUR);
    }
    h.next_session("s1");
    let block = block_of(&mut h, "ok?");
    let shown: Vec<&str> = lines(&block).iter().map(|line| line.split("] ").nth(1).unwrap()).collect();
    assert_eq!(shown.len(), 2, "{block}");
    assert!(shown[0].starts_with("third note") && shown[1].starts_with("second note"), "{block}");
}

#[test]
fn matches_come_first_and_the_fill_adds_no_duplicates() {
    let mut h = Harness::new("{}");
    h.index.session = "s0".into();
    for note in ["old: the parser drops unicode", "newer: flaky CI on macOS", "newest: docs typo"] {
        tool(&mut h, serde_json::json!({"action": "append_notes", "content": note}));
        later(&mut h, HOUR);
    }
    h.next_session("s1");
    let block = block_of(&mut h, "Why does the parser drop unicode?");
    let shown: Vec<&str> = lines(&block).iter().map(|line| line.split("] ").nth(1).unwrap()).collect();
    assert_eq!(shown.len(), 3, "{block}");
    assert!(shown[0].starts_with("old: the parser") && shown[1].starts_with("newest") && shown[2].starts_with("newer"));
}

#[test]
fn the_block_fits_the_budget_and_a_tiny_budget_drops_lines() {
    let mut h = Harness::new("{}");
    h.index.session = "s0".into();
    for i in 0..6 {
        tool(&mut h, serde_json::json!({"action": "append_notes", "content": format!("note {i} about the offset")}));
    }
    h.next_session("s1");
    let all = lines(&block_of(&mut h, "offset")).len();
    assert_eq!(all, 6);
    let header = WordTokenizer.count(&format!("{HEADING}\n{INTRO}"));
    let line_cost = 12; // `- [note · s0 · 2024-03-01] note 0 about the offset (note:…)`
    for budget in [header + line_cost, header + 2 * line_cost + 1, header + 5 * line_cost] {
        h.config.recall.budget_tokens = budget;
        let block = block_of(&mut h, "offset");
        assert!(WordTokenizer.count(&block) <= budget, "{budget}: {block}");
        assert_eq!(lines(&block).len() as u32, (budget - header) / line_cost, "{budget}: {block}");
    }
    h.config.recall.budget_tokens = header + line_cost - 1;
    assert!(first_turn(&mut h, "offset").is_empty(), "no block when no line fits");
}

#[test]
fn a_plan_too_long_for_the_budget_is_cut_with_a_pointer_to_the_whole() {
    let plan: String = (1..=60).map(|i| format!("{i}. step number {i}\n")).collect();
    let mut h = Harness::new(r#"{"recall": {"budgetTokens": 120}}"#);
    h.index.session = "s0".into();
    tool(&mut h, serde_json::json!({"action": "set_plan", "content": plan}));
    tool(&mut h, serde_json::json!({"action": "append_notes", "content": "a note about step 3"}));
    h.next_session("s1");
    let block = block_of(&mut h, "step 3");
    assert!(WordTokenizer.count(&block) <= 120, "{block}");
    let plan_id = document_id("plan", &plan);
    assert!(block.contains(&format!("… (cut; recall_read {plan_id} gives the whole plan)")), "{block}");
    assert!(block.contains("still applies:\n1. step number 1\n2. step number 2\n"), "{block}");
    assert_eq!(lines(&block).len(), 1, "the note still fits: {block}");
}

#[test]
fn no_block_after_the_first_turn_without_access_without_budget_or_without_earlier_sessions() {
    let mut h = after_an_earlier_session("{}");
    assert!(h.pad().before_query(&turn(1), "Fix the tz offset bug").is_empty());
    h.index.access = Access::None;
    assert!(first_turn(&mut h, "Fix the tz offset bug").is_empty());
    let mut h = after_an_earlier_session(r#"{"recall": {"budgetTokens": 0}}"#);
    assert!(first_turn(&mut h, "Fix the tz offset bug").is_empty());
    let mut h = after_an_earlier_session(r#"{"recall": {"enabled": false}}"#);
    assert!(first_turn(&mut h, "Fix the tz offset bug").is_empty());
    let mut h = Harness::new("{}");
    tool(&mut h, serde_json::json!({"action": "append_notes", "content": "this session's own note"}));
    h.storage = Default::default();
    assert!(first_turn(&mut h, "own note").is_empty(), "the session's own documents are not earlier sessions'");
}

#[test]
fn read_only_access_still_gets_the_block() {
    let mut h = after_an_earlier_session("{}");
    h.index.access = Access::Read;
    assert!(block_of(&mut h, "Fix the tz offset bug").contains(PLAN_TEXT));
}

#[test]
fn a_system_placement_is_kept_for_the_block() {
    let mut h = after_an_earlier_session(r#"{"placement": "prepend-system"}"#);
    let injections = first_turn(&mut h, "Fix the tz offset bug");
    // The notepad section (empty) and the block, both before the system prompt.
    assert_eq!(injections.len(), 2);
    assert_eq!(injections[1].placement, Placement::PrependSystem);
    assert!(injections[1].text.starts_with(HEADING));
}

#[test]
fn after_a_compaction_the_next_turn_reminds_of_recall_search_once() {
    let mut h = Harness::new("{}");
    h.pad().after_compaction(&turn(7));
    let injections = h.pad().before_query(&turn(8), "go on");
    assert_eq!(injections.len(), 1);
    assert_eq!((injections[0].placement, injections[0].text.as_str()), (Placement::PrependContext, COMPACTION_HINT));
    assert!(h.pad().before_query(&turn(9), "go on").is_empty(), "once");
    assert!(h.storage.entries.is_empty());
    h.index.access = Access::None;
    h.pad().after_compaction(&turn(9));
    assert!(h.storage.entries.is_empty() && h.pad().before_query(&turn(10), "go on").is_empty());
}

#[test]
fn a_session_resumed_in_its_first_turn_is_not_given_the_block_again() {
    let mut h = after_an_earlier_session("{}");
    let block = block_of(&mut h, "tz bug");
    assert!(block.contains(NOTE_TEXT), "{block}");
    // A runtime that rebuilds its prompt for every model call of the turn asks again with the
    // user's message: every request of the first turn carries the block.
    let rebuilt = h.pad().before_query(&turn(0), "tz bug");
    assert!(rebuilt.iter().any(|i| i.text.contains(NOTE_TEXT)), "{rebuilt:?}");
    // A resumed session is handed its scratchpad again in the turn it is still in (its first),
    // with no message: the block stays in its history, and is not given twice.
    let again = h.pad().before_query(&turn(0), "");
    assert!(again.iter().all(|i| !i.text.contains("earlier sessions")), "{again:?}");
}
