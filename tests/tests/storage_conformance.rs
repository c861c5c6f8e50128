//! One storage conformance suite, every backend: each behaviour the host promises of its
//! database is written once below and run against a SQLite file and a fresh database on a
//! real PostgreSQL server (started by the test process; see `scratchpad_tests::postgres`).
//! Two hosts on one database stand for two processes: each has its own per-session locks, so
//! their operations race exactly as separate processes' do.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scratchpad_host::{
    CheckpointTrigger, Error, Host, HostConfig, Limits, Observation, Origin, PluginSpec, Summarizer, Summary,
    SummaryFuture, SummaryRequest, ToolCall, ToolErrorKind, TurnContext,
};
use scratchpad_tests::{Fixture, components, digest_of, probe, refusal, scratchpad, trusted, turn};
use serde_json::{Value, json};

scratchpad_tests::on_both_backends!(
    sessions_are_created_once_with_their_origin,
    a_failed_call_keeps_nothing_and_a_successful_one_everything,
    no_update_is_lost_and_no_budget_exceeded_across_hosts,
    no_update_is_lost_when_every_call_enters_a_new_turn,
    forks_copy_state_and_spawns_start_empty_unless_asked,
    blob_ranges_return_exactly_the_bytes_asked_for,
    a_damaged_observation_is_an_error_not_a_shorter_read,
    expired_entries_are_collected_once_by_concurrent_collectors,
    checkpoint_ids_are_unique_and_linked_in_order_across_hosts,
    many_hosts_opening_a_fresh_database_at_once_agree_on_its_schema,
    a_plugin_name_stays_bound_to_the_component_that_owns_its_data,
    turns_and_compactions_are_counted_once,
    keys_with_nul_are_refused_and_change_nothing,
    every_operation_sees_what_another_host_committed,
    racing_offloads_keep_exactly_the_committed_observations,
);

async fn append(host: &Host, session: &str, line: &str) -> scratchpad_host::Result<String> {
    let args = json!({ "action": "append_notes", "content": line }).to_string();
    host.call_tool(&turn(session, "t1"), "session.scratchpad", &args).await.map(|out| out.content)
}

/// The scratchpad plugin's value under `key` in `session`, read through the host.
async fn stored(host: &Host, session: &str, key: &str) -> Option<String> {
    let state = host.state(session).await.unwrap();
    state
        .into_iter()
        .find(|e| e.plugin == "scratchpad" && e.key == key)
        .map(|e| String::from_utf8(e.value).expect("stored text is UTF-8"))
}

/// Every injected text of a `before_query` in turn `t1`, joined.
async fn prompt(host: &Host, session: &str) -> String {
    let prompt = host.before_query(&turn(session, "t1"), "next").await.unwrap();
    prompt.injections.into_iter().map(|i| i.text).collect::<Vec<_>>().join("\n")
}

/// A host keeps the state of the sessions it used in memory (the hot sessions) and serves
/// operations from it while the session is provably unchanged; a commit by another host (a
/// process of its own) must show in the very next operation, reads included, on either side.
async fn every_operation_sees_what_another_host_committed(fx: Fixture) {
    let (a, b) = (fx.open(vec![scratchpad(json!({}))]).await, fx.open(vec![scratchpad(json!({}))]).await);
    a.create_session("s", Origin::New).await.unwrap();
    append(&a, "s", "first, from a").await.unwrap();
    for _ in 0..3 {
        assert!(prompt(&a, "s").await.contains("first, from a"));
    }
    append(&b, "s", "second, from b").await.unwrap();
    let seen = prompt(&a, "s").await;
    assert!(seen.contains("first, from a") && seen.contains("second, from b"), "{seen}");
    append(&a, "s", "third, from a").await.unwrap();
    for host in [&a, &b, &a] {
        let seen = prompt(host, "s").await;
        assert!(seen.contains("second, from b") && seen.contains("third, from a"), "{seen}");
    }
    let set = json!({ "action": "set_notes", "content": "replaced by b" }).to_string();
    b.call_tool(&turn("s", "t1"), "session.scratchpad", &set).await.unwrap();
    let seen = prompt(&a, "s").await;
    assert!(seen.contains("replaced by b") && !seen.contains("first, from a"), "{seen}");
    assert_eq!(stored(&a, "s", "notes").await.as_deref(), stored(&b, "s", "notes").await.as_deref());
}

