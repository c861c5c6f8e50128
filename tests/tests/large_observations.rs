//! The large-observation store, through the real host: offload above the
//! threshold, the synthetic observation, `scratchpad_read` in every mode, `{{stepN.field}}`
//! resolved against the full stored content, turn isolation, TTL and GC, and a 100 MB
//! observation offloaded while the guest's memory stays flat.

use std::time::Duration;

use base64::Engine as _;
use scratchpad_host::{Error, Limits, Observation, Origin, PluginSpec, ToolCall, ToolErrorKind, TurnContext};
use scratchpad_tests::{Fixture, big_log, dump_all, turn};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

scratchpad_tests::on_both_backends!(
    the_89_kb_log_is_offloaded_summarised_read_in_slices_and_resolved_in_full,
    observations_below_the_threshold_pass_through_unchanged,
    a_binary_observation_is_summarised_by_size_and_sha256_and_read_as_base64,
    another_turns_or_sessions_id_is_not_found_exactly_like_an_unknown_id,
    expired_entries_are_refused_and_collected_at_the_start_of_the_next_turn,
    gc_on_demand_removes_only_expired_entries,
    bad_reads_are_clear_errors_that_change_nothing,
    a_100_mb_observation_is_offloaded_while_guest_memory_stays_flat,
    past_the_blob_quota_the_model_gets_the_summary_and_the_reason,
    a_tools_ttl_seconds_metadata_gives_its_entry_its_own_lifetime,
    tool_hooks_chain_each_plugin_seeing_what_the_one_before_it_handed_on,
);

/// The embedded observations plugin with `config` and a deadline for behaviour, not speed,
/// on a loaded test machine (deadlines are tested with the probe component).
fn observations(config: Value) -> PluginSpec {
    let limits = Limits { call_timeout: Duration::from_secs(10), ..Limits::default() };
    PluginSpec::embedded("observations").with_config(config).with_limits(limits)
}

async fn offload(host: &scratchpad_host::Host, turn: &TurnContext, step: u32, observation: Observation) -> Value {
    let view = host.after_tool_result(turn, &ToolCall::new("fs_read", "{}", step), &observation).await.unwrap();
    assert_eq!(view.replaced_by.as_deref(), Some("observations"));
    serde_json::from_str(&view.replacement.unwrap()).unwrap()
}

async fn read(host: &scratchpad_host::Host, turn: &TurnContext, args: Value) -> scratchpad_host::Result<Value> {
    let out = host.call_tool(turn, "scratchpad_read", &args.to_string()).await?;
    Ok(serde_json::from_str(&out.content).unwrap())
}

fn offered(tools: &[scratchpad_host::ToolSpec]) -> bool {
    tools.iter().any(|t| t.name == "scratchpad_read")
}

