//! A plugin written to hurt the host, loaded beside the real scratchpad component: each
//! attack ends in an `Error::Plugin` that names the plugin, the hook or tool and the limit;
//! none of the failed call's writes persist; and the host keeps serving the other plugins and
//! sessions (and the attacker's next, well-behaved call).

use std::time::{Duration, Instant};

use scratchpad_host::{Error, Host, Limits, Origin, PluginFailure};
use scratchpad_tests::{Fixture, dump_state, probe, scratchpad, turn};
use serde_json::json;

const SET_NOTES: &str = r#"{"action":"set_notes","content":"still here"}"#;

/// The real scratchpad beside a probe (`probe`, tools `p.*`) with `limits` and `config`.
async fn hostile(fx: &Fixture, limits: Limits, config: serde_json::Value) -> Host {
    let mut config = config;
    config["prefix"] = json!("p");
    let host = fx.open(vec![scratchpad(json!({})), probe("probe", "p").with_config(config).with_limits(limits)]).await;
    for session in ["s", "other"] {
        host.create_session(session, Origin::New).await.unwrap();
    }
    let t = turn("s", "t1");
    host.call_tool(&t, "session.scratchpad", r#"{"action":"set_plan","content":"1. survive"}"#).await.unwrap();
    host.call_tool(&t, "p.write", r#"{"key":"kept","value":"before the attack"}"#).await.unwrap();
    host
}

/// Asserts `result` is the probe's failure in `hook`, and returns the failure and message.
fn expect_failure<T: std::fmt::Debug>(result: Result<T, Error>, hook: &str) -> (PluginFailure, String) {
    match result {
        Err(error @ Error::Plugin { .. }) => {
            let message = error.to_string();
            let Error::Plugin { plugin, hook: at, failure } = error else { unreachable!() };
            assert_eq!((plugin.as_str(), at.as_str()), ("probe", hook), "{message}");
            assert!(message.contains("plugin `probe`") && message.contains(&format!("`{hook}`")), "{message}");
            assert!(message.contains("none of that call's writes were kept"), "{message}");
            (failure, message)
        }
        other => panic!("expected the probe to fail in `{hook}`, got {other:?}"),
    }
}

/// The host still serves: the scratchpad in the attacked session and another session, and
/// the probe's own next call.
async fn still_serving(host: &Host) {
    let t = turn("s", "t1");
    host.call_tool(&t, "session.scratchpad", SET_NOTES).await.expect("the scratchpad still serves the session");
    host.call_tool(&turn("other", "t1"), "session.scratchpad", SET_NOTES).await.expect("other sessions are served");
    let read = host.call_tool(&t, "p.read", r#"{"key":"kept"}"#).await.expect("the probe's next call runs");
    assert_eq!(read.content, "before the attack");
}

fn limits(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut limits = Limits::default();
    f(&mut limits);
    limits
}

#[tokio::test]
async fn an_infinite_loop_in_a_tool_is_interrupted_at_the_configured_deadline() {
    let fx = Fixture::new();
    let host = hostile(&fx, limits(|l| l.call_timeout = Duration::from_millis(50)), json!({})).await;
    let before = dump_state(&fx.db());

    let started = Instant::now();
    let result = host.call_tool(&turn("s", "t1"), "p.loop", r#"{"mark":"lost"}"#).await;
    let (failure, message) = expect_failure(result, "tool p.loop");
    assert_eq!(failure, PluginFailure::Timeout { limit_ms: 50 });
    assert!(message.contains("timed out after 50 ms"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5), "interrupted late: {:?}", started.elapsed());
    assert_eq!(dump_state(&fx.db()), before, "the looping call's write must not persist");
    logged(&host, "timeout", "tool p.loop").await;
    still_serving(&host).await;
}

// One executor thread: a guest that spins must give it back (it yields at every epoch tick),
// or the other session's call could not run until the loop's deadline. This is what a
// synchronous call path would lose (docs/benchmarks.md, "Fourth pass").
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_infinite_loop_never_holds_the_executor_from_other_sessions() {
    let fx = Fixture::new();
    let host = hostile(&fx, limits(|l| l.call_timeout = Duration::from_secs(2)), json!({})).await;
    let looping = tokio::spawn({
        let host = host.clone();
        async move { host.call_tool(&turn("s", "t1"), "p.loop", r#"{"mark":"lost"}"#).await }
    });
    // The loop takes the executor first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!looping.is_finished(), "the loop ended before its deadline");
    let other = tokio::spawn({
        let host = host.clone();
        async move { host.call_tool(&turn("other", "t1"), "session.scratchpad", SET_NOTES).await }
    });
    other.await.unwrap().expect("the other session's call is served");
    assert!(!looping.is_finished(), "the other session's call was served only after the loop's deadline");
    let (failure, _) = expect_failure(looping.await.unwrap(), "tool p.loop");
    assert_eq!(failure, PluginFailure::Timeout { limit_ms: 2000 });
}

#[tokio::test]
async fn an_infinite_loop_in_a_hook_is_interrupted_and_names_the_hook() {
    let fx = Fixture::new();
    let host = hostile(&fx, limits(|l| l.call_timeout = Duration::from_millis(40)), json!({"queryMode": "loop"})).await;
    let before = dump_state(&fx.db());

    let (failure, message) = expect_failure(host.before_query(&turn("s", "t1"), "go").await, "before-query");
    assert_eq!(failure, PluginFailure::Timeout { limit_ms: 40 });
    assert!(message.contains("timed out after 40 ms"), "{message}");
    assert_eq!(dump_state(&fx.db()), before, "`query-was-here` must not persist");
    logged(&host, "timeout", "before-query").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn a_memory_bomb_is_stopped_at_the_memory_cap() {
    let fx = Fixture::new();
    let host = hostile(&fx, limits(|l| l.memory_bytes = 16 << 20), json!({})).await;
    let before = dump_state(&fx.db());

    let (failure, message) =
        expect_failure(host.call_tool(&turn("s", "t1"), "p.bomb", r#"{"mark":"lost"}"#).await, "tool p.bomb");
    assert_eq!(failure, PluginFailure::MemoryCap { limit_bytes: 16 << 20 });
    assert!(message.contains("exceeded its memory cap of 16 MiB"), "{message}");
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "memory", "tool p.bomb").await;
    still_serving(&host).await;
    let peak = host.last_call_memory("probe").unwrap().peak_bytes;
    assert!(peak <= 16 << 20, "a later call stays under the cap: {peak}");
}

#[tokio::test]
async fn unbounded_recursion_overflows_the_stack_and_is_contained() {
    let fx = Fixture::new();
    let host = hostile(&fx, Limits::default(), json!({})).await;
    let before = dump_state(&fx.db());

    let result = host.call_tool(&turn("s", "t1"), "p.recurse", r#"{"mark":"lost"}"#).await;
    let (failure, message) = expect_failure(result, "tool p.recurse");
    assert_eq!(failure, PluginFailure::StackOverflow);
    assert!(message.contains("overflowed its call stack"), "{message}");
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "stack_overflow", "tool p.recurse").await;

    // Frames kept in linear memory run off the bottom of the guest's own stack instead: a trap.
    let result = host.call_tool(&turn("s", "t1"), "p.recurse_memory", r#"{"mark":"lost"}"#).await;
    let (failure, message) = expect_failure(result, "tool p.recurse_memory");
    // The trap says what happened, and what most often causes it.
    let PluginFailure::Trap(trap) = failure else { panic!("expected a trap: {message}") };
    assert!(trap.starts_with("wasm trap: out of bounds memory access ("), "{message}");
    assert!(trap.contains("unbounded recursion running off the stack"), "{message}");
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "trap", "tool p.recurse_memory").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn a_panic_after_writing_loses_the_writes_in_a_tool_and_in_a_hook() {
    let fx = Fixture::new();
    let host = hostile(&fx, Limits::default(), json!({"queryMode": "trap"})).await;
    let before = dump_state(&fx.db());

    let result = host.call_tool(&turn("s", "t1"), "p.write_then_trap", r#"{"key":"lost","value":"2"}"#).await;
    let (failure, message) = expect_failure(result, "tool p.write_then_trap");
    assert!(matches!(&failure, PluginFailure::Trap(m) if m.contains("probe panicked after writing")), "{message}");
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "trap", "tool p.write_then_trap").await;

    let (failure, message) = expect_failure(host.before_query(&turn("s", "t1"), "go").await, "before-query");
    assert!(matches!(&failure, PluginFailure::Trap(m) if m.contains("probe trapped in before-query")), "{message}");
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "trap", "before-query").await;
    still_serving(&host).await;
}

/// The failure just made is the last entry of session `s`'s event log, with its kind and hook.
async fn logged(host: &Host, kind: &str, hook: &str) {
    let events = host.events("s").await.unwrap();
    let last = events.last().expect("the failure is logged in the session's events");
    assert_eq!((last.kind.as_str(), last.hook.as_str()), (kind, hook), "{events:?}");
}

/// Default limits but a 10 s deadline: writing 50 MB into fresh guest memory takes 50 to
/// 100 ms alone, several times that on a loaded 2-core machine, and these tests are about the
/// output cap, not the deadline.
fn slow_clock() -> Limits {
    limits(|l| l.call_timeout = Duration::from_secs(10))
}

#[tokio::test]
async fn a_50_mb_tool_output_is_refused_by_the_output_cap_and_its_writes_are_lost() {
    let fx = Fixture::new();
    let host = hostile(&fx, slow_clock(), json!({})).await;
    let before = dump_state(&fx.db());

    let result = host.call_tool(&turn("s", "t1"), "p.huge", r#"{"mark":"lost"}"#).await;
    let (failure, message) = expect_failure(result, "tool p.huge");
    assert_eq!(failure, PluginFailure::OutputTooLarge { size: 50 << 20, limit_bytes: 1 << 20 });
    assert!(message.contains("over the output cap of 1048576 bytes"), "{message}");
    assert_eq!(dump_state(&fx.db()), before, "the refused call's write must not persist");
    logged(&host, "output_cap", "tool p.huge").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn a_50_mb_injection_is_refused_by_the_output_cap_and_its_writes_are_lost() {
    let fx = Fixture::new();
    let host = hostile(&fx, slow_clock(), json!({"queryMode": "huge"})).await;
    let before = dump_state(&fx.db());

    let (failure, _) = expect_failure(host.before_query(&turn("s", "t1"), "go").await, "before-query");
    // The text, and the 64 bytes every list item costs beyond it.
    assert_eq!(failure, PluginFailure::OutputTooLarge { size: (50 << 20) + 64, limit_bytes: 1 << 20 });
    assert_eq!(dump_state(&fx.db()), before, "`query-was-here` must not persist");
    logged(&host, "output_cap", "before-query").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn the_output_cap_is_configurable_and_exact() {
    let fx = Fixture::new();
    // (The cap must hold the probe's whole manifest, about 1.3 KB, or the probe is refused at load.)
    let host = hostile(&fx, limits(|l| l.output_bytes = 2000), json!({})).await;
    let t = turn("s", "t1");
    let at_cap = host.call_tool(&t, "p.huge", r#"{"bytes":2000,"mark":"kept-at-cap"}"#).await.unwrap();
    assert_eq!(at_cap.content.len(), 2000);
    let before = dump_state(&fx.db());
    let (failure, _) =
        expect_failure(host.call_tool(&t, "p.huge", r#"{"bytes":2001,"mark":"lost"}"#).await, "tool p.huge");
    assert_eq!(failure, PluginFailure::OutputTooLarge { size: 2001, limit_bytes: 2000 });
    assert_eq!(dump_state(&fx.db()), before);
    logged(&host, "output_cap", "tool p.huge").await;
}

#[tokio::test]
async fn filling_the_storage_quota_is_an_error_value_the_plugin_handles() {
    let fx = Fixture::new();
    let quota = 256 << 10;
    let host = hostile(&fx, limits(|l| l.storage_quota_bytes = quota), json!({})).await;
    let t = turn("s", "t1");
    let used_before: u64 = 4 + "before the attack".len() as u64; // the key `kept` and its value

    let filled = host.call_tool(&t, "p.fill", "{}").await.expect("a quota hit is a value, not a trap");
    // Each chunk is the key `fill/N` (6 bytes) and 64 KiB: three fit beside `kept`, a fourth does not.
    let used = used_before + 3 * (6 + (64 << 10));
    let expected = format!("stored 3 chunks, then: quota exceeded: used {used} + requested 65542 > limit {quota}");
    assert_eq!(filled.content, expected);
    let stored: usize = scratchpad_tests::dump(&fx.db(), "s")
        .iter()
        .filter(|(p, _, _)| p == "probe")
        .map(|(_, k, v)| k.len() + v.len())
        .sum();
    assert_eq!(stored as u64, used, "what the plugin kept is committed, and within the quota");

    // Filling again rewrites the same three chunks (same size, so allowed) and stops at the fourth.
    let again = host.call_tool(&t, "p.fill", "{}").await.unwrap();
    assert_eq!(again.content, expected);
    // Another session has its own quota.
    let other = host.call_tool(&turn("other", "t1"), "p.fill", "{}").await.unwrap();
    assert!(other.content.starts_with("stored 3 chunks, then: quota exceeded: used 196626 "), "{}", other.content);
    still_serving(&host).await;
}

#[tokio::test]
async fn storing_one_observation_over_and_over_fills_the_blob_quota_and_is_refused_as_a_value() {
    let fx = Fixture::new();
    let quota = 1 << 20;
    let host = hostile(&fx, limits(|l| l.blob_quota_bytes = quota), json!({ "resultMode": "hoard" })).await;
    let t = turn("s", "t1");
    let observation = scratchpad_host::Observation::text("o".repeat(300_000));
    let call = scratchpad_host::ToolCall::new("fetch", "{}", 1);

    let seen = host.after_tool_result(&t, &call, &observation).await.expect("a quota hit is a value, not a trap");
    // Three 300,000-byte copies fit in 1 MiB; the fourth would not, counting the call's own.
    let expected = format!("stored 3 copies, then: quota exceeded: used 900000 + requested 300000 > limit {quota}");
    assert_eq!(seen.replacement.as_deref(), Some(expected.as_str()));
    let stored = host.observations("s").await.unwrap();
    assert_eq!(stored.len(), 3, "the copies within the quota are committed with the call");
    assert!(stored.iter().map(|e| e.size_bytes).sum::<u64>() <= quota);

    // The next call counts what is stored: not one more copy fits.
    let again = host.after_tool_result(&turn("s", "t1"), &call, &observation).await.unwrap();
    let expected = format!("stored 0 copies, then: quota exceeded: used 900000 + requested 300000 > limit {quota}");
    assert_eq!(again.replacement.as_deref(), Some(expected.as_str()));
    assert_eq!(host.observations("s").await.unwrap().len(), 3);
    // Another session has its own quota.
    let other = host.after_tool_result(&turn("other", "t1"), &call, &observation).await.unwrap();
    assert!(other.replacement.unwrap().starts_with("stored 3 copies"));
    still_serving(&host).await;
}

#[tokio::test]
async fn offering_an_undeclared_tool_breaks_the_contract_and_keeps_nothing() {
    let fx = Fixture::new();
    let host = hostile(&fx, Limits::default(), json!({"listMode": "undeclared"})).await;
    let before = dump_state(&fx.db());

    let (failure, message) = expect_failure(host.tools(&turn("s", "t1")).await, "list-tools");
    assert_eq!(
        failure,
        PluginFailure::Contract("it offered the tool `p.ghost`, which its manifest does not declare".into()),
        "{message}"
    );
    assert_eq!(dump_state(&fx.db()), before, "`listed` must not persist");
    logged(&host, "contract", "list-tools").await;
    still_serving(&host).await;
}

#[tokio::test]
async fn a_tool_name_another_plugin_owns_is_refused_at_load_naming_both() {
    let fx = Fixture::new();
    for (owner, stolen) in [("scratchpad", "session.scratchpad"), ("first", "p.write")] {
        let intruder = probe("intruder", "x").with_config(json!({ "prefix": "x", "extraTools": [stolen] }));
        let plugins = vec![scratchpad(json!({})), probe("first", "p"), intruder];
        let err = Host::open(fx.config(plugins)).await.err().expect("the clash is refused");
        let message = err.to_string();
        assert!(matches!(&err, Error::Load { plugin, .. } if plugin == "intruder"), "{message}");
        assert!(message.contains(&format!("plugin `{owner}` already declares")), "{message}");
        assert!(message.contains(&format!("`{stolen}`")), "{message}");
    }
}

#[tokio::test]
async fn failures_in_one_session_do_not_block_concurrent_calls_in_others() {
    let fx = Fixture::new();
    let host = hostile(&fx, limits(|l| l.call_timeout = Duration::from_millis(200)), json!({})).await;
    let looping = {
        let host = host.clone();
        tokio::spawn(async move { host.call_tool(&turn("s", "t1"), "p.loop", "{}").await })
    };
    // While the loop burns its deadline, the other session is served at once.
    let started = Instant::now();
    for i in 0..5 {
        let args = format!(r#"{{"action":"refs.add","ref":"r{i}"}}"#);
        host.call_tool(&turn("other", "t1"), "session.scratchpad", &args).await.unwrap();
    }
    assert!(started.elapsed() < Duration::from_millis(2000), "{:?}", started.elapsed());
    let (failure, _) = expect_failure(looping.await.unwrap(), "tool p.loop");
    assert_eq!(failure, PluginFailure::Timeout { limit_ms: 200 });
}
