//! A hostile plugin built against the raw WIT (`tests/components/hostile`, no SDK) makes the
//! host work on its behalf: in its manifest, in what its hooks return, in the host imports it
//! calls. Every such cost is bounded — refused at load with the limit named, refused as a
//! contract breach, refused as an error value, or cut at the call's deadline — and a refused
//! call keeps nothing.

use std::time::{Duration, Instant};

use scratchpad_host::{Error, Host, Limits, Observation, Origin, PluginFailure, PluginSpec, ToolCall};
use scratchpad_tests::{Fixture, components, digest_of, dump_all, scratchpad, trusted, turn};
use serde_json::{Value, json};

/// The hostile component as plugin `hostile` with `config` and `limits`.
fn hostile(config: Value, limits: Limits) -> PluginSpec {
    PluginSpec { name: "hostile".into(), ..trusted(components::HOSTILE_PATH) }.with_config(config).with_limits(limits)
}

/// The real scratchpad beside the hostile plugin, with sessions `s` and `other`.
async fn host_with(fx: &Fixture, config: Value, limits: Limits) -> Host {
    let host = fx.open(vec![scratchpad(json!({})), hostile(config, limits)]).await;
    for session in ["s", "other"] {
        host.create_session(session, Origin::New).await.unwrap();
    }
    host
}

/// The load error of a host with the hostile plugin configured with `config`.
async fn refused_load(config: Value) -> String {
    let fx = Fixture::new();
    match Host::open(fx.config(vec![hostile(config, Limits::default())])).await {
        Err(error @ Error::Load { .. }) => error.to_string(),
        Err(other) => panic!("expected a load error, got {other}"),
        Ok(_) => panic!("the hostile manifest was loaded"),
    }
}

