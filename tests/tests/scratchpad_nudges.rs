//! The session scratchpad's auto-trigger nudges: all off by default, each opt-in
//! trigger fires once per occasion as a `[Hint: ...]` line before the scratchpad block of the
//! next user message — through before_query, after_response and after_compaction of the real
//! host, the real component and a real SQLite file.

use scratchpad_host::{Host, Origin};
use scratchpad_tests::{Fixture, dump, scratchpad, turn};
use serde_json::{Value, json};

const TOOL: &str = "session.scratchpad";
const START: &str = "[Session Scratchpad - your persistent working memory]";
const END: &str = "[End Scratchpad]";

/// A host with the scratchpad configured by `config` and one session, `s`.
async fn session(config: Value) -> (Fixture, Host) {
    let fx = Fixture::new();
    let host = fx.open(vec![scratchpad(config)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    (fx, host)
}

const PLAN_REPLY: &str = "Here is my plan:\n1. Fix auth bug\n2. Add test\n3. Update docs";

/// The `[Hint: ...]` lines injected at the start of turn `turn_id`.
async fn hints(host: &Host, turn_id: &str) -> Vec<String> {
    let prompt = host.before_query(&turn("s", turn_id), "continue").await.unwrap();
    prompt.injections.into_iter().map(|i| i.text).filter(|t| t.starts_with("[Hint: ")).collect()
}

/// Turns `t{from}`..`t{to}` (host turn indexes `from`..`to` in a fresh session), each with
/// the hints it got.
async fn hints_per_turn(host: &Host, turns: std::ops::Range<u32>) -> Vec<(u32, Vec<String>)> {
    let mut seen = Vec::new();
    for i in turns {
        seen.push((i, hints(host, &format!("t{i}")).await));
    }
    seen
}

fn fired_at(seen: &[(u32, Vec<String>)]) -> Vec<u32> {
    let fired = seen.iter().filter(|(_, h)| !h.is_empty());
    fired
        .map(|(i, h)| {
            assert_eq!(h.len(), 1, "one hint per occasion: {h:?}");
            *i
        })
        .collect()
}

#[tokio::test]
async fn nudges_are_off_by_default() {
    let (fx, host) = session(json!({})).await;
    for i in 0..8 {
        let t = turn("s", &format!("t{i}"));
        assert!(hints(&host, &t.turn_id).await.is_empty(), "turn {i}");
        host.after_response(&t, PLAN_REPLY).await.unwrap();
        host.after_compaction(&t).await.unwrap();
    }
    assert!(dump(&fx.db(), "s").is_empty(), "no trigger state is even recorded");
}

#[tokio::test]
async fn after_turns_nudges_once_when_the_scratchpad_is_still_empty_after_n_turns() {
    let (_fx, host) = session(json!({"nudgeAfterTurns": 3})).await;
    let seen = hints_per_turn(&host, 0..8).await;
    assert_eq!(fired_at(&seen), [3]);
    let hint = &seen[3].1[0];
    assert!(hint.starts_with("[Hint: Your scratchpad is still empty after 3 turns."), "{hint}");
    assert!(hint.contains("session.scratchpad") && hint.ends_with(']'), "{hint}");
}

#[tokio::test]
async fn after_turns_stays_quiet_when_the_scratchpad_has_content() {
    let (_fx, host) = session(json!({"nudgeAfterTurns": 2})).await;
    host.call_tool(&turn("s", "t0"), TOOL, r#"{"action":"refs.add","ref":"a.rs"}"#).await.unwrap();
    assert!(fired_at(&hints_per_turn(&host, 1..6).await).is_empty());
}

#[tokio::test]
async fn a_plan_in_the_reply_nudges_once_on_the_next_turn_while_the_scratchpad_is_empty() {
    let (_fx, host) = session(json!({"nudgeOnPlanDetected": 1})).await;
    assert!(hints(&host, "t0").await.is_empty());
    host.after_response(&turn("s", "t0"), PLAN_REPLY).await.unwrap();
    let hint = hints(&host, "t1").await;
    assert_eq!(hint.len(), 1);
    assert!(hint[0].contains("contained a plan") && hint[0].contains("\"set_plan\""), "{}", hint[0]);
    assert!(hints(&host, "t2").await.is_empty(), "once per occasion");

    // Prose is not a plan; and once the scratchpad has content, plans need no nudge.
    host.after_response(&turn("s", "t2"), "The root cause is a timezone mismatch.").await.unwrap();
    assert!(hints(&host, "t3").await.is_empty());
    host.call_tool(&turn("s", "t3"), TOOL, r#"{"action":"set_plan","content":"1. a"}"#).await.unwrap();
    host.after_response(&turn("s", "t3"), "Step 1: read. Step 2: patch.").await.unwrap();
    assert!(hints(&host, "t4").await.is_empty());
}

#[tokio::test]
async fn compaction_nudges_once_on_the_turn_after_each_compaction() {
    let (_fx, host) = session(json!({"nudgeAfterCompaction": 1})).await;
    let mut fired = Vec::new();
    for i in 0..6u32 {
        let t = turn("s", &format!("t{i}"));
        if !hints(&host, &t.turn_id).await.is_empty() {
            fired.push(i);
        }
        if i == 1 || i == 3 {
            host.after_compaction(&t).await.unwrap();
        }
    }
    assert_eq!(fired, [2, 4]);
    assert_eq!(host.session("s").await.unwrap().compaction_count, 2);
}

#[tokio::test]
async fn turns_since_last_use_nudges_once_per_stretch_without_an_update() {
    let (_fx, host) = session(json!({"nudgeTurnsSinceLastUse": 2})).await;
    let write = r#"{"action":"append_notes","content":"finding"}"#;
    let mut fired = Vec::new();
    for i in 0..9u32 {
        let t = turn("s", &format!("t{i}"));
        let hint = hints(&host, &t.turn_id).await;
        if let Some(hint) = hint.first() {
            assert!(hint.starts_with("[Hint: Your scratchpad has not been updated in 2 turns."), "{hint}");
            fired.push(i);
        }
        if i == 0 || i == 4 {
            host.call_tool(&t, TOOL, write).await.unwrap();
        }
    }
    assert_eq!(fired, [2, 6], "once after each write's stretch of 2 quiet turns");
}

#[tokio::test]
async fn hints_come_before_the_scratchpad_block_and_the_message_stays_last() {
    let (_fx, host) = session(json!({"nudgeAfterCompaction": 1})).await;
    host.call_tool(&turn("s", "t0"), TOOL, r#"{"action":"set_plan","content":"1. a"}"#).await.unwrap();
    host.after_compaction(&turn("s", "t0")).await.unwrap();
    let user = host.before_query(&turn("s", "t1"), "what's next?").await.unwrap().render("", "what's next?").user;
    let (hint, block) = (user.find("[Hint: The conversation was just compacted").unwrap(), user.find(START).unwrap());
    assert!(hint < block, "{user}");
    assert!(user.ends_with(&format!("{END}\n\nwhat's next?")), "{user}");
}

#[tokio::test]
async fn a_forked_session_counts_turns_since_last_use_in_its_own_turns() {
    let (_fx, host) = session(json!({"nudgeTurnsSinceLastUse": 2})).await;
    for i in 0..10 {
        hints(&host, &format!("t{i}")).await;
    }
    host.call_tool(&turn("s", "t9"), TOOL, r#"{"action":"set_plan","content":"1. a"}"#).await.unwrap();
    host.create_session("fork", Origin::Fork { parent: "s".into() }).await.unwrap();

    let mut fired = Vec::new();
    for i in 0..5u32 {
        let prompt = host.before_query(&turn("fork", &format!("t{i}")), "go").await.unwrap();
        if prompt.injections.iter().any(|inj| inj.text.starts_with("[Hint: Your scratchpad has not been updated")) {
            fired.push(i);
        }
    }
    assert_eq!(fired, [2], "the copy counts as written when the fork starts, not at the parent's turn 9");
}
