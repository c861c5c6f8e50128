//! No lost update under concurrency: 64 tasks × 100 `append_notes` on one session, the same
//! workload spread over 1,000 sessions, two hosts on one database file, and two processes.
//! After each, the stored notes hold every accepted append exactly once and no rejected one,
//! the budget was never exceeded, and every rejection said so.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Instant;

use scratchpad_host::{Error, Host, Origin, ToolErrorKind};
use scratchpad_tests::{Fixture, dump, scratchpad, turn};
use serde_json::json;

scratchpad_tests::on_both_backends!(
    sixty_four_tasks_appending_to_one_session_lose_no_update_and_respect_the_budget,
    the_same_workload_spread_over_a_thousand_sessions_loses_no_update,
    two_hosts_on_one_database_file_lose_no_update,
    two_processes_appending_to_one_session_lose_no_update,
);

const TASKS: usize = 64;
const PER_TASK: usize = 100;

/// What happened to the appends of one session.
#[derive(Default)]
struct Outcome {
    accepted: Vec<String>,
    rejected: Vec<String>,
    /// The notes length (chars) each accepted append reported in its `Usage:` line.
    usage_after: Vec<usize>,
}

/// Appends `line` to `session`'s notes and records whether it was accepted.
async fn append(host: &Host, session: &str, line: String, budget: usize) -> (bool, Option<usize>) {
    let args = json!({ "action": "append_notes", "content": line }).to_string();
    match host.call_tool(&turn(session, "t1"), "session.scratchpad", &args).await {
        Ok(out) => {
            let usage = out.content.split("Usage: notes ").nth(1).and_then(|u| u.split('/').next()).unwrap();
            let chars: usize = usage.parse().unwrap();
            assert!(chars <= budget, "an accepted append reports {chars} chars, over the {budget} budget");
            (true, Some(chars))
        }
        Err(Error::Tool { error, .. }) if error.kind == ToolErrorKind::Rejected => {
            assert!(error.message.starts_with("append_notes rejected, notes unchanged"), "{}", error.message);
            (false, None)
        }
        Err(other) => panic!("append to {session} failed: {other}"),
    }
}

/// The scratchpad's stored notes of `session`, as lines.
fn stored_lines(fx: &Fixture, session: &str) -> Vec<String> {
    let notes = dump(&fx.database, session).into_iter().find(|(p, k, _)| p == "scratchpad" && k == "notes");
    notes.map(|(_, _, v)| String::from_utf8(v).unwrap().lines().map(str::to_owned).collect()).unwrap_or_default()
}

/// Every accepted append is stored exactly once, no rejected one is, and the budget holds.
fn check_session(fx: &Fixture, session: &str, outcome: &Outcome, budget: usize) {
    let lines = stored_lines(fx, session);
    let stored: BTreeSet<&String> = lines.iter().collect();
    assert_eq!(stored.len(), lines.len(), "{session}: a line is stored twice");
    let accepted: BTreeSet<&String> = outcome.accepted.iter().collect();
    assert_eq!(stored, accepted, "{session}: the stored notes are not exactly the accepted appends");
    assert!(outcome.rejected.iter().all(|r| !stored.contains(r)), "{session}: a rejected append was stored");
    assert!(lines.join("\n").chars().count() <= budget, "{session}: notes over the {budget}-char budget");
    // Serialized appends each saw a different, growing notes length.
    let usages: BTreeSet<usize> = outcome.usage_after.iter().copied().collect();
    assert_eq!(usages.len(), outcome.usage_after.len(), "{session}: two appends reported the same notes length");
}

/// Runs `TASKS × per_task` appends on `hosts` (task k uses host k % len); call i of task k
/// goes to `session_of(k, i)`. Returns every session's outcome.
async fn workload(
    hosts: &[Host],
    per_task: usize,
    budget: usize,
    session_of: fn(usize, usize) -> String,
) -> BTreeMap<String, Outcome> {
    let mut tasks = Vec::new();
    for k in 0..TASKS {
        let host = hosts[k % hosts.len()].clone();
        tasks.push(tokio::spawn(async move {
            let mut results = Vec::new();
            for i in 0..per_task {
                let (session, line) = (session_of(k, i), format!("t{k:02}-{i:02}"));
                let (accepted, usage) = append(&host, &session, line.clone(), budget).await;
                results.push((session, line, accepted, usage));
            }
            results
        }));
    }
    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    for task in tasks {
        for (session, line, accepted, usage) in task.await.unwrap() {
            let outcome = outcomes.entry(session).or_default();
            if accepted {
                outcome.accepted.push(line);
                outcome.usage_after.extend(usage);
            } else {
                outcome.rejected.push(line);
            }
        }
    }
    outcomes
}

