//! Plugins written in Python (componentize-py) and JavaScript (ComponentizeJS) load in
//! the host under the same contract and the same sandbox as the Rust ones. Each is built here
//! from its sources with its pinned tools (`scratchpad_tests::third_party`), then driven through
//! the real host beside the real scratchpad component: its policy works, its bad configuration
//! refuses the load, and the hostile checks that apply to a language runtime hold with the
//! default memory cap (64 MiB) and, for the runaway calls, the default deadline (500 ms): a
//! runaway call is interrupted, an allocation past the cap ends the call, an uncaught exception
//! after a write keeps none of the call's writes. Neither language needs more than the
//! default limits (the README's figures: a call starts with 9 to 13 MiB of linear memory).

use std::time::Duration;

use scratchpad_host::{Error, Host, Limits, Origin, Placement, PluginFailure, PluginSpec, ToolCall, ToolErrorKind};
use scratchpad_tests::third_party::{js_todo, python_redactor};
use scratchpad_tests::{Fixture, dump_state, refusal, scratchpad, trusted, turn};
use serde_json::{Value, json};

const OPENAI_KEY: &str = "sk-proj-Abc123Def456Ghi789Jkl012Mno345";
const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";

/// The redactor with `config` and the default limits.
fn redactor(config: Value) -> PluginSpec {
    PluginSpec { name: "redactor".into(), ..trusted(python_redactor()).with_config(config) }
}

/// The todo list with `config` and the default limits.
fn todo(config: Value) -> PluginSpec {
    PluginSpec { name: "todo".into(), ..trusted(js_todo()).with_config(config) }
}

/// `plugin` with a 5 s deadline instead of 500 ms and the default 64 MiB memory cap. The
/// deadline is wall-clock time: on the project's shared 2-core machine, running the whole suite
/// at once, a call of a few milliseconds has been seen to take over 500 ms. Tests of behaviour
/// and of the memory cap use this so that only what they check can stop the call; the deadline
/// tests keep the default.
fn patient(plugin: PluginSpec) -> PluginSpec {
    let limits = Limits { call_timeout: Duration::from_secs(5), ..Limits::default() };
    plugin.with_limits(limits)
}

/// A host with the scratchpad and `plugin`, and session `s` created.
async fn host_with(fx: &Fixture, plugin: PluginSpec) -> Host {
    let host = fx.open(vec![scratchpad(json!({})), plugin]).await;
    host.create_session("s", Origin::New).await.expect("creating the session");
    host
}

fn set_notes(content: &str) -> ToolCall {
    ToolCall::new("session.scratchpad", json!({"action": "set_notes", "content": content}).to_string(), 1)
}

/// The plugin's failure in `hook`, after checking the error names them.
fn failure<T: std::fmt::Debug>(result: scratchpad_host::Result<T>, plugin: &str, hook: &str) -> PluginFailure {
    match result {
        Err(Error::Plugin { plugin: p, hook: h, failure }) => {
            assert_eq!((p.as_str(), h.as_str()), (plugin, hook));
            failure
        }
        other => panic!("expected `{plugin}` to fail in `{hook}`, got {other:?}"),
    }
}

