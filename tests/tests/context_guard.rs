//! The context-pressure policy: the context-guard component through the real host and a real database
//! (each test on SQLite and on PostgreSQL) — memory flush at 50 / 75 / 90 %, flushActioned,
//! the context line, the pre-compaction warning, and rolling checkpoints written by the
//! embedder's summarizer.

use std::sync::{Arc, Mutex};

use scratchpad_host::{
    CheckpointTrigger, Error, Host, HostConfig, Limits, Placement, PluginSpec, Summarizer, Summary, SummaryFuture,
    SummaryRequest, ToolCall, TurnContext,
};
use scratchpad_tests::Fixture;
use serde_json::json;

scratchpad_tests::on_both_backends!(
    each_flush_threshold_fires_once_per_compaction_cycle_and_rearms_after_compaction,
    each_delivery_mode_maps_onto_its_placement,
    the_context_line_shows_usage_in_the_system_prompt,
    flush_actioned_records_whether_the_agent_wrote_memory_after_the_urgent_flush,
    the_pre_compaction_warning_comes_when_usage_reaches_the_window_minus_the_reserve,
    checkpoints_are_written_at_token_thresholds_and_every_15_messages,
    no_checkpoint_is_made_below_min_tokens_for_gen,
    the_compaction_fast_path_uses_a_checkpoint_covering_more_than_half_the_tokens,
    checkpoints_on_without_a_summarizer_refuse_to_load_with_a_clear_error,
    a_failing_summarizer_is_reported_and_the_turn_is_kept,
    without_the_runtimes_figures_usage_is_estimated_with_the_hosts_tokenizer,
);

const WINDOW: u64 = 200_000;

/// A summarizer standing in for the runtime's model: it records each request and writes a
/// summary that says what it was asked, or fails when told to.
#[derive(Clone, Default)]
struct TestSummarizer {
    requests: Arc<Mutex<Vec<SummaryRequest>>>,
    fail: bool,
}

impl Summarizer for TestSummarizer {
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(request.clone());
            if self.fail {
                anyhow::bail!("the checkpoint model is unavailable");
            }
            Ok(Summary {
                summary: format!("{} messages at {} tokens", request.message_count, request.tokens),
                topics: vec!["session persistence".into()],
                key_decisions: vec!["use JSONL".into()],
                open_questions: vec!["concurrent writes?".into()],
            })
        })
    }
}

fn guard(config: serde_json::Value) -> PluginSpec {
    let limits = Limits { call_timeout: std::time::Duration::from_secs(5), ..Limits::default() };
    PluginSpec::embedded("context-guard").with_config(config).with_limits(limits)
}

async fn open(fx: &Fixture, config: serde_json::Value, summarizer: Option<TestSummarizer>) -> Host {
    let mut host_config: HostConfig = fx.config(vec![guard(config)]);
    host_config.summarizer = summarizer.map(|s| Arc::new(s) as Arc<dyn Summarizer>);
    let host = Host::open(host_config).await.expect("opening the host");
    if host.session("s").await.is_err() {
        host.create_session("s", scratchpad_host::Origin::New).await.unwrap();
    }
    host
}

fn at(turn: u32, used: u64) -> TurnContext {
    TurnContext::new("s", format!("t{turn}")).with_tokens(used, WINDOW)
}

/// The texts injected at `placement` in turn `turn` at `used` tokens.
async fn injected(host: &Host, turn: u32, used: u64, placement: Placement) -> Vec<String> {
    let prompt = host.before_query(&at(turn, used), "go on").await.unwrap();
    prompt.at(placement).map(|i| i.text.clone()).collect()
}

