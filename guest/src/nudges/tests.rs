//! The session scratchpad's nudges: each fires once per occasion, as `[Hint: ...]` injections before the
//! block, at the block's placement.

use scratchpad_plugin_sdk::Placement;

use crate::recall::inject::COMPACTION_HINT;
use crate::testing::{Harness, turn};

fn texts(h: &mut Harness, index: u32) -> Vec<String> {
    h.pad().before_query(&turn(index), "msg").into_iter().map(|i| i.text).collect()
}

/// The scratchpad's own hints (recall's reminder after a compaction is tested with recall).
fn hints(h: &mut Harness, index: u32) -> Vec<String> {
    texts(h, index).into_iter().filter(|t| t.starts_with("[Hint: ") && t != COMPACTION_HINT).collect()
}

fn write(h: &mut Harness, index: u32) {
    h.pad().call_tool(&turn(index), "session.scratchpad", r#"{"action": "set_notes", "content": "n"}"#).unwrap();
}

#[test]
fn nudges_are_off_by_default() {
    let mut h = Harness::new("{}");
    for i in 0..30 {
        h.pad().after_response(&turn(i), "1. a\n2. b\n3. c");
        h.pad().after_compaction(&turn(i));
        assert!(hints(&mut h, i).is_empty());
    }
    assert!(h.storage.entries.is_empty());
}

#[test]
fn after_turns_fires_once_when_still_empty_at_turn_n() {
    let mut h = Harness::new(r#"{"nudgeAfterTurns": 3}"#);
    for i in 0..3 {
        assert!(hints(&mut h, i).is_empty(), "turn {i}");
    }
    let fired = hints(&mut h, 3);
    assert_eq!(fired.len(), 1);
    assert!(fired[0].starts_with("[Hint: Your scratchpad is still empty after 3 turns.") && fired[0].ends_with(']'));
    assert!(fired[0].contains("session.scratchpad"));
    for i in 4..10 {
        assert!(hints(&mut h, i).is_empty(), "turn {i}");
    }
}

#[test]
fn after_turns_does_not_fire_when_the_scratchpad_has_content() {
    let mut h = Harness::new(r#"{"nudgeAfterTurns": 2}"#);
    write(&mut h, 0);
    assert!(hints(&mut h, 2).is_empty());
}

#[test]
fn a_detected_plan_while_empty_gives_one_hint_on_the_next_turn() {
    let mut h = Harness::new(r#"{"nudgeOnPlanDetected": 1}"#);
    h.pad().after_response(&turn(0), "Plan:\n1. Fix auth bug\n2. Add test\n3. Update docs");
    let fired = hints(&mut h, 1);
    assert_eq!(fired.len(), 1);
    assert!(fired[0].contains("contained a plan") && fired[0].contains("\"set_plan\""), "{}", fired[0]);
    assert!(hints(&mut h, 2).is_empty());
    // Another reply with a plan is another occasion.
    h.pad().after_response(&turn(2), "Step 1: read. Step 2: write.");
    assert_eq!(hints(&mut h, 3).len(), 1);
}

#[test]
fn a_detected_plan_is_ignored_when_the_scratchpad_has_content() {
    let mut h = Harness::new(r#"{"nudgeOnPlanDetected": 1}"#);
    write(&mut h, 0);
    let before = h.storage.clone();
    h.pad().after_response(&turn(0), "1. a\n2. b\n3. c");
    assert_eq!(h.storage, before);
    assert!(hints(&mut h, 1).is_empty());
}

#[test]
fn a_pending_plan_hint_is_dropped_if_the_plan_was_saved_meanwhile() {
    let mut h = Harness::new(r#"{"nudgeOnPlanDetected": 1}"#);
    h.pad().after_response(&turn(0), "- [ ] a\n- [ ] b\n- [ ] c");
    write(&mut h, 0);
    assert!(hints(&mut h, 1).is_empty());
    assert!(hints(&mut h, 2).is_empty());
}

#[test]
fn prose_replies_never_arm_the_plan_hint() {
    let mut h = Harness::new(r#"{"nudgeOnPlanDetected": 1}"#);
    h.pad().after_response(&turn(0), "Done. The tests pass.");
    assert!(hints(&mut h, 1).is_empty());
}

#[test]
fn after_compaction_fires_once_after_each_compaction_even_with_content() {
    let mut h = Harness::new(r#"{"nudgeAfterCompaction": 1}"#);
    write(&mut h, 0);
    h.pad().after_compaction(&turn(4));
    let all: Vec<String> = texts(&mut h, 5).into_iter().filter(|t| t != COMPACTION_HINT).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all[0].starts_with("[Hint: The conversation was just compacted"));
    assert!(all[1].starts_with("[Session Scratchpad"), "the hint comes before the block");
    assert!(hints(&mut h, 6).is_empty());
    h.pad().after_compaction(&turn(6));
    assert_eq!(hints(&mut h, 7).len(), 1);
}

#[test]
fn turns_since_last_use_fires_once_per_stretch_without_updates() {
    let mut h = Harness::new(r#"{"nudgeTurnsSinceLastUse": 3}"#);
    assert!(hints(&mut h, 5).is_empty(), "no hint while empty");
    write(&mut h, 5);
    for i in 6..8 {
        assert!(hints(&mut h, i).is_empty(), "turn {i}");
    }
    let fired = hints(&mut h, 8);
    assert_eq!(fired.len(), 1);
    assert!(fired[0].starts_with("[Hint: Your scratchpad has not been updated in 3 turns."), "{}", fired[0]);
    for i in 9..15 {
        assert!(hints(&mut h, i).is_empty(), "turn {i}");
    }
    write(&mut h, 15);
    assert!(hints(&mut h, 17).is_empty());
    assert_eq!(hints(&mut h, 18).len(), 1);
}

#[test]
fn hints_use_the_block_placement_and_notepad_words_for_the_notepad_surface() {
    let mut h = Harness::new(r#"{"surfaces": ["notepad"], "placement": "append-system", "nudgeAfterTurns": 1}"#);
    let injections = h.pad().before_query(&turn(1), "msg");
    assert_eq!(injections.len(), 2);
    assert!(injections.iter().all(|i| i.placement == Placement::AppendSystem));
    assert!(injections[0].text.starts_with("[Hint: Your notepad is still empty after 1 turn."));
    assert!(injections[0].text.contains("write_notepad or update_notepad"));
    assert!(injections[1].text.starts_with("## Session Notepad\n(empty"));
}

#[test]
fn no_hints_when_no_surface_is_offered() {
    let mut h = Harness::new(r#"{"surfaces": [], "nudgeAfterTurns": 1, "nudgeAfterCompaction": 1}"#);
    h.pad().after_compaction(&turn(0));
    assert!(hints(&mut h, 1).is_empty());
}

#[test]
fn an_inheriting_session_counts_staleness_from_its_own_first_turn() {
    use scratchpad_plugin_sdk::{Origin, SessionInfo};
    let mut parent = Harness::new(r#"{"nudgeTurnsSinceLastUse": 2}"#);
    write(&mut parent, 0);
    assert_eq!(hints(&mut parent, 2).len(), 1, "the parent's hint fired for its write at turn 0");
    write(&mut parent, 9);
    // The host copies the parent's storage, then applies the hook's writes over it.
    let mut child = Harness::new(r#"{"nudgeTurnsSinceLastUse": 2}"#);
    child.storage = parent.storage.clone();
    let fork = SessionInfo { session_id: "child".into(), origin: Origin::Fork("s1".into()) };
    assert!(child.pad().before_session_create(&fork).inherit_parent_state);
    assert!(hints(&mut child, 0).is_empty() && hints(&mut child, 1).is_empty());
    assert_eq!(hints(&mut child, 2).len(), 1, "2 turns after the copy, not 2 turns after the parent's turn 9");
}