async fn sessions_are_created_once_with_their_origin(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    let guidance = host.create_session("a", Origin::New).await.unwrap();
    assert!(!guidance.is_empty(), "the scratchpad's standing guidance");
    let again = host.create_session("a", Origin::New).await.unwrap_err();
    assert!(matches!(&again, Error::SessionExists(id) if id == "a"), "{again}");
    let orphan = host.create_session("b", Origin::Fork { parent: "missing".into() }).await.unwrap_err();
    assert!(matches!(&orphan, Error::SessionNotFound(id) if id == "missing"), "{orphan}");
    host.create_session("c", Origin::Spawn { parent: "a".into(), copy: true }).await.unwrap();

    let listed: Vec<String> = host.sessions().await.unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, ["a", "c"], "oldest first; the refused ones were never stored");
    let c = host.session("c").await.unwrap();
    assert_eq!(c.origin, Origin::Spawn { parent: "a".into(), copy: true });
    assert_eq!((c.turn_id, c.turn_index, c.compaction_count), (None, -1, 0));
    assert_eq!(c.guidance, guidance, "the guidance is stored with the session");
    assert!(matches!(host.session("b").await, Err(Error::SessionNotFound(_))));
}

async fn a_failed_call_keeps_nothing_and_a_successful_one_everything(fx: Fixture) {
    let host = fx.open(vec![probe("p", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    let args = json!({ "key": "k", "value": "v1", "mark": "m1" }).to_string();
    assert_eq!(host.call_tool(&t, "p.write", &args).await.unwrap().content, "ok");
    let trap = json!({ "key": "k", "value": "v2", "mark": "m2" }).to_string();
    let err = host.call_tool(&t, "p.write_then_trap", &trap).await.unwrap_err();
    assert!(matches!(err, Error::Plugin { .. }), "{err}");
    let state: Vec<(String, Vec<u8>)> = host.state("s").await.unwrap().into_iter().map(|e| (e.key, e.value)).collect();
    assert_eq!(state, [("k".to_owned(), b"v1".to_vec()), ("m1".to_owned(), b"marked".to_vec())]);
}

async fn no_update_is_lost_and_no_budget_exceeded_across_hosts(fx: Fixture) {
    const BUDGET: usize = 600;
    let config = || vec![scratchpad(json!({ "notesMaxChars": BUDGET }))];
    let hosts = [fx.open(config()).await, fx.open(config()).await];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    let mut tasks = Vec::new();
    for k in 0..8 {
        let host = hosts[k % 2].clone();
        tasks.push(tokio::spawn(async move {
            let mut outcome = (Vec::new(), Vec::new());
            for i in 0..12 {
                let line = format!("line-{k:02}-{i:02}");
                match append(&host, "s", &line).await {
                    Ok(_) => outcome.0.push(line),
                    Err(Error::Tool { error, .. }) if error.kind == ToolErrorKind::Rejected => outcome.1.push(line),
                    Err(other) => panic!("append failed: {other}"),
                }
            }
            outcome
        }));
    }
    let (mut accepted, mut rejected) = (BTreeSet::new(), BTreeSet::new());
    for task in tasks {
        let (a, r) = task.await.unwrap();
        accepted.extend(a);
        rejected.extend(r);
    }
    assert!(!rejected.is_empty(), "96 lines of 11 chars overflow a {BUDGET}-char budget");
    let notes = stored(&hosts[1], "s", "notes").await.unwrap();
    let lines: Vec<String> = notes.lines().map(str::to_owned).collect();
    let stored: BTreeSet<String> = lines.iter().cloned().collect();
    assert_eq!(stored.len(), lines.len(), "no line is stored twice");
    assert_eq!(stored, accepted, "exactly the accepted appends are stored");
    assert!(notes.chars().count() <= BUDGET, "the budget holds under the race");
}

/// Entering a turn writes the session's row at the start of an operation; an operation that
/// enters one while another host commits must still read state and version of one moment.
async fn no_update_is_lost_when_every_call_enters_a_new_turn(fx: Fixture) {
    let config = || vec![scratchpad(json!({ "notesMaxChars": 1_000_000 }))];
    let hosts = [fx.open(config()).await, fx.open(config()).await];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    let mut tasks = Vec::new();
    for k in 0..8 {
        let host = hosts[k % 2].clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..40 {
                let args = json!({ "action": "append_notes", "content": format!("line-{k}-{i}") }).to_string();
                let t = turn("s", &format!("turn-{k}-{i}"));
                host.call_tool(&t, "session.scratchpad", &args).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let notes = stored(&hosts[0], "s", "notes").await.unwrap();
    let lines: BTreeSet<&str> = notes.lines().collect();
    assert_eq!((lines.len(), notes.lines().count()), (320, 320), "every append stored exactly once");
    let entered = hosts[1].session("s").await.unwrap().turn_index;
    assert!(entered >= 319, "each call entered a turn of its own (a re-run enters again): {entered}");
}

async fn forks_copy_state_and_spawns_start_empty_unless_asked(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    host.create_session("a", Origin::New).await.unwrap();
    append(&host, "a", "parent line").await.unwrap();
    host.create_session("fork", Origin::Fork { parent: "a".into() }).await.unwrap();
    host.create_session("spawn", Origin::Spawn { parent: "a".into(), copy: false }).await.unwrap();
    host.create_session("copy", Origin::Spawn { parent: "a".into(), copy: true }).await.unwrap();
    assert_eq!(stored(&host, "fork", "notes").await.as_deref(), Some("parent line"));
    assert_eq!(stored(&host, "copy", "notes").await.as_deref(), Some("parent line"));
    assert_eq!(stored(&host, "spawn", "notes").await, None);
    append(&host, "fork", "child line").await.unwrap();
    assert_eq!(stored(&host, "a", "notes").await.as_deref(), Some("parent line"), "the parent is untouched");
}

/// The embedded observations plugin, which offloads large observations into the blob store.
fn observations(config: Value) -> PluginSpec {
    let limits = Limits { call_timeout: Duration::from_secs(10), ..Limits::default() };
    PluginSpec::embedded("observations").with_config(config).with_limits(limits)
}

async fn offload(host: &Host, t: &TurnContext, step: u32, observation: Observation) -> String {
    let view = host.after_tool_result(t, &ToolCall::new("fs_read", "{}", step), &observation).await.unwrap();
    let seen: Value = serde_json::from_str(&view.replacement.expect("offloaded")).unwrap();
    seen["scratchpad_id"].as_str().unwrap().to_owned()
}

async fn blob_ranges_return_exactly_the_bytes_asked_for(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    // 300,000 bytes: four full 64 KiB chunks and a partial fifth; no two lines alike.
    let text: String = (0..30_000).map(|i| format!("{i:09}\n")).collect();
    assert_eq!(text.len(), 300_000);
    let id = offload(&host, &t, 1, Observation::text(text.clone())).await;
    let read = |args: Value| {
        let host = host.clone();
        let t = t.clone();
        async move {
            let out = host.call_tool(&t, "scratchpad_read", &args.to_string()).await.unwrap();
            serde_json::from_str::<Value>(&out.content).unwrap()["content"].as_str().unwrap().to_owned()
        }
    };
    for (start, end) in [(0, 10), (65_530, 65_546), (65_536, 65_537), (131_000, 200_000), (299_990, 300_000)] {
        let got = read(json!({ "scratchpad_id": id, "mode": "range", "start": start, "end": end })).await;
        assert_eq!(got, text[start..end], "bytes {start}..{end}");
    }
    assert_eq!(read(json!({ "scratchpad_id": id, "mode": "tail", "n": 20 })).await, text[299_980..]);
    let entries = host.observations("s").await.unwrap();
    assert_eq!((entries.len(), entries[0].size_bytes, entries[0].id.as_str()), (1, 300_000, id.as_str()));
    use sha2::Digest;
    assert_eq!(entries[0].sha256, hex::encode(sha2::Sha256::digest(text.as_bytes())));
}

async fn a_damaged_observation_is_an_error_not_a_shorter_read(fx: Fixture) {
    let host = fx.open(vec![observations(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    let text: String = (0..30_000).map(|i| format!("{i:09}\n")).collect();
    let id = offload(&host, &t, 1, Observation::text(text.clone())).await;
    fx.damage_observation(&id, 131_072);
    let range = |start: usize, end: usize| json!({ "scratchpad_id": id, "mode": "range", "start": start, "end": end });
    let intact = host.call_tool(&t, "scratchpad_read", &range(0, 100).to_string()).await.unwrap();
    let intact: Value = serde_json::from_str(&intact.content).unwrap();
    assert_eq!(intact["content"], text[..100], "chunk 0 still reads");
    let damaged = host.call_tool(&t, "scratchpad_read", &range(131_000, 132_000).to_string()).await;
    assert!(matches!(&damaged, Err(Error::Plugin { .. })), "the missing content is an error: {damaged:?}");
    let beyond = host.call_tool(&t, "scratchpad_read", &range(140_000, 140_100).to_string()).await;
    assert!(beyond.is_err(), "a read wholly in the missing part is an error, not an empty read");
}

/// Two hosts offload into one session at once, so commits lose and run again: every
/// acknowledged observation reads back whole, and (on SQLite, whose content goes to files
/// written before the commit) a lost commit leaves no file behind.
async fn racing_offloads_keep_exactly_the_committed_observations(fx: Fixture) {
    let hosts = [fx.open(vec![observations(json!({}))]).await, fx.open(vec![observations(json!({}))]).await];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    let body = |host: usize, step: u32| format!("host {host} step {step}\n").repeat(2_000);
    let run = |h: usize| {
        let (host, t) = (&hosts[h], t.clone());
        async move {
            let mut ids = Vec::new();
            for step in 1..=8 {
                ids.push((h, step, offload(host, &t, step, Observation::text(body(h, step))).await));
            }
            ids
        }
    };
    let (first, second) = tokio::join!(run(0), run(1));
    let ids: Vec<_> = first.into_iter().chain(second).collect();
    let stored = hosts[1].observations("s").await.unwrap();
    assert_eq!(stored.len(), 16, "each acknowledged offload stored once");
    for (h, step, id) in &ids {
        let whole = json!({ "scratchpad_id": id, "mode": "range", "start": 0, "end": 100_000 }).to_string();
        let out = hosts[1 - h].call_tool(&t, "scratchpad_read", &whole).await.unwrap();
        let out: Value = serde_json::from_str(&out.content).unwrap();
        assert_eq!(out["content"], body(*h, *step), "entry {id} reads back whole from the other host");
    }
    if matches!(fx.database, scratchpad_host::Location::Sqlite(_)) {
        assert_eq!(fx.observation_files(), 16, "one content file per stored entry, none from lost commits");
    }
}

async fn expired_entries_are_collected_once_by_concurrent_collectors(fx: Fixture) {
    let config = || vec![observations(json!({ "ttlSeconds": 1 }))];
    let hosts = [fx.open(config()).await, fx.open(config()).await];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    let big = "x".repeat(40_000);
    for step in 1..=3 {
        offload(&hosts[0], &turn("s", "t1"), step, Observation::text(big.clone())).await;
    }
    assert_eq!(hosts[1].gc().await.unwrap(), 0, "nothing has expired yet");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (a, b) = tokio::join!(hosts[0].gc(), hosts[1].gc());
    assert_eq!(a.unwrap() + b.unwrap(), 3, "each expired entry is removed exactly once");
    assert!(hosts[0].observations("s").await.unwrap().is_empty());
    assert_eq!(hosts[1].gc().await.unwrap(), 0, "collecting again removes nothing");
}

/// A summarizer standing in for the runtime's model.
#[derive(Clone, Default)]
struct CountingSummarizer(Arc<Mutex<u32>>);

impl Summarizer for CountingSummarizer {
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            *self.0.lock().unwrap() += 1;
            Ok(Summary { summary: format!("at {} tokens", request.tokens), ..Summary::default() })
        })
    }
}

async fn checkpoint_ids_are_unique_and_linked_in_order_across_hosts(fx: Fixture) {
    let open = || {
        let limits = Limits { call_timeout: Duration::from_secs(5), ..Limits::default() };
        let guard = PluginSpec::embedded("context-guard").with_config(json!({ "showContext": false }));
        let mut config: HostConfig = fx.config(vec![guard.with_limits(limits)]);
        config.summarizer = Some(Arc::new(CountingSummarizer::default()) as Arc<dyn Summarizer>);
        Host::open(config)
    };
    let hosts = [open().await.unwrap(), open().await.unwrap()];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    // Token thresholds at 25, 50 and 75 % of the window, and a message-count one, each
    // crossed by a turn on alternating hosts.
    for (i, used) in [52_000u64, 60_000, 101_000, 151_000].into_iter().enumerate() {
        let t = TurnContext::new("s", format!("t{i}")).with_tokens(used, 200_000);
        hosts[i % 2].after_response(&t, "r").await.unwrap();
    }
    let all = hosts[0].checkpoints("s").await.unwrap();
    assert!(all.len() >= 3, "a checkpoint at 25, 50 and 75 %: {all:?}");
    let ids: BTreeSet<&str> = all.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), all.len(), "ids are unique");
    assert_eq!(all[0].parent_id, None);
    for pair in all.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()), "each links to the one before");
    }
    assert_eq!(all[0].trigger, CheckpointTrigger::TokenPercent(25));
    assert_eq!(hosts[1].latest_checkpoint("s").await.unwrap().as_ref(), all.last());
}