async fn each_flush_threshold_fires_once_per_compaction_cycle_and_rearms_after_compaction(fx: Fixture) {
    let host = open(&fx, json!({ "showContext": false }), None).await;
    assert!(injected(&host, 0, 99_999, Placement::AppendSystem).await.is_empty());
    assert_eq!(
        injected(&host, 1, 100_000, Placement::AppendSystem).await,
        ["Context at 50%. Consider noting key decisions to memory."]
    );
    assert!(injected(&host, 2, 110_000, Placement::AppendSystem).await.is_empty(), "50 % fires once");
    assert_eq!(
        injected(&host, 3, 150_000, Placement::AppendSystem).await,
        ["Context at 75%. Write important context to memory/YYYY-MM-DD.md now."]
    );
    let urgent = injected(&host, 4, 180_000, Placement::AppendContext).await;
    assert_eq!(urgent.len(), 1);
    assert!(urgent[0].starts_with("[SYSTEM: pre-compaction memory flush]\nContext at 90%. Compaction imminent."));
    assert!(urgent[0].ends_with("If nothing to store, reply with NO_REPLY."));
    assert!(injected(&host, 5, 190_000, Placement::AppendContext).await.is_empty(), "90 % fires once");

    // The state survives a restart of the host: nothing fires again in this cycle.
    drop(host);
    let host = open(&fx, json!({ "showContext": false }), None).await;
    assert!(injected(&host, 6, 195_000, Placement::AppendContext).await.is_empty());

    host.after_compaction(&at(6, 195_000)).await.unwrap();
    assert!(injected(&host, 7, 60_000, Placement::AppendSystem).await.is_empty());
    assert_eq!(injected(&host, 8, 101_000, Placement::AppendSystem).await.len(), 1, "re-armed by the compaction");
}

async fn each_delivery_mode_maps_onto_its_placement(fx: Fixture) {
    let thresholds = json!([
        { "percent": 10, "prompt": "Ten.", "injectAs": "system" },
        { "percent": 20, "prompt": "Twenty.", "injectAs": "user" },
        { "percent": 30, "prompt": "Thirty." }
    ]);
    let host = open(&fx, json!({ "showContext": false, "memoryFlush": { "thresholds": thresholds } }), None).await;
    assert_eq!(injected(&host, 0, 20_000, Placement::AppendSystem).await, ["Ten."]);
    assert_eq!(injected(&host, 1, 40_000, Placement::AppendContext).await, ["Twenty."]);
    let prompt = host.before_query(&at(2, 60_000), "next").await.unwrap();
    assert_eq!(prompt.text(Placement::AppendContext), "[SYSTEM: memory flush]\nThirty.");
    let rendered = prompt.render("You are an agent.", "next");
    assert_eq!(rendered.user, "next\n\n[SYSTEM: memory flush]\nThirty.", "the user's message itself is untouched");
}

async fn the_context_line_shows_usage_in_the_system_prompt(fx: Fixture) {
    let host = open(&fx, json!({ "memoryFlush": { "enabled": false } }), None).await;
    assert_eq!(injected(&host, 0, 156_000, Placement::AppendSystem).await, ["[Context: 156k/200k tokens (78%)]"]);
    let quiet = open(&Fixture::new(), json!({ "showContext": false, "memoryFlush": { "enabled": false } }), None).await;
    assert!(injected(&quiet, 0, 156_000, Placement::AppendSystem).await.is_empty());
}

async fn flush_actioned(host: &Host) -> Option<serde_json::Value> {
    host.metadata("s").await.unwrap().into_iter().find(|m| m.key == "flushActioned").map(|m| m.value)
}