async fn the_89_kb_log_is_offloaded_summarised_read_in_slices_and_resolved_in_full(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    assert!(!offered(&host.tools(&t1).await.unwrap()), "no entries yet: the tool is not offered");

    let log = big_log();
    let metadata = json!({ "path": "/tmp/big_log.txt", "bytes": 89042, "encoding": "utf-8" });
    let seen = offload(&host, &t1, 1, Observation::text(log.clone()).with_metadata(metadata.clone())).await;
    assert_eq!(seen["ok"], true);
    let id = seen["scratchpad_id"].as_str().unwrap().to_owned();
    assert!(id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{id}");
    assert_eq!((seen["size_bytes"].as_u64(), seen["kind"].as_str()), (Some(89_042), Some("text")));
    let expected =
        format!("{}\n[... {} characters omitted ...]\n{}", &log[..500], 89_042 - 1000, &log[log.len() - 500..]);
    assert_eq!(seen["summary"], expected);
    assert_eq!(seen["metadata"], metadata);
    assert!(seen["_note"].as_str().unwrap().contains("scratchpad_read"));
    assert!(offered(&host.tools(&t1).await.unwrap()), "offered while the turn has entries");

    let head = read(&host, &t1, json!({ "scratchpad_id": id, "mode": "head", "n": 100 })).await.unwrap();
    assert_eq!(head["content"], log[..100]);
    let tail = read(&host, &t1, json!({ "scratchpad_id": id, "mode": "tail", "n": 46 })).await.unwrap();
    assert_eq!(tail["content"], "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n");
    let range =
        read(&host, &t1, json!({ "scratchpad_id": id, "mode": "range", "start": 1000, "end": 1100 })).await.unwrap();
    assert_eq!(range["content"], log[1000..1100]);
    let lines = read(&host, &t1, json!({ "scratchpad_id": id, "mode": "lines", "start_line": 2, "end_line": 3 }))
        .await
        .unwrap();
    assert_eq!(lines["content"], log.split_inclusive('\n').skip(1).take(2).collect::<String>());
    let grep =
        read(&host, &t1, json!({ "scratchpad_id": id, "mode": "grep", "pattern": "LAST_CRITICAL" })).await.unwrap();
    let matches = grep["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{grep}");
    assert_eq!(matches[0]["line"], 2096);

    // Step 2 refers to step 1's content: the full 89,042 bytes, not the summary.
    let write = ToolCall::new("fs_write", r#"{"path":"/tmp/out.txt","content":"{{step1.content}}"}"#, 2);
    let resolved: Value = serde_json::from_str(&host.before_tool_call(&t1, &write).await.unwrap()).unwrap();
    assert_eq!(resolved["path"], "/tmp/out.txt");
    assert_eq!(resolved["content"].as_str().unwrap().len(), 89_042);
    assert_eq!(resolved["content"], log);
    let unknown = ToolCall::new("fs_write", r#"{"content":"{{step7.content}}"}"#, 2);
    let err = host.before_tool_call(&t1, &unknown).await.unwrap_err();
    assert!(matches!(&err, Error::Tool { error, .. } if error.kind == ToolErrorKind::InvalidArguments), "{err}");

    let stored = host.observations("s").await.unwrap();
    assert_eq!((stored.len(), stored[0].size_bytes, stored[0].step), (1, 89_042, 1));
}

async fn observations_below_the_threshold_pass_through_unchanged(fx: Fixture) {
    let host = fx.open(vec![observations(json!({ "thresholdBytes": 4096 }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let small = Observation::text("x".repeat(4096));
    let view = host.after_tool_result(&turn("s", "t1"), &ToolCall::new("fs_read", "{}", 1), &small).await.unwrap();
    assert_eq!(view.replacement, None);
    assert!(host.observations("s").await.unwrap().is_empty());
}

async fn a_binary_observation_is_summarised_by_size_and_sha256_and_read_as_base64(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let bytes: Vec<u8> = (0..45_123u32).map(|i| (i * 7 % 256) as u8).collect();
    let seen = offload(&host, &t1, 1, Observation::bytes(bytes.clone())).await;
    let sha = hex::encode(Sha256::digest(&bytes));
    assert_eq!(seen["kind"], "binary");
    assert_eq!(seen["summary"], format!("[BINARY: 45123 bytes, sha256={sha}]"));
    let id = seen["scratchpad_id"].as_str().unwrap();
    let head =
        read(&host, &t1, json!({ "scratchpad_id": id, "mode": "range", "start": 100, "end": 164 })).await.unwrap();
    let decoded = base64::engine::general_purpose::STANDARD.decode(head["content_base64"].as_str().unwrap()).unwrap();
    assert_eq!(decoded, bytes[100..164]);
}

async fn another_turns_or_sessions_id_is_not_found_exactly_like_an_unknown_id(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host.create_session("other", Origin::New).await.unwrap();
    let seen = offload(&host, &turn("s", "t1"), 1, Observation::text(big_log())).await;
    let id = seen["scratchpad_id"].as_str().unwrap();

    let refusal = |result: scratchpad_host::Result<Value>, id: &str| match result {
        Err(Error::Tool { error, .. }) => (error.kind, error.message.replace(id, "<id>")),
        other => panic!("expected not-found, got {other:?}"),
    };
    let unknown = refusal(
        read(&host, &turn("s", "t2"), json!({ "scratchpad_id": "0123456789abcdef" })).await,
        "0123456789abcdef",
    );
    let later_turn = refusal(read(&host, &turn("s", "t2"), json!({ "scratchpad_id": id })).await, id);
    assert_eq!(unknown.0, ToolErrorKind::NotFound);
    assert_eq!(later_turn, unknown, "an id from another turn reads exactly like an unknown id");
    assert!(!offered(&host.tools(&turn("s", "t2")).await.unwrap()), "not offered in a turn without entries");
    // Another session cannot reach it either (the host scopes the blob store).
    host.call_tool(&turn("other", "t1"), "scratchpad_read", "{}").await.unwrap_err();
    let other = refusal(read(&host, &turn("other", "t1"), json!({ "scratchpad_id": id })).await, id);
    assert_eq!(other.0, ToolErrorKind::NotFound);
}

async fn expired_entries_are_refused_and_collected_at_the_start_of_the_next_turn(fx: Fixture) {
    let host = fx.open(vec![observations(json!({ "ttlSeconds": 1 }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let seen = offload(&host, &t1, 1, Observation::text(big_log())).await;
    let id = seen["scratchpad_id"].as_str().unwrap();
    // Read once while it lives: the host now knows the entry (and serves its facts from memory
    // until it expires).
    read(&host, &t1, json!({ "scratchpad_id": id })).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let err = read(&host, &t1, json!({ "scratchpad_id": id })).await.unwrap_err();
    assert!(err.to_string().contains("expired"), "{err}");
    assert_eq!(host.observations("s").await.unwrap().len(), 1, "still stored until a GC");
    host.tools(&turn("s", "t2")).await.unwrap();
    assert!(host.observations("s").await.unwrap().is_empty(), "the next turn's start collects it");
    let gone = read(&host, &turn("s", "t2"), json!({ "scratchpad_id": id })).await.unwrap_err();
    assert!(!gone.to_string().contains("expired"), "collected, so no longer known at all: {gone}");
}

async fn gc_on_demand_removes_only_expired_entries(fx: Fixture) {
    let host = fx.open(vec![observations(json!({ "ttlSeconds": 1 }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    offload(&host, &turn("s", "t1"), 1, Observation::text(big_log())).await;
    let on_sqlite = matches!(fx.database, scratchpad_host::Location::Sqlite(_));
    assert_eq!(fx.observation_files(), usize::from(on_sqlite), "SQLite keeps the content in a file of its own");
    assert_eq!(host.gc().await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(host.gc().await.unwrap(), 1);
    let rows = dump_all(&fx.database);
    assert!(!rows.contains("observation_chunks:"), "an entry's content goes with it: {rows}");
    assert_eq!(fx.observation_files(), 0, "its content file too");
}

async fn bad_reads_are_clear_errors_that_change_nothing(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let seen = offload(&host, &t1, 1, Observation::text(big_log())).await;
    let id = seen["scratchpad_id"].as_str().unwrap();
    let before = dump_all(&fx.database);
    let cases = [
        (json!({}), "scratchpad_id"),
        (json!({ "scratchpad_id": 7 }), "scratchpad_id"),
        (json!({ "scratchpad_id": id, "mode": "middle" }), "mode"),
        (json!({ "scratchpad_id": id, "mode": "head", "n": -5 }), "n"),
        (json!({ "scratchpad_id": id, "mode": "head", "n": "ten" }), "n"),
        (json!({ "scratchpad_id": id, "mode": "range", "start": 50, "end": 10 }), "end"),
        (json!({ "scratchpad_id": id, "mode": "range", "start": -1, "end": 10 }), "start"),
        (json!({ "scratchpad_id": id, "mode": "lines", "start_line": 0, "end_line": 3 }), "start_line"),
        (json!({ "scratchpad_id": id, "mode": "grep", "pattern": "(unclosed" }), "pattern"),
    ];
    for (args, field) in cases {
        let err = read(&host, &t1, args.clone()).await.unwrap_err();
        match &err {
            Error::Tool { error, .. } => {
                assert_eq!(error.kind, ToolErrorKind::InvalidArguments, "{args}: {err}");
                assert!(error.message.contains(field), "{args}: the message should name `{field}`: {err}");
            }
            other => panic!("{args}: expected invalid-arguments, got {other}"),
        }
    }
    let past_end =
        read(&host, &t1, json!({ "scratchpad_id": id, "mode": "range", "start": 89_000, "end": 99_000 })).await;
    let past_end = past_end.unwrap();
    assert_eq!(past_end["content"].as_str().unwrap().len(), 42, "clamped to the end");
    assert!(past_end["note"].is_string(), "and says so: {past_end}");
    assert_eq!(dump_all(&fx.database), before);
}

async fn a_100_mb_observation_is_offloaded_while_guest_memory_stays_flat(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let line = "INFO 2026-04-26 10:00:01 a line of a very large log, repeated\n";
    let big = line.repeat(100_000_000 / line.len() + 1);
    assert!(big.len() >= 100_000_000);

    let seen = offload(&host, &t1, 1, Observation::text(big.clone())).await;
    let memory = host.last_call_memory("observations").unwrap();
    let (initial, peak) = (memory.initial_bytes, memory.peak_bytes);
    assert!(initial > 0, "the limiter saw the instance's memory");
    let growth = peak - initial;
    assert!(growth <= 2 << 20, "guest memory grew by {growth} bytes offloading {} bytes", big.len());
    assert_eq!(seen["size_bytes"].as_u64(), Some(big.len() as u64));

    let id = seen["scratchpad_id"].as_str().unwrap();
    let start = big.len() - 2048;
    let slice =
        read(&host, &t1, json!({ "scratchpad_id": id, "mode": "range", "start": start, "end": big.len() })).await;
    assert_eq!(slice.unwrap()["content"], big[start..]);
}

async fn past_the_blob_quota_the_model_gets_the_summary_and_the_reason(fx: Fixture) {
    let limits = Limits { call_timeout: Duration::from_secs(10), blob_quota_bytes: 200_000, ..Limits::default() };
    let host = fx.open(vec![observations(json!({})).with_limits(limits)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let first = offload(&host, &t1, 1, Observation::text(big_log())).await;
    assert_eq!(first["scratchpad_id"].as_str().map(str::len), Some(16));
    let second = offload(&host, &t1, 2, Observation::text(big_log())).await;
    assert!(second["scratchpad_id"].is_string(), "two 89,042-byte entries fit in 200,000 bytes");
    let third = offload(&host, &t1, 3, Observation::text(big_log())).await;
    assert!(third.get("scratchpad_id").is_none(), "{third}");
    assert!(third["summary"].as_str().unwrap().contains("LAST_CRITICAL_EVENT"), "the summary is still shown");
    let note = third["_note"].as_str().unwrap();
    assert!(note.contains("use 178084 of their 200000 bytes and this one has 89042"), "{note}");
    assert_eq!(host.observations("s").await.unwrap().len(), 2);
}

async fn a_tools_ttl_seconds_metadata_gives_its_entry_its_own_lifetime(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let short = Observation::text(big_log()).with_metadata(json!({ "ttl_seconds": 60 }));
    offload(&host, &t1, 1, short).await;
    offload(&host, &t1, 2, Observation::text(big_log())).await;
    let entries = host.observations("s").await.unwrap();
    let lifetimes: Vec<u64> = entries.iter().map(|e| e.expires_at_ms - e.created_at_ms).collect();
    assert_eq!(lifetimes, [60_000, 3_600_000]);
}

async fn tool_hooks_chain_each_plugin_seeing_what_the_one_before_it_handed_on(fx: Fixture) {
    let echo = scratchpad_tests::probe("probe", "p").with_config(json!({ "prefix": "p", "chainMode": "echo" }));
    let host = fx.open(vec![observations(json!({})), echo]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");

    // after-tool-result: the probe sees the observations plugin's synthetic observation, not the log.
    let view = host.after_tool_result(&t1, &ToolCall::new("fs_read", "{}", 1), &Observation::text(big_log())).await;
    let view = view.unwrap();
    assert_eq!(view.replaced_by.as_deref(), Some("probe"));
    let seen = view.replacement.unwrap();
    assert!(seen.starts_with("probe saw ") && seen.ends_with(r#"starting "{\"ok\":true,\"scratchpad_i""#), "{seen}");
    let size: usize = seen["probe saw ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(size < 2_000, "the probe was handed the short synthetic observation ({size} bytes)");

    // before-tool-call: the probe sees the arguments with {{step1.content}} already resolved.
    let call = ToolCall::new("fs_write", r#"{"content":"{{step1.content}}"}"#, 2);
    let arguments: Value = serde_json::from_str(&host.before_tool_call(&t1, &call).await.unwrap()).unwrap();
    assert_eq!(arguments["saw_start"], r#"{"content":"INFO 2026-04"#);
    assert!(arguments["saw_bytes"].as_u64().unwrap() > 89_042, "{arguments}");
}

/// Before schema version 5, SQLite kept an entry's content in 64 KiB rows of
/// `observation_chunks` instead of a file; such entries read exactly as before, across chunk
/// boundaries too, and their collection removes their chunks.
#[tokio::test]
async fn an_entry_stored_in_chunks_by_an_earlier_version_still_reads() {
    let fx = Fixture::new();
    let host = fx.open(vec![observations(json!({ "ttlSeconds": 1 }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let log = big_log();
    let id = offload(&host, &t1, 1, Observation::text(log.clone())).await["scratchpad_id"].as_str().unwrap().to_owned();
    // Rewrite the entry the way schema version 4 stored it.
    let file = fx.observation_file(&id);
    let content = std::fs::read(&file).unwrap();
    let conn = rusqlite::Connection::open(fx.db()).unwrap();
    for (seq, chunk) in content.chunks(65_536).enumerate() {
        conn.execute(
            "INSERT INTO observation_chunks (id, seq, data) VALUES (?1, ?2, ?3)",
            rusqlite::params![id, seq as i64, chunk],
        )
        .unwrap();
    }
    conn.execute("UPDATE observations SET content_in_file = 0 WHERE id = ?1", [&id]).unwrap();
    std::fs::remove_file(&file).unwrap();

    for (start, end) in [(0, 100), (65_500, 65_600), (log.len() - 50, log.len())] {
        let got = read(&host, &t1, json!({ "scratchpad_id": id, "mode": "range", "start": start, "end": end })).await;
        assert_eq!(got.unwrap()["content"], log[start..end], "bytes {start}..{end}");
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(host.gc().await.unwrap(), 1);
    let chunks: i64 = conn.query_row("SELECT COUNT(*) FROM observation_chunks", [], |r| r.get(0)).unwrap();
    assert_eq!(chunks, 0, "the chunks go with their entry");
}