#[tokio::test]
async fn python_redactor_rewrites_secrets_in_any_tools_arguments_and_counts_them_per_session() {
    let fx = Fixture::new();
    let host = host_with(&fx, patient(redactor(json!({})))).await;
    let t = turn("s", "t1");

    let leaky =
        format!("deploy with {OPENAI_KEY} and {AWS_KEY}; Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345");
    let rewritten = host.before_tool_call(&t, &set_notes(&leaky)).await.unwrap();
    let content = serde_json::from_str::<Value>(&rewritten).unwrap()["content"].as_str().unwrap().to_owned();
    assert_eq!(
        content,
        "deploy with [REDACTED:openai-key] and [REDACTED:aws-access-key]; Authorization: [REDACTED:bearer-token]"
    );
    let clean = set_notes("nothing secret here, token budget is 5");
    assert_eq!(host.before_tool_call(&t, &clean).await.unwrap(), clean.arguments, "clean arguments pass untouched");

    let stats = host.call_tool(&t, "redactor.stats", "{}").await.unwrap();
    let stats: Value = serde_json::from_str(&stats.content).unwrap();
    assert_eq!(stats["total"], 3);
    assert_eq!(stats["byKind"], json!({"aws-access-key": 1, "bearer-token": 1, "openai-key": 1}));
    assert_eq!(stats["encoding"], "cl100k_base", "the host's tokenizer, through the tokens import");
    let (kind, message) = refusal(host.call_tool(&t, "redactor.stats", r#"{"reset":true}"#).await);
    assert_eq!(kind, ToolErrorKind::InvalidArguments, "{message}");

    host.create_session("other", Origin::New).await.unwrap();
    let other = host.call_tool(&turn("other", "t1"), "redactor.stats", "{}").await.unwrap();
    assert!(other.content.contains(r#""total": 0"#), "counts are per session: {}", other.content);
}

#[tokio::test]
async fn python_redactor_in_block_mode_refuses_the_call_and_enforces_its_token_budget() {
    let fx = Fixture::new();
    let config = json!({"mode": "block", "maxArgumentTokens": 50, "skipTools": ["trusted.tool"]});
    let host = host_with(&fx, patient(redactor(config))).await;
    let t = turn("s", "t1");

    let (kind, message) = refusal(host.before_tool_call(&t, &set_notes(&format!("key {AWS_KEY}"))).await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert!(message.contains("aws-access-key") && message.contains("session.scratchpad"), "{message}");

    let long = set_notes(&"word ".repeat(200));
    let (kind, message) = refusal(host.before_tool_call(&t, &long).await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert!(message.contains("over the redactor's limit of 50"), "{message}");

    let trusted = ToolCall::new("trusted.tool", json!({"key": AWS_KEY}).to_string(), 2);
    assert_eq!(host.before_tool_call(&t, &trusted).await.unwrap(), trusted.arguments, "skipTools are not inspected");
}

#[tokio::test]
async fn python_redactor_with_a_bad_config_refuses_to_load_naming_every_offending_key() {
    let fx = Fixture::new();
    let config = json!({"mode": "shout", "extraPatterns": {"broken": "("}, "colour": "red"});
    let result = Host::open(fx.config(vec![redactor(config)])).await;
    let Err(Error::Load { plugin, message }) = result else {
        panic!("expected a load refusal, got {:?}", result.err())
    };
    assert_eq!(plugin, "redactor");
    for offender in ["`mode`", "`extraPatterns.broken`", "`colour`"] {
        assert!(message.contains(offender), "{offender} missing from: {message}");
    }
}

#[tokio::test]
async fn js_todo_keeps_a_list_with_its_tool_and_injects_it_every_turn_within_its_token_budget() {
    let fx = Fixture::new();
    let host = host_with(&fx, patient(todo(json!({"maxItems": 5})))).await;
    let t = turn("s", "t1");

    let added = host.call_tool(&t, "todo", r#"{"action":"add","items":["write the tests","fix the bug"]}"#).await;
    assert_eq!(added.unwrap().content, "Added #1, #2.");
    host.call_tool(&t, "todo", r#"{"action":"add","text":"ship it"}"#).await.unwrap();
    host.call_tool(&t, "todo", r#"{"action":"done","id":1}"#).await.unwrap();

    let prompt = host.before_query(&turn("s", "t2"), "continue").await.unwrap();
    assert_eq!(prompt.text(Placement::AppendContext), "[Todo: 2 open]\n[ ] #2 fix the bug\n[ ] #3 ship it");
    let listed = host.call_tool(&t, "todo", r#"{"action":"list"}"#).await.unwrap().content;
    assert_eq!(listed, "[x] #1 write the tests\n[ ] #2 fix the bug\n[ ] #3 ship it");
    let found = host.call_tool(&t, "todo", r#"{"action":"find","pattern":"t$"}"#).await.unwrap().content;
    assert_eq!(found, "[ ] #3 ship it (1 match)");

    let (kind, _) = refusal(host.call_tool(&t, "todo", r#"{"action":"add","items":["a","b","c"]}"#).await);
    assert_eq!(kind, ToolErrorKind::Rejected, "past maxItems nothing is added");
    let (kind, _) = refusal(host.call_tool(&t, "todo", r#"{"action":"done","id":9}"#).await);
    assert_eq!(kind, ToolErrorKind::NotFound);
    let (kind, message) = refusal(host.call_tool(&t, "todo", r#"{"action":"find","pattern":"("}"#).await);
    assert_eq!(kind, ToolErrorKind::InvalidArguments, "{message}");
    host.call_tool(&t, "todo", r#"{"action":"remove","id":2}"#).await.unwrap();
    let edited = host.call_tool(&t, "todo", r#"{"action":"edit","pattern":"ship (it)","replacement":"release $1"}"#);
    assert_eq!(edited.await.unwrap().content, "Edited #3.");
    let listed = host.call_tool(&t, "todo", r#"{"action":"list"}"#).await.unwrap().content;
    assert_eq!(listed, "[x] #1 write the tests\n[ ] #3 release it");
}

#[tokio::test]
async fn js_todo_trims_the_injected_list_to_its_token_budget_counted_by_the_host() {
    let fx = Fixture::new();
    let host = host_with(&fx, patient(todo(json!({"maxTokens": 30, "placement": "prepend-context"})))).await;
    let t = turn("s", "t1");
    let items: Vec<String> = (1..=6).map(|i| format!("task number {i} with a somewhat longer description")).collect();
    host.call_tool(&t, "todo", &json!({"action": "add", "items": items}).to_string()).await.unwrap();

    let text = host.before_query(&turn("s", "t2"), "go").await.unwrap().text(Placement::PrependContext);
    let (body, more) = text.rsplit_once('\n').unwrap();
    assert!(host.count_tokens(body) <= 30, "{} tokens: {body}", host.count_tokens(body));
    assert!(body.starts_with("[Todo: 6 open]\n[ ] #1 task number 1"), "{text}");
    let shown = body.lines().count() - 1;
    assert!((1..6).contains(&shown), "{text}");
    assert_eq!(more, format!("(+{} more: call todo with action \"list\")", 6 - shown));
}

#[tokio::test]
async fn js_todo_with_a_bad_config_refuses_to_load_naming_every_offending_key() {
    let fx = Fixture::new();
    let config = json!({"maxItems": 0, "placement": "footer", "colour": "red"});
    let result = Host::open(fx.config(vec![todo(config)])).await;
    let Err(Error::Load { plugin, message }) = result else {
        panic!("expected a load refusal, got {:?}", result.err())
    };
    assert_eq!(plugin, "todo");
    for offender in ["`maxItems`", "`placement`", "`colour`"] {
        assert!(message.contains(offender), "{offender} missing from: {message}");
    }
}

/// A catastrophic regex (exponential backtracking) against a string it almost matches.
/// The failure just made is the last entry of session `s`'s event log, with its kind and hook.
async fn logged(host: &Host, kind: &str, hook: &str) {
    let events = host.events("s").await.unwrap();
    let last = events.last().expect("the failure is logged in the session's events");
    assert_eq!((last.kind.as_str(), last.hook.as_str()), (kind, hook), "{events:?}");
}

const CATASTROPHIC: &str = "^(a+)+$";

fn almost(n: usize) -> String {
    format!("{}!", "a".repeat(n))
}

#[tokio::test]
async fn python_runaway_regex_from_config_times_out_at_the_default_deadline_and_keeps_no_writes() {
    let fx = Fixture::new();
    let host = host_with(&fx, redactor(json!({"extraPatterns": {"runaway": CATASTROPHIC}}))).await;
    let before = snapshot_in_turn(&fx, &host).await;
    // The built-in patterns find the key and count it first; the configured regex then loops.
    let call = ToolCall::new("any.tool", json!({"key": OPENAI_KEY, "text": almost(40)}).to_string(), 1);
    let result = host.before_tool_call(&turn("s", "t1"), &call).await;
    assert_eq!(failure(result, "redactor", "before-tool-call"), PluginFailure::Timeout { limit_ms: 500 });
    assert_eq!(dump_state(&fx.db()), before, "the count written before the loop is discarded");
    logged(&host, "timeout", "before-tool-call").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn python_replacement_that_explodes_in_memory_hits_the_default_memory_cap_and_keeps_no_writes() {
    let fx = Fixture::new();
    // The placeholder repeats the match (`\1`) 20,000 times: one 10,000-character match
    // becomes 200 MB of text, built in one allocation, in a 64 MiB memory.
    let config = json!({"extraPatterns": {"run": "(x+)"}, "placeholder": "\\1".repeat(20_000)});
    let host = host_with(&fx, patient(redactor(config))).await;
    let before = snapshot_in_turn(&fx, &host).await;
    let call = ToolCall::new("any.tool", json!({"key": AWS_KEY, "text": "x".repeat(10_000)}).to_string(), 1);
    let result = host.before_tool_call(&turn("s", "t1"), &call).await;
    assert_eq!(failure(result, "redactor", "before-tool-call"), PluginFailure::MemoryCap { limit_bytes: 64 << 20 });
    assert_eq!(dump_state(&fx.db()), before, "the count written before the allocation is discarded");
    logged(&host, "memory", "before-tool-call").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn python_uncaught_exception_after_a_write_keeps_none_of_the_calls_writes() {
    let fx = Fixture::new();
    // `\2` names a group the pattern does not have: `re` raises at the first match.
    let config = json!({"extraPatterns": {"ticket": "TICKET-[0-9]+"}, "placeholder": "\\2"});
    let host = host_with(&fx, patient(redactor(config))).await;
    let before = snapshot_in_turn(&fx, &host).await;
    let call = ToolCall::new("any.tool", json!({"key": OPENAI_KEY, "text": "see TICKET-42"}).to_string(), 1);
    let result = host.before_tool_call(&turn("s", "t1"), &call).await;
    let PluginFailure::Trap(message) = failure(result, "redactor", "before-tool-call") else {
        panic!("an uncaught Python exception is a trap")
    };
    // componentize-py reports an uncaught exception as a panic of its runtime, on stderr,
    // which the host puts in the error (without Python's traceback).
    assert!(message.contains("Python function threw an unexpected exception"), "{message}");
    assert_eq!(dump_state(&fx.db()), before, "the count written before the exception is discarded");
    logged(&host, "trap", "before-tool-call").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn js_runaway_regex_from_a_tool_argument_times_out_at_the_default_deadline_and_keeps_no_writes() {
    let fx = Fixture::new();
    let host = host_with(&fx, todo(json!({}))).await;
    let t = turn("s", "t1");
    host.call_tool(&t, "todo", &json!({"action": "add", "text": almost(40)}).to_string()).await.unwrap();
    let before = dump_state(&fx.db());
    let result = host.call_tool(&t, "todo", &json!({"action": "find", "pattern": CATASTROPHIC}).to_string()).await;
    assert_eq!(failure(result, "todo", "tool todo"), PluginFailure::Timeout { limit_ms: 500 });
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "timeout", "tool todo").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn js_replacement_that_multiplies_an_item_hits_the_default_memory_cap_and_keeps_no_writes() {
    let fx = Fixture::new();
    let host = host_with(&fx, patient(todo(json!({})))).await;
    let t = turn("s", "t1");
    host.call_tool(&t, "todo", r#"{"action":"add","text":"short"}"#).await.unwrap();
    host.call_tool(&t, "todo", &json!({"action": "add", "text": "ab ".repeat(5_000)}).to_string()).await.unwrap();
    let before = dump_state(&fx.db());
    // An empty match at each of 15,000 positions, each replaced by 10,000 characters: 150 MB
    // of text in a 64 MiB memory. The first item is edited (written) before the second blows up.
    let edit = json!({"action": "edit", "pattern": "(?:)", "replacement": "z".repeat(10_000)});
    let result = host.call_tool(&t, "todo", &edit.to_string()).await;
    assert_eq!(failure(result, "todo", "tool todo"), PluginFailure::MemoryCap { limit_bytes: 64 << 20 });
    assert_eq!(dump_state(&fx.db()), before, "the first item's edit is discarded");
    logged(&host, "memory", "tool todo").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn js_uncaught_exception_after_writes_keeps_none_of_them_no_half_added_list() {
    let fx = Fixture::new();
    let limits = Limits { storage_quota_bytes: 4_096, call_timeout: Duration::from_secs(5), ..Limits::default() };
    let host = host_with(&fx, todo(json!({})).with_limits(limits)).await;
    let t = turn("s", "t1");
    host.call_tool(&t, "todo", r#"{"action":"add","text":"kept"}"#).await.unwrap();
    let before = dump_state(&fx.db());
    // Each item is its own write; the third passes the 4 KiB quota, `storage.set` throws the
    // host's quota error and the plugin does not catch it: the first two writes go too.
    let items = vec!["y".repeat(1_500); 3];
    let result = host.call_tool(&t, "todo", &json!({"action": "add", "items": items}).to_string()).await;
    let PluginFailure::Trap(message) = failure(result, "todo", "tool todo") else {
        panic!("an uncaught JavaScript exception is a trap")
    };
    assert!(!message.is_empty());
    assert_eq!(dump_state(&fx.db()), before, "no half-added list");
    logged(&host, "trap", "tool todo").await;
    let listed = host.call_tool(&t, "todo", r#"{"action":"list"}"#).await.unwrap().content;
    assert_eq!(listed, "[ ] #1 kept");
}

/// Every stored row once turn `t1` has run a call (so the host's record of the turn is in
/// place), for comparing with the rows after a failed call in the same turn.
async fn snapshot_in_turn(fx: &Fixture, host: &Host) -> String {
    host.call_tool(&turn("s", "t1"), "redactor.stats", "{}").await.expect("the stats tool runs");
    dump_state(&fx.db())
}

/// The host keeps serving after a plugin's failure: the scratchpad, and the next call of the
/// plugin that failed (both language runtimes start fresh for every call).
async fn still_serving(host: &Host) {
    let t = turn("s", "t1");
    host.call_tool(&t, "session.scratchpad", r#"{"action":"set_notes","content":"still here"}"#)
        .await
        .expect("the scratchpad still serves");
    let prompt = host.before_query(&turn("s", "t2"), "next").await.expect("the next turn runs every plugin");
    assert!(prompt.text(Placement::PrependContext).contains("still here"));
}

#[tokio::test]
async fn the_python_and_javascript_plugins_are_refused_without_grants_and_load_with_what_they_ask_for() {
    use scratchpad_host::Grants;
    use scratchpad_tests::third_party::{REDACTOR_POWERS, TODO_POWERS};
    let fx = Fixture::new();
    for (plugin, powers) in [(redactor(json!({})), REDACTOR_POWERS), (todo(json!({})), TODO_POWERS)] {
        let name = plugin.name.clone();
        let bare = plugin.clone().granting(Grants::NONE);
        let message = match Host::open(fx.config(vec![bare])).await {
            Err(Error::Load { plugin, message }) if plugin == name => message,
            other => panic!("{name} was not refused at load: {:?}", other.map(|_| ())),
        };
        for power in powers.split(',') {
            assert!(message.contains(&format!("`{power}`")), "{name}: {power} is listed: {message}");
        }
        let granted = Grants::parse(powers.split(',')).unwrap();
        let host = fx.open(vec![plugin.granting(granted)]).await;
        assert_eq!(host.plugins()[0].grants.join(","), powers, "{name} holds exactly what it asked for");
    }
}