async fn many_hosts_opening_a_fresh_database_at_once_agree_on_its_schema(fx: Fixture) {
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..6 {
        opening.spawn(Host::open(fx.config(vec![scratchpad(json!({}))])));
    }
    let mut hosts = Vec::new();
    while let Some(opened) = opening.join_next().await {
        hosts.push(opened.unwrap().expect("every host opens"));
    }
    hosts[3].create_session("s", Origin::New).await.unwrap();
    append(&hosts[5], "s", "written by one").await.unwrap();
    assert_eq!(stored(&hosts[0], "s", "notes").await.as_deref(), Some("written by one"));
}

async fn a_plugin_name_stays_bound_to_the_component_that_owns_its_data(fx: Fixture) {
    let first = fx.open(vec![probe("p", "p")]).await;
    drop(first);
    let impostor = PluginSpec { name: "p".into(), ..trusted(components::HOSTILE_PATH) };
    let err = Host::open(fx.config(vec![impostor.clone()])).await.err().expect("another component is refused");
    assert!(matches!(&err, Error::Load { plugin, message } if plugin == "p" && message.contains("sha256:")), "{err}");
    let wrong = impostor.clone().upgrading_to(&digest_of(components::PROBE_PATH));
    let err = Host::open(fx.config(vec![wrong])).await.err().expect("an upgrade to another digest is refused");
    assert!(err.to_string().contains("its upgrade names the component"), "{err}");
    let upgrade = impostor.upgrading_to(&digest_of(components::HOSTILE_PATH));
    Host::open(fx.config(vec![upgrade])).await.expect("an upgrade takes the name over");
    let err = Host::open(fx.config(vec![probe("p", "p")])).await.err().expect("now the old one is refused");
    assert!(matches!(err, Error::Load { .. }), "{err}");
}