async fn flush_actioned_records_whether_the_agent_wrote_memory_after_the_urgent_flush(fx: Fixture) {
    let host = open(&fx, json!({}), None).await;
    host.before_query(&at(0, 185_000), "go on").await.unwrap();
    assert_eq!(flush_actioned(&host).await, Some(json!(false)));
    // Other writes and reads do not count; the call itself is never changed or blocked.
    let code = ToolCall::new("write", r#"{"path":"src/main.rs","content":"x"}"#, 1);
    assert_eq!(host.before_tool_call(&at(0, 185_000), &code).await.unwrap(), code.arguments);
    host.before_tool_call(&at(0, 185_000), &ToolCall::new("read", r#"{"path":"memory/a.md"}"#, 2)).await.unwrap();
    assert_eq!(flush_actioned(&host).await, Some(json!(false)));

    let memory = ToolCall::new("write", r#"{"path":"memory/2026-11-22.md","content":"decisions"}"#, 3);
    assert_eq!(host.before_tool_call(&at(0, 185_000), &memory).await.unwrap(), memory.arguments);
    assert_eq!(flush_actioned(&host).await, Some(json!(true)));

    // A fresh session whose agent ignores the flush stays false, also in `scratchpad show`'s source.
    let other = Fixture::new();
    let host = open(&other, json!({}), None).await;
    host.before_query(&at(0, 185_000), "go on").await.unwrap();
    host.after_response(&at(0, 186_000), "NO_REPLY").await.unwrap();
    host.before_tool_call(&at(1, 186_000), &memory).await.unwrap();
    assert_eq!(flush_actioned(&host).await, Some(json!(false)), "a write in a later turn does not count");
}

async fn the_pre_compaction_warning_comes_when_usage_reaches_the_window_minus_the_reserve(fx: Fixture) {
    let host = open(&fx, json!({ "compaction": { "reserveTokens": 4000 } }), None).await;
    assert!(host.before_compaction(&at(0, 195_999)).await.unwrap().is_empty());
    let warnings = host.before_compaction(&at(0, 196_000)).await.unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].plugin, "context-guard");
    assert!(warnings[0].text.starts_with("[SYSTEM: pre-compaction memory flush]\nContext at 90%."));

    let notepad = open(&Fixture::new(), json!({ "compaction": { "warning": "notepad" } }), None).await;
    let warnings = notepad.before_compaction(&at(0, 199_000)).await.unwrap();
    assert!(warnings[0].text.starts_with("[System] Context is approaching the token limit"));
    assert!(warnings[0].text.contains("Review your session notepad"));
}

async fn checkpoints_are_written_at_token_thresholds_and_every_15_messages(fx: Fixture) {
    let summarizer = TestSummarizer::default();
    let host = open(&fx, json!({ "showContext": false }), Some(summarizer.clone())).await;
    host.after_response(&at(0, 40_000), "r").await.unwrap();
    assert!(host.checkpoints("s").await.unwrap().is_empty());
    host.after_response(&at(1, 52_000), "r").await.unwrap();
    let first = host.latest_checkpoint("s").await.unwrap().expect("a checkpoint at 25 %");
    assert_eq!(first.trigger, CheckpointTrigger::TokenPercent(25));
    assert_eq!((first.tokens_at_checkpoint, first.message_count_at_checkpoint), (52_000, 2));
    assert_eq!(first.checkpoint.summary, "2 messages at 52000 tokens");
    assert_eq!(first.checkpoint.key_decisions, ["use JSONL"]);
    assert_eq!(first.parent_id, None);
    let (millis, hex) = first.id.split_once('_').expect("{unix_ms}_{hex}");
    assert!(millis.parse::<u64>().is_ok() && hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()));

    // Below the next threshold, messages accumulate until 15 since the last checkpoint.
    for turn in 2..16 {
        host.after_response(&at(turn, 60_000), "r").await.unwrap();
    }
    assert_eq!(host.checkpoints("s").await.unwrap().len(), 1);
    host.after_response(&at(16, 60_000), "r").await.unwrap();
    let all = host.checkpoints("s").await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].trigger, CheckpointTrigger::MessageCount(15));
    assert_eq!(all[1].parent_id.as_deref(), Some(first.id.as_str()), "each record links to the one before");
    let requests = summarizer.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!((requests[1].session_id.as_str(), requests[1].turn_id.as_str()), ("s", "t16"));
    assert_eq!(requests[1].plugin, "context-guard");
}

