//! Throughput: `TASKS` concurrent tokio tasks each calling `before_query` on random sessions out
//! of `SESSIONS`, for a fixed time; calls per second, the component against native, on one
//! SQLite file. Not a criterion benchmark (criterion times iterations, this counts calls in a
//! window): it writes `target/criterion/throughput/<name>/throughput.json` for `report.py`.
//! The same workload ([`count`]) runs in each host process of `fleet::processes`.
//!
//! The 10,000 sessions are written straight into the database in one transaction (rows as the
//! host writes them, each with notes and a plan, its turn `t` already entered), because
//! creating them one by one through the host would be 10,000 fsynced commits before the run.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use scratchpad_bench::native::NativeScratchpad;
use scratchpad_host::{Host, TurnContext};

use crate::record;

/// Sessions the calls spread over.
pub const SESSIONS: usize = 10_000;
/// Concurrent tasks.
pub const TASKS: usize = 32;

/// Writes `SESSIONS` sessions (`tp-0` …) with a filled scratchpad into the host database at
/// `db`, for the plugin named `plugin`.
pub fn seed(db: &Path, plugin: &str) {
    let mut conn = rusqlite::Connection::open(db).unwrap();
    let tx = conn.transaction().unwrap();
    for i in 0..SESSIONS {
        let id = format!("tp-{i}");
        tx.execute(
            "INSERT INTO sessions (id, origin, created_at, updated_at, turn_id, turn_index) VALUES (?1, 'new', 0, 0, 't', 0)",
            [&id],
        )
        .unwrap();
        for (key, value) in [("notes", format!("Finding {i}: the token expires in UTC")), ("plan", "1. a\n2. b".into())]
        {
            tx.execute(
                "INSERT INTO plugin_state (plugin, session, key, value) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![plugin, id, key, value.into_bytes()],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

/// What a task calls.
#[derive(Clone)]
pub enum Contender {
    /// The host with the scratchpad component.
    Component(Host),
    /// The same logic compiled natively, over the same storage layer.
    Native(Arc<NativeScratchpad>),
}

impl Contender {
    async fn call(&self, session: &str) {
        match self {
            Contender::Component(host) => {
                host.before_query(&TurnContext::new(session, "t"), "continue").await.unwrap();
            }
            Contender::Native(native) => {
                native.before_query(session, "t", 0).await.unwrap();
            }
        }
    }
}

/// Runs `TASKS` tasks of `contender` for `window` and writes the calls per second as `name`.
pub fn run(rt: &tokio::runtime::Runtime, name: &str, contender: Contender, window: Duration) -> f64 {
    let (calls, elapsed) = count(rt, contender, window);
    let per_second = calls as f64 / elapsed.as_secs_f64();
    let figures = serde_json::json!({
        "calls_per_second": per_second,
        "tasks": TASKS,
        "sessions": SESSIONS,
        "seconds": elapsed.as_secs_f64(),
    });
    record::write("throughput", name, "throughput.json", &figures);
    per_second
}

/// Runs `TASKS` tasks of `contender` for `window`: the calls made, and the time they took.
pub fn count(rt: &tokio::runtime::Runtime, contender: Contender, window: Duration) -> (u64, Duration) {
    let calls = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let elapsed = rt.block_on(async {
        let started = Instant::now();
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let (contender, calls, stop) = (contender.clone(), calls.clone(), stop.clone());
                tokio::spawn(async move {
                    // xorshift: a cheap, different walk over the sessions for every task.
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (task as u64 + 1);
                    while !stop.load(Ordering::Relaxed) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        contender.call(&format!("tp-{}", x % SESSIONS as u64)).await;
                        calls.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        tokio::time::sleep(window).await;
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            task.await.unwrap();
        }
        started.elapsed()
    });
    (calls.load(Ordering::Relaxed), elapsed)
}