async fn attack(host: &Host, session: &str, args: Value) -> scratchpad_host::Result<String> {
    host.call_tool(&turn(session, "t1"), "h.run", &args.to_string()).await.map(|output| output.content)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn counting_a_huge_text_stops_at_the_deadline_and_never_stalls_other_sessions() {
    let fx = Fixture::new();
    // Room for the text in the guest; the deadline stays the default 500 ms.
    let limits = Limits { memory_bytes: 256 << 20, ..Limits::default() };
    let host = host_with(&fx, json!({}), limits).await;
    let before = dump_all(&fx.db());

    // On the one executor thread of this runtime, the count of 60 MiB must not block the
    // other session's calls (they run while it is being counted) and must end at the deadline.
    let counting = {
        let host = host.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = attack(&host, "s", json!({"attack": "count", "bytes": 60 << 20, "mark": "lost"})).await;
            (result, started.elapsed())
        })
    };
    let mut served = 0;
    while !counting.is_finished() {
        let other = turn("other", "t1");
        let call = host.call_tool(&other, "session.scratchpad", r#"{"action":"set_plan","content":"1. go"}"#);
        tokio::time::timeout(Duration::from_secs(5), call).await.expect("another session waited on the count").unwrap();
        served += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (result, elapsed) = counting.await.unwrap();
    match result {
        Err(Error::Plugin { plugin, failure: PluginFailure::Timeout { limit_ms: 500 }, .. }) => {
            assert_eq!(plugin, "hostile")
        }
        other => panic!("expected the count to time out, got {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(5), "the count ran {elapsed:?} past a 500 ms deadline");
    assert!(served >= 1, "no call of another session completed while the count ran");
    let after = dump_all(&fx.db());
    assert!(!after.contains("lost"), "the timed-out call's write was kept");
    assert_ne!(before, after, "the other session's calls were committed");

    // Counting what a plugin may legitimately count still works, exactly.
    let counted = attack(&host, "s", json!({"attack": "count", "bytes": 100_000})).await.unwrap();
    assert_eq!(counted, host.count_tokens(&"word ".repeat(20_000)).to_string());
}

#[tokio::test]
async fn a_manifest_is_bounded_and_refused_at_load_naming_the_limit() {
    let many = refused_load(json!({"tools": 100_000})).await;
    assert!(many.contains("declares 100001 tools; a plugin may declare at most 128"), "{many}");

    let long = refused_load(json!({"description": "d".repeat(10_000_000)})).await;
    assert!(long.contains("the description of tool `h.run` is 10000000 bytes; the most is 4096"), "{long}");

    let schema =
        refused_load(json!({"parameters": "{\"type\":\"object\",\"x\":\"".to_owned() + &"s".repeat(20_000) + "\"}"}))
            .await;
    assert!(schema.contains("the parameters schema of tool `h.run` is 20024 bytes; the most is 16384"), "{schema}");

    // Within the per-tool bounds, the whole listing must fit the output cap.
    let fx = Fixture::new();
    let small_cap = Limits { output_bytes: 10_000, ..Limits::default() };
    let config = json!({"tools": 120, "description": "d".repeat(4000)});
    let error = Host::open(fx.config(vec![hostile(config, small_cap)])).await.err().expect("refused");
    assert!(error.to_string().contains("over its output cap of 10000 bytes"), "{error}");

    let refusal = refused_load(json!({"refusal": "r".repeat(5_000_000)})).await;
    assert!(refusal.len() < 10_000, "a refusal message is cut: {} bytes", refusal.len());
}

#[tokio::test]
async fn tool_parameters_must_be_a_json_schema_for_an_object() {
    for (parameters, expected) in [
        (r#"{"type":12}"#, "has type 12; tool arguments are a JSON object"),
        ("[]", "is not a JSON Schema object"),
        (r#"{"type":"object","properties":{"a":{"type":"strin"}}}"#, "is not a valid JSON Schema (2020-12)"),
        (r#"{"type":"object","required":"a"}"#, "is not a valid JSON Schema (2020-12)"),
    ] {
        let error = refused_load(json!({ "parameters": parameters })).await;
        assert!(
            error.contains("the parameters schema of tool `h.run`") && error.contains(expected),
            "{parameters}: {error}"
        );
    }
}

#[tokio::test]
async fn a_million_empty_injections_break_the_contract_and_nothing_is_stored() {
    let fx = Fixture::new();
    // A deadline long enough to return them all on a busy machine: the count is what is refused.
    let patient = Limits { call_timeout: Duration::from_secs(30), ..Limits::default() };
    let host = fx.open(vec![scratchpad(json!({})), hostile(json!({"guidanceItems": 1_000_000}), patient)]).await;
    let before = dump_all(&fx.db());
    match host.create_session("s", Origin::New).await {
        Err(Error::Plugin { failure: PluginFailure::Contract(message), hook, .. }) => {
            assert_eq!(hook, "before-session-create");
            assert_eq!(message, "it returned 1000000 injections; one call may return at most 64");
        }
        other => panic!("expected a contract breach, got {other:?}"),
    }
    assert_eq!(dump_all(&fx.db()), before, "no session and no guidance were stored");

    // Each item counts against the output cap with its overhead, not only its text.
    let fx = Fixture::new();
    let cap = Limits { output_bytes: 60 * 64 - 1, ..Limits::default() };
    let host = fx.open(vec![hostile(json!({"queryItems": 60}), cap)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let before = dump_all(&fx.db());
    match host.before_query(&turn("s", "t1"), "hi").await {
        Err(Error::Plugin { failure: PluginFailure::OutputTooLarge { size, .. }, .. }) => assert_eq!(size, 60 * 64),
        other => panic!("expected the output cap, got {other:?}"),
    }
    let after = dump_all(&fx.db());
    assert_eq!(
        after.lines().filter(|l| l.starts_with("plugin_state")).collect::<Vec<_>>(),
        before.lines().filter(|l| l.starts_with("plugin_state")).collect::<Vec<_>>(),
        "the refused call's write was kept"
    );
}

#[tokio::test]
async fn a_file_plugin_cannot_claim_the_built_in_scratchpads_data() {
    let fx = Fixture::new();
    let host = fx.host().await;
    host.create_session("s", Origin::New).await.unwrap();
    host.call_tool(&turn("s", "t1"), "session.scratchpad", r#"{"action":"set_notes","content":"secret"}"#)
        .await
        .unwrap();
    drop(host);

    // A file named scratchpad.wasm, loaded without the built-in, would be named `scratchpad`.
    let impostor = fx.dir.path().join("scratchpad.wasm");
    std::fs::copy(components::HOSTILE_PATH, &impostor).unwrap();
    let spec = trusted(&impostor);
    assert_eq!(spec.name, "scratchpad");
    let error = Host::open(fx.config(vec![spec])).await.err().expect("the impostor was loaded");
    assert!(error.to_string().contains("the name `scratchpad` is reserved for the embedded component"), "{error}");
}

#[tokio::test]
async fn a_name_belongs_to_the_component_that_first_stored_under_it_until_an_upgrade() {
    let fx = Fixture::new();
    let mine = |path: &str| PluginSpec { name: "mine".into(), ..trusted(path) };
    let host = fx.open(vec![mine(components::PROBE_PATH)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host.call_tool(&turn("s", "t1"), "probe.write", r#"{"key":"k","value":"probe's"}"#).await.unwrap();
    drop(host);

    // The same component again: its data.
    let host = fx.open(vec![mine(components::PROBE_PATH)]).await;
    assert_eq!(host.call_tool(&turn("s", "t2"), "probe.read", r#"{"key":"k"}"#).await.unwrap().content, "probe's");
    drop(host);

    // Another component under the same name: refused, naming both identities.
    let error = Host::open(fx.config(vec![mine(components::HOSTILE_PATH)])).await.err().expect("refused");
    let message = error.to_string();
    assert!(message.contains("belongs to another component (sha256:"), "{message}");
    let hostile = digest_of(components::HOSTILE_PATH);
    assert!(message.contains(&format!("upgrade = \"{hostile}\"")), "{message}");

    // The operator says it is a new version of the same plugin: it takes the name over, and
    // from then on the old component is the stranger.
    fx.open(vec![mine(components::HOSTILE_PATH).upgrading_to(&hostile)]).await;
    fx.open(vec![mine(components::HOSTILE_PATH)]).await;
    let error = Host::open(fx.config(vec![mine(components::PROBE_PATH)])).await.err().expect("refused");
    assert!(error.to_string().contains("belongs to another component"), "{error}");
}

#[tokio::test]
async fn stored_observations_have_a_bounded_lifetime_and_count_per_call() {
    let fx = Fixture::new();
    let host = host_with(&fx, json!({"resultCopies": 1023, "resultTtl": u64::MAX}), Limits::default()).await;
    let observation = Observation::text("o".repeat(1 << 20));
    let seen = host.after_tool_result(&turn("s", "t1"), &ToolCall::new("fetch", "{}", 1), &observation).await.unwrap();
    let answer = seen.replacement.unwrap();
    assert!(
        answer.starts_with("stored 4, then: BlobError::Invalid(") && answer.contains("at most 4 entries"),
        "{answer}"
    );

    let stored = host.observations("s").await.unwrap();
    assert_eq!(stored.len(), 4, "the copies within the bound are committed");
    let day_from_now = (std::time::SystemTime::now() + Duration::from_secs(86_400 + 60))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for entry in stored {
        assert!(entry.expires_at_ms <= day_from_now, "TTL u64::MAX kept: expires at {}", entry.expires_at_ms);
    }
}

#[tokio::test]
async fn metadata_depth_and_key_counts_are_bounded_as_values_the_plugin_handles() {
    let fx = Fixture::new();
    let host = host_with(&fx, json!({}), Limits::default()).await;

    let deep = attack(&host, "s", json!({"attack": "metadata", "depth": 1_000_000})).await.unwrap();
    assert!(deep.contains("Invalid") && deep.contains("1000000 levels deep; the most is 32"), "{deep}");
    assert!(host.metadata("s").await.unwrap().is_empty());

    // The plugin's `before-session-create` stored one key (`was-here`): 1,023 more fit.
    let keys = attack(&host, "s", json!({"attack": "keys", "count": 100_000})).await.unwrap();
    assert!(keys.starts_with("stored 1023 keys, then: StorageError::InvalidKey("), "{keys}");
    assert!(keys.contains("already keeps 1024 keys"), "{keys}");
    let state = host.state("s").await.unwrap();
    assert_eq!(state.iter().filter(|e| e.plugin == "hostile").count(), 1024);
    // Other sessions have their own count.
    let other = attack(&host, "other", json!({"attack": "keys", "count": 10})).await.unwrap();
    assert_eq!(other, "stored 10 keys");
}

#[tokio::test]
async fn failures_say_what_happened() {
    let fx = Fixture::new();
    let host = host_with(&fx, json!({}), Limits::default()).await;
    match attack(&host, "s", json!({"attack": "exit", "code": 7})).await {
        Err(error @ Error::Plugin { failure: PluginFailure::Exited { success: false }, .. }) => {
            let message = error.to_string();
            assert!(message.contains("exited (WASI exit, failure) instead of returning"), "{message}");
            assert!(message.contains("WASI 0.2 passes no exit code"), "{message}");
        }
        other => panic!("expected an exit, got {other:?}"),
    }
}