async fn no_checkpoint_is_made_below_min_tokens_for_gen(fx: Fixture) {
    let summarizer = TestSummarizer::default();
    let config = json!({ "checkpoint": { "minTokensForGen": 10000, "tokenThresholdPercents": [1] } });
    let host = open(&fx, config, Some(summarizer.clone())).await;
    for turn in 0..20 {
        host.after_response(&at(turn, 9_999), "r").await.unwrap();
    }
    assert!(host.checkpoints("s").await.unwrap().is_empty());
    assert!(summarizer.requests.lock().unwrap().is_empty());
}

async fn the_compaction_fast_path_uses_a_checkpoint_covering_more_than_half_the_tokens(fx: Fixture) {
    let host = open(&fx, json!({}), Some(TestSummarizer::default())).await;
    host.after_response(&at(0, 100_000), "r").await.unwrap();
    let latest = host.latest_checkpoint("s").await.unwrap().unwrap();
    assert_eq!(latest.tokens_at_checkpoint, 100_000);
    assert_eq!(host.compaction_checkpoint("s", 199_999).await.unwrap(), Some(latest));
    assert_eq!(host.compaction_checkpoint("s", 200_000).await.unwrap(), None, "only half: summarise now");
}

async fn checkpoints_on_without_a_summarizer_refuse_to_load_with_a_clear_error(fx: Fixture) {
    let config = fx.config(vec![guard(json!({ "checkpoint": { "enabled": true } }))]);
    match Host::open(config).await {
        Err(Error::Load { plugin, message }) => {
            assert_eq!(plugin, "context-guard");
            assert!(message.contains("no summarizer") && message.contains("HostConfig::summarizer"), "{message}");
        }
        other => panic!("expected a load error, got {:?}", other.map(|_| ())),
    }
    // "auto" (the default) on a host without one: no checkpoints, no error.
    let host = open(&fx, json!({}), None).await;
    host.after_response(&at(0, 150_000), "r").await.unwrap();
    assert!(host.checkpoints("s").await.unwrap().is_empty());
}

async fn a_failing_summarizer_is_reported_and_the_turn_is_kept(fx: Fixture) {
    let summarizer = TestSummarizer { fail: true, ..TestSummarizer::default() };
    let host = open(&fx, json!({ "showContext": false }), Some(summarizer)).await;
    match host.after_response(&at(0, 120_000), "r").await {
        Err(Error::Checkpoint { session, message }) => {
            assert_eq!(session, "s");
            assert!(message.contains("the checkpoint model is unavailable"), "{message}");
        }
        other => panic!("expected a checkpoint error, got {other:?}"),
    }
    assert!(host.checkpoints("s").await.unwrap().is_empty());
    // The hook's own bookkeeping committed: the 50 % checkpoint counts as asked for, so the
    // next turn asks nothing of the (still failing) summarizer.
    host.after_response(&at(1, 121_000), "r").await.unwrap();
}

async fn without_the_runtimes_figures_usage_is_estimated_with_the_hosts_tokenizer(fx: Fixture) {
    let host = open(&fx, json!({ "contextWindow": 8, "memoryFlush": { "enabled": false } }), None).await;
    // "hello world" is 2 tokens in cl100k_base: 2 of 8.
    let prompt = host.before_query(&TurnContext::new("s", "t0"), "hello world").await.unwrap();
    assert_eq!(prompt.text(Placement::AppendSystem), "[Context: 2/8 tokens (25%)]");
    // The reply "tiktoken is great!" adds 6: 8 of 8 at the end of the turn, then 2 more.
    host.after_response(&TurnContext::new("s", "t0"), "tiktoken is great!").await.unwrap();
    let prompt = host.before_query(&TurnContext::new("s", "t1"), "hello world").await.unwrap();
    assert_eq!(prompt.text(Placement::AppendSystem), "[Context: 10/8 tokens (125%)]");
    // The runtime's own figure wins over the estimate.
    let prompt = host.before_query(&TurnContext::new("s", "t2").with_tokens(4, 8), "hello world").await.unwrap();
    assert_eq!(prompt.text(Placement::AppendSystem), "[Context: 4/8 tokens (50%)]");
}