async fn sixty_four_tasks_appending_to_one_session_lose_no_update_and_respect_the_budget(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await; // notes budget: 4000 chars
    host.create_session("s", Origin::New).await.unwrap();
    let started = Instant::now();

    let outcomes = workload(std::slice::from_ref(&host), PER_TASK, 4000, |_, _| "s".to_owned()).await;
    let outcome = &outcomes["s"];
    assert_eq!(outcome.accepted.len() + outcome.rejected.len(), TASKS * PER_TASK);
    // Each line is 6 chars plus a newline: 571 fit in 4000 chars, every later one is rejected.
    assert_eq!(outcome.accepted.len(), 571, "appends are accepted until the budget is full");
    check_session(&fx, "s", outcome, 4000);
    eprintln!("one session: {} appends in {:?}", TASKS * PER_TASK, started.elapsed());
}

async fn the_same_workload_spread_over_a_thousand_sessions_loses_no_update(fx: Fixture) {
    // A 40-char budget holds five 6-char lines: every session gets six or seven appends, so
    // each sees both accepted and rejected ones.
    let budget = 40;
    let host = fx.open(vec![scratchpad(json!({ "notesMaxChars": budget }))]).await;
    let started = Instant::now();
    let creators: Vec<_> = (0..TASKS)
        .map(|k| {
            let host = host.clone();
            tokio::spawn(async move {
                for n in (k..1000).step_by(TASKS) {
                    host.create_session(&format!("s{n:03}"), Origin::New).await.unwrap();
                }
            })
        })
        .collect();
    for creator in creators {
        creator.await.unwrap();
    }

    let outcomes =
        workload(std::slice::from_ref(&host), PER_TASK, budget, |k, i| format!("s{:03}", (k * PER_TASK + i) % 1000))
            .await;
    assert_eq!(outcomes.len(), 1000);
    for (session, outcome) in &outcomes {
        assert_eq!(outcome.accepted.len(), 5, "{session}");
        assert!(!outcome.rejected.is_empty(), "{session}");
        check_session(&fx, session, outcome, budget);
    }
    eprintln!("1,000 sessions: {} appends in {:?}", TASKS * PER_TASK, started.elapsed());
}

async fn two_hosts_on_one_database_file_lose_no_update(fx: Fixture) {
    let budget = 100_000;
    let config = || vec![scratchpad(json!({ "notesMaxChars": budget }))];
    let (a, b) = (fx.open(config()).await, fx.open(config()).await);
    a.create_session("s", Origin::New).await.unwrap();
    let started = Instant::now();

    // 64 tasks over two hosts that share nothing but the file: their commits race, and the
    // loser of each race re-runs its call on a fresh snapshot. 25 appends per task (1,600 in
    // all, every one accepted and committed) keep the run short.
    let outcomes = workload(&[a, b], 25, budget, |_, _| "s".to_owned()).await;
    let outcome = &outcomes["s"];
    assert_eq!(outcome.accepted.len(), TASKS * 25, "everything fits the budget");
    check_session(&fx, "s", outcome, budget);
    eprintln!("two hosts: {} appends in {:?}", TASKS * 25, started.elapsed());
}

async fn two_processes_appending_to_one_session_lose_no_update(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({ "notesMaxChars": 1_000_000 }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let count = 300;
    let children: Vec<_> = ["pa", "pb"]
        .iter()
        .map(|tag| {
            let child = Command::new(env!("CARGO_BIN_EXE_crash_child"))
                .arg(fx.database_arg())
                .args(["s", "append", tag, &count.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (tag.to_string(), child)
        })
        .collect();
    let mut accepted = Vec::new();
    for (tag, mut child) in children {
        let stdout = BufReader::new(child.stdout.take().unwrap());
        for line in stdout.lines() {
            let line = line.unwrap();
            let i = line.strip_prefix("ok ").unwrap_or_else(|| panic!("{tag}: unexpected line {line:?}"));
            accepted.push(format!("{tag}-{i}"));
        }
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert!(child.wait().unwrap().success(), "{tag} failed: {stderr}");
    }
    assert_eq!(accepted.len(), 2 * count);
    let outcome = Outcome { accepted, ..Outcome::default() };
    check_session(&fx, "s", &outcome, 1_000_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_calls_on_a_small_pool_never_runs_out_of_instances() {
    // Two calls at a time and two instances per plugin made ahead: the pool has slots for
    // exactly that. 200 concurrent turns across two plugins must all be served, none failing
    // for want of an instance slot (used instances are given back before the next is made).
    let fx = Fixture::new();
    let mut config = fx.config(vec![scratchpad(json!({})), scratchpad_tests::probe("probe", "p")]);
    config.max_concurrent_calls = 2;
    config.warm_instances = 2;
    let host = Host::open(config).await.unwrap();
    for i in 0..20 {
        host.create_session(&format!("s{i}"), Origin::New).await.unwrap();
    }
    let calls = (0..200).map(|i| {
        let host = host.clone();
        tokio::spawn(async move { host.before_query(&turn(&format!("s{}", i % 20), "t1"), "go").await })
    });
    for (i, call) in calls.collect::<Vec<_>>().into_iter().enumerate() {
        if let Err(error) = call.await.unwrap() {
            panic!("call {i} failed: {error}");
        }
    }
}