async fn turns_and_compactions_are_counted_once(fx: Fixture) {
    let hosts = [fx.open(vec![scratchpad(json!({}))]).await, fx.open(vec![scratchpad(json!({}))]).await];
    hosts[0].create_session("s", Origin::New).await.unwrap();
    for t in ["t1", "t1", "t2"] {
        let t = turn("s", t);
        let (a, b) = tokio::join!(hosts[0].tools(&t), hosts[1].tools(&t));
        a.unwrap();
        b.unwrap();
    }
    let session = hosts[1].session("s").await.unwrap();
    assert_eq!((session.turn_id.as_deref(), session.turn_index), (Some("t2"), 1), "two turns, however many calls");
    hosts[0].after_compaction(&turn("s", "t2")).await.unwrap();
    hosts[1].after_compaction(&turn("s", "t2")).await.unwrap();
    assert_eq!(hosts[0].session("s").await.unwrap().compaction_count, 2);
}

async fn keys_with_nul_are_refused_and_change_nothing(fx: Fixture) {
    let host = fx.open(vec![probe("p", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let args = json!({ "key": "a\u{0}b", "value": "v" }).to_string();
    let (kind, message) = refusal(host.call_tool(&turn("s", "t1"), "p.write", &args).await);
    assert_eq!(kind, ToolErrorKind::Failed);
    assert!(message.contains("NUL"), "{message}");
    assert!(host.state("s").await.unwrap().is_empty());
}

/// PostgreSQL only (SQLite's WAL never blocks a reader): a database trip a plugin's import
/// makes while another session of the server holds a lock ends the call at its deadline, as a
/// timeout that keeps nothing, and the host works on once the lock is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_trip_blocked_past_the_deadline_ends_the_call_as_a_timeout() {
    use std::io::Write;
    let fx = Fixture::postgres();
    let limits = Limits { call_timeout: Duration::from_millis(500), ..Limits::default() };
    let host = fx.open(vec![PluginSpec::embedded("observations").with_limits(limits)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    host.tools(&t).await.unwrap();

    let scratchpad_host::Location::Postgres(url) = &fx.database else { unreachable!("a PostgreSQL fixture") };
    let mut locker = scratchpad_tests::postgres::server()
        .psql_command()
        .args(["-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("starting psql");
    let mut stdin = locker.stdin.take().unwrap();
    writeln!(stdin, "BEGIN; LOCK TABLE observations IN ACCESS EXCLUSIVE MODE; SELECT 'locked';").unwrap();
    let mut stdout = std::io::BufReader::new(locker.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(line.contains("locked"), "psql holds the lock: {line}");

    let big = Observation::text("y".repeat(40_000));
    // Bounded, so a host that waits out the lock fails here instead of hanging the run.
    let read_call = ToolCall::new("fs_read", "{}", 1);
    let call = host.after_tool_result(&t, &read_call, &big);
    let err = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call ended at its deadline, not when the lock went")
        .unwrap_err();
    assert!(err.to_string().contains("timed out after 500 ms"), "{err}");

    drop(stdin); // psql ends, its transaction rolls back, the lock goes
    locker.wait().unwrap();
    assert!(host.observations("s").await.unwrap().is_empty(), "the timed-out call kept nothing");
    let id = offload(&host, &t, 2, big).await;
    assert_eq!(host.observations("s").await.unwrap()[0].id, id, "the host works on");
}
