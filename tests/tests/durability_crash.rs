//! Acknowledged means committed. A child process (`src/bin/crash_child.rs`) makes tool calls on
//! a real host and prints each call's id once `call_tool` returned `Ok`; the test SIGKILLs it
//! at a random moment, at least 20 times on one database file. After every kill the database
//! opens, every acknowledged call is there, and no call is half-applied: refs at their
//! capacity of 50 hold exactly the last 50 refs added, the notes hold exactly the appended
//! lines, and the turn bookkeeping written in the same call agrees with both.
//!
//! The requirement is ≥ 10,000 acknowledged calls and ≥ 20 kills. A call here costs 1.5 to
//! 5 ms on a 2-core machine (two fsynced commits: the new turn and the call's writes), so
//! 10,000 calls in *each* of 20 runs would take 5 to 15 minutes. Instead the 10,000 are spread
//! over the runs: each run is killed after a random 400 to 800 acknowledgements (then a random
//! moment into the next call), and runs continue past 20 until at least 10,000 calls were
//! acknowledged in all (about 12,000 in 20 runs).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scratchpad_host::Host;
use scratchpad_tests::{Fixture, scratchpad};
use serde_json::json;

const MIN_RUNS: usize = 20;
const MIN_ACKNOWLEDGED: u64 = 10_000;
const REFS_CAPACITY: u64 = 50;

/// A random number below `n` (std's per-instance random hash keys; no seed to replay).
fn random_below(n: u64) -> u64 {
    RandomState::new().build_hasher().finish() % n
}

/// Starts the child on `session`, waits for `target` acknowledgements, sleeps a random
/// moment into the next call and SIGKILLs it. Returns how many calls were acknowledged.
fn run_and_kill(db: &Path, session: &str, target: u64) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crash_child"))
        .arg(db)
        .args([session, "crash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut acknowledged = 0;
    let mut line = String::new();
    // Only whole lines count: a line cut by the kill was never acknowledged to anyone.
    let mut read_ack = |stdout: &mut BufReader<_>, acknowledged: &mut u64| -> bool {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 || !line.ends_with('\n') {
            return false;
        }
        assert_eq!(line.trim_end().parse::<u64>().unwrap(), *acknowledged, "acknowledgements come in order");
        *acknowledged += 1;
        true
    };
    while acknowledged < target {
        if !read_ack(&mut stdout, &mut acknowledged) {
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            panic!("the child stopped after {acknowledged} calls: {:?}\n{stderr}", child.wait().unwrap());
        }
    }
    std::thread::sleep(Duration::from_micros(random_below(2000)));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // What the child printed before it died was acknowledged too.
    while read_ack(&mut stdout, &mut acknowledged) {}
    acknowledged
}

/// Opens the database after a kill and checks `session` against `acknowledged`; returns how
/// many calls were committed (the acknowledged ones, plus possibly the one in flight).
async fn verify(fx: &Fixture, session: &str, acknowledged: u64) -> u64 {
    // The child's configuration (see `crash_child.rs`).
    let config = fx.config(vec![scratchpad(json!({ "notesMaxChars": 1_000_000 }))]);
    let host = Host::open(config).await.expect("the database opens after a SIGKILL");
    let state = host.state(session).await.unwrap();
    let value = |key: &str| state.iter().find(|e| e.plugin == "scratchpad" && e.key == key).map(|e| e.value.clone());
    let text = |key: &str| value(key).map(|v| String::from_utf8(v).unwrap()).unwrap_or_default();

    // Call i ran in turn "t{i}" (index i) and wrote `meta/last-update-turn` = i with its space.
    let committed = match value("meta/last-update-turn") {
        Some(v) => String::from_utf8(v).unwrap().parse::<u64>().unwrap() + 1,
        None => 0,
    };
    assert!(
        committed == acknowledged || committed == acknowledged + 1,
        "{session}: {acknowledged} calls acknowledged but {committed} committed"
    );
    let refs: Vec<String> = serde_json::from_str(&text("refs")).unwrap_or_default();
    let evens: Vec<String> = (0..committed).filter(|i| i % 2 == 0).map(|i| format!("r{i}")).collect();
    let expected_refs = &evens[evens.len().saturating_sub(REFS_CAPACITY as usize)..];
    assert_eq!(refs, expected_refs, "{session}: refs after {committed} committed calls");
    if evens.len() as u64 >= REFS_CAPACITY {
        assert_eq!(refs.len() as u64, REFS_CAPACITY, "{session}: refs at capacity hold exactly 50 items");
    }
    let notes = text("notes");
    let odds: Vec<String> = (0..committed).filter(|i| i % 2 == 1).map(|i| format!("n{i}")).collect();
    assert_eq!(notes.lines().collect::<Vec<_>>(), odds, "{session}: notes after {committed} committed calls");
    // The turn of the call in flight may have been entered (its own commit) without the call.
    let turn_index = host.session(session).await.unwrap().turn_index as i64;
    assert!(
        turn_index == committed as i64 - 1 || turn_index == committed as i64,
        "{session}: turn index {turn_index} after {committed} committed calls"
    );
    committed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_a_random_moment_never_loses_an_acknowledged_call_nor_half_applies_one() {
    let fx = Fixture::new();
    let db = fx.db();
    let started = Instant::now();
    let (mut runs, mut total, mut in_flight_committed) = (Vec::new(), 0, 0);
    while runs.len() < MIN_RUNS || total < MIN_ACKNOWLEDGED {
        let session = format!("run-{}", runs.len());
        let target = 400 + random_below(401);
        let (db2, session2) = (db.clone(), session.clone());
        let acknowledged = tokio::task::spawn_blocking(move || run_and_kill(&db2, &session2, target)).await.unwrap();
        let committed = verify(&fx, &session, acknowledged).await;
        in_flight_committed += committed - acknowledged;
        total += acknowledged;
        runs.push((session, acknowledged, committed));
    }
    // Later crashes did not damage what earlier runs committed, and the file is sound.
    for (session, acknowledged, committed) in &runs {
        assert_eq!(verify(&fx, session, *acknowledged).await, *committed, "{session} changed after later runs");
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    eprintln!(
        "{} kills, {total} acknowledged calls, {in_flight_committed} kills landed after a commit and before its \
         acknowledgement, {:?}",
        runs.len(),
        started.elapsed()
    );
}
