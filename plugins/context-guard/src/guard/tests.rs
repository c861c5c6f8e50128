use scratchpad_plugin_sdk::{Placement, RecordedCheckpoints, Trigger};

use super::*;
use crate::config::{Delivery, Threshold};
use crate::testing::{Harness, turn};

fn texts(injections: &[Injection]) -> Vec<(Placement, String)> {
    injections.iter().map(|i| (i.placement, i.text.clone())).collect()
}

fn no_checkpoints() -> Config {
    Config { checkpoints: CheckpointMode::Off, ..Config::default() }
}

#[test]
fn the_context_line_goes_into_the_system_prompt() {
    let mut h = Harness::new(no_checkpoints());
    let out = h.query(&turn(0, Some(156_000)), "hi");
    assert_eq!(texts(&out)[0], (Placement::AppendSystem, "[Context: 156k/200k tokens (78%)]".to_owned()));
    let off = Config { show_context: false, ..no_checkpoints() };
    assert!(Harness::new(off).query(&turn(0, Some(1_000)), "hi").is_empty());
}

#[test]
fn each_flush_threshold_fires_once_per_cycle_and_rearms_after_compaction() {
    let mut h = Harness::new(Config { show_context: false, ..no_checkpoints() });
    assert!(h.query(&turn(0, Some(99_999)), "a").is_empty());
    assert_eq!(
        texts(&h.query(&turn(1, Some(100_000)), "b")),
        [(Placement::AppendSystem, crate::config::FLUSH_50.into())]
    );
    assert!(h.query(&turn(2, Some(120_000)), "c").is_empty(), "50 % is given once");
    assert_eq!(
        texts(&h.query(&turn(3, Some(150_000)), "d")),
        [(Placement::AppendSystem, crate::config::FLUSH_75.into())]
    );
    let urgent = h.query(&turn(4, Some(181_000)), "e");
    assert_eq!(texts(&urgent), [(Placement::AppendContext, crate::config::FLUSH_90.into())]);
    assert!(h.query(&turn(5, Some(190_000)), "f").is_empty());
    h.after_compaction(&turn(5, Some(190_000)));
    assert!(h.query(&turn(6, Some(40_000)), "g").is_empty());
    assert_eq!(h.query(&turn(7, Some(101_000)), "h").len(), 1, "re-armed after the compaction");
}

#[test]
fn without_the_runtimes_figure_usage_is_estimated_with_the_tokenizer() {
    let config = Config { context_window: Some(10), show_context: true, ..no_checkpoints() };
    let mut h = Harness::new(config);
    let mut t = turn(0, None);
    t.context_window = None;
    // Five words of a ten-token window: the 50 % flush.
    let out = h.query(&t, "one two three four five");
    assert_eq!(texts(&out)[0].1, "[Context: 5/10 tokens (50%)]");
    assert_eq!(out.len(), 2);
    // The reply adds two: 7 of 10 at the end of the turn, plus the next message's two: 90 %.
    h.respond(&t, "six seven");
    let mut next = turn(1, None);
    next.context_window = None;
    let out = h.query(&next, "eight nine");
    assert_eq!(texts(&out)[0].1, "[Context: 9/10 tokens (90%)]");
    assert!(out[1].text.contains("Context at 90%"));
}

#[test]
fn flush_actioned_is_true_only_after_a_memory_write_in_the_urgent_turn() {
    let mut h = Harness::new(no_checkpoints());
    h.query(&turn(0, Some(150_000)), "a");
    h.tool(&turn(0, Some(150_000)), "write", r#"{"path":"memory/x.md"}"#);
    assert_eq!(h.flush_actioned(), None, "only the urgent flush is tracked");
    h.query(&turn(1, Some(185_000)), "b");
    assert_eq!(h.flush_actioned(), Some("false"));
    h.tool(&turn(1, Some(185_000)), "write", r#"{"path":"src/lib.rs"}"#);
    h.tool(&turn(1, Some(185_000)), "read", r#"{"path":"memory/x.md"}"#);
    assert_eq!(h.flush_actioned(), Some("false"));
    h.tool(&turn(2, Some(185_000)), "write", r#"{"path":"memory/late.md"}"#);
    assert_eq!(h.flush_actioned(), Some("false"), "a write in a later turn does not count");
    let mut h2 = Harness::new(no_checkpoints());
    h2.query(&turn(1, Some(185_000)), "b");
    h2.tool(&turn(1, Some(185_000)), "edit", r#"{"path":"memory/2026-11-22.md"}"#);
    assert_eq!(h2.flush_actioned(), Some("true"));
}

#[test]
fn deliveries_follow_the_configuration() {
    let thresholds = vec![Threshold { percent: 10, prompt: "Note it.".into(), inject_as: Delivery::Marked }];
    let mut h = Harness::new(Config { thresholds, show_context: false, ..no_checkpoints() });
    let out = h.query(&turn(0, Some(30_000)), "a");
    assert_eq!(texts(&out), [(Placement::AppendContext, "[SYSTEM: memory flush]\nNote it.".to_owned())]);
}

#[test]
fn the_compaction_warning_needs_usage_past_window_minus_reserve() {
    let mut h = Harness::new(no_checkpoints());
    assert_eq!(h.before_compaction(&turn(0, Some(195_999))), None);
    assert_eq!(h.before_compaction(&turn(0, Some(196_000))).as_deref(), Some(crate::config::FLUSH_90));
    let mut notepad = Harness::new(Config { warning: Warning::Notepad, ..no_checkpoints() });
    let text = notepad.before_compaction(&turn(0, Some(199_000))).unwrap();
    assert!(text.starts_with("[System] Context is approaching the token limit"), "{text}");
    let mut unknown = Harness::new(no_checkpoints());
    assert_eq!(unknown.before_compaction(&turn(0, None)), None, "no figure at all: no claim");
}

#[test]
fn a_checkpoint_is_requested_at_25_percent_and_every_15_messages() {
    let mut h = Harness::new(Config { checkpoint_turns: 15, ..Config::default() });
    h.respond(&turn(0, Some(49_000)), "r");
    assert!(h.checkpoints.requests.is_empty());
    h.respond(&turn(1, Some(50_000)), "r");
    assert_eq!(h.checkpoints.requests.len(), 1);
    assert!(matches!(h.checkpoints.requests[0].trigger, Trigger::TokenPercent(25)));
    assert_eq!((h.checkpoints.requests[0].tokens, h.checkpoints.requests[0].message_count), (50_000, 2));
    for index in 2..16 {
        h.respond(&turn(index, Some(60_000)), "r");
    }
    assert_eq!(h.checkpoints.requests.len(), 1, "15 messages since the last checkpoint are not reached yet");
    h.respond(&turn(16, Some(60_000)), "r");
    assert_eq!(h.checkpoints.requests.len(), 2);
    assert!(matches!(h.checkpoints.requests[1].trigger, Trigger::MessageCount(15)));
}

#[test]
fn below_min_tokens_for_gen_no_checkpoint_is_requested() {
    let mut h = Harness::new(Config { min_tokens_for_gen: 10_000, ..Config::default() });
    for index in 0..40 {
        h.respond(&turn(index, Some(9_000)), "r");
    }
    assert!(h.checkpoints.requests.is_empty());
}

#[test]
fn auto_checkpoints_follow_the_hosts_summarizer_and_on_refuses_to_load_without_one() {
    let mut h = Harness::new(Config::default());
    h.checkpoints = RecordedCheckpoints { available: false, requests: Vec::new() };
    h.respond(&turn(0, Some(120_000)), "r");
    assert!(h.checkpoints.requests.is_empty() && h.warnings.is_empty(), "auto without a summarizer: quietly off");
    let on = Config { checkpoints: CheckpointMode::On, ..Config::default() };
    let err = load(&on, &RecordedCheckpoints::default()).unwrap_err();
    assert!(err.contains("no summarizer") && err.contains("checkpoint.enabled"), "{err}");
    assert!(load(&on, &RecordedCheckpoints { available: true, requests: Vec::new() }).is_ok());
    assert!(load(&Config::default(), &RecordedCheckpoints::default()).is_ok());
}

#[test]
fn disabled_does_nothing_and_stores_nothing() {
    let mut h = Harness::new(Config { enabled: false, ..Config::default() });
    assert!(h.query(&turn(0, Some(199_000)), "a").is_empty());
    h.respond(&turn(0, Some(199_000)), "r");
    assert_eq!(h.before_compaction(&turn(0, Some(199_000))), None);
    assert!(h.storage.inner.entries.is_empty() && h.storage.writes == 0 && h.checkpoints.requests.is_empty());
}

#[test]
fn a_call_that_changes_nothing_writes_nothing() {
    let mut h = Harness::new(Config { show_context: false, ..no_checkpoints() });
    h.query(&turn(0, Some(10)), "a");
    h.respond(&turn(0, Some(20)), "r");
    let writes = h.storage.writes;
    // The runtime gives its figures and no threshold is reached: the next turn's query and
    // every tool call are read-only (a hook that writes nothing commits nothing on the host).
    h.query(&turn(1, Some(30)), "b");
    h.tool(&turn(1, Some(30)), "write", r#"{"path":"memory/notes.md"}"#);
    h.tool(&turn(1, Some(30)), "exec", r#"{"cmd":"ls"}"#);
    assert_eq!(h.storage.writes, writes);
    // The end of the turn records the new figure: one write.
    h.respond(&turn(1, Some(40)), "r");
    assert_eq!(h.storage.writes, writes + 1);
    h.respond(&turn(1, Some(40)), "r");
    assert_eq!(h.storage.writes, writes + 1, "the same figure again changes nothing");
}
