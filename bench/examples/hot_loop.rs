//! One host operation in a loop, for a profiler: `perf record` (or `valgrind --tool=callgrind`)
//! on this process sees only the operation, with none of the benchmark's setup.
//!
//! ```text
//! cargo build --release -p scratchpad-bench --features profiling --example hot_loop
//! SCRATCHPAD_WASM_PROFILER=perfmap perf record -F 4999 -g \
//!     target/release/examples/hot_loop before_query 10
//! ```
//!
//! Operations: `before_query` (the scratchpad plugin only, all three spaces filled, as the
//! benchmark's component row), `native` (the same on the native baseline), `append` (a tool call
//! with its commit, the notes reset every 1,000 appends as in the benchmark; `native_append` the
//! same natively), `range_read` (2 KB of a 100 MB observation), `offload` (a 1 MB observation),
//! `offload_100mb`, `instantiate` (a fresh instance of the scratchpad plugin made and dropped,
//! never called: the `instantiate/pooling` row).
//! The second argument is seconds (default 10) or, with a trailing `x`, a number of calls
//! (`5000x`: what callgrind wants). Prints the mean time per call, and the process's page
//! faults and CPU time per call over the loop (`getrusage`), which count the work done off the
//! call's path too (recycling instances on other threads).

use std::time::{Duration, Instant};

use scratchpad_bench::native::NativeScratchpad;
use scratchpad_host::internals::instantiate_once;
use scratchpad_host::{Host, HostConfig, Observation, Origin, PluginSpec, ToolCall, TurnContext};

const FILL: [&str; 3] = [
    r#"{"action":"set_notes","content":"Root cause: timezone mismatch in token expiry (UTC vs local). Affects login and refresh."}"#,
    r#"{"action":"set_plan","content":"1. Reproduce\n2. Fix token expiry\n3. Add a regression test\n4. Update docs"}"#,
    r#"{"action":"refs.set","items":["src/auth/login.ts","src/auth/token.ts","https://github.com/org/repo/issues/42"]}"#,
];

enum Budget {
    Time(Duration),
    Calls(u64),
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let operation = args.next().unwrap_or_else(|| "before_query".into());
    let budget = match args.next() {
        Some(n) if n.ends_with('x') => Budget::Calls(n.trim_end_matches('x').parse().expect("a number of calls")),
        Some(n) => Budget::Time(Duration::from_secs(n.parse().expect("seconds"))),
        None => Budget::Time(Duration::from_secs(10)),
    };
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("loop.db");
    let plugins = match operation.as_str() {
        "range_read" | "offload" | "offload_100mb" => vec![PluginSpec::embedded("observations")],
        _ => vec![PluginSpec::embedded("scratchpad")],
    };
    let config = HostConfig {
        database: database.clone().into(),
        plugins,
        cache_dir: Some(dir.path().join("cache")),
        ..HostConfig::default()
    };
    let host = Host::open(config).await.unwrap();
    host.create_session("loop", Origin::New).await.unwrap();
    let turn = TurnContext::new("loop", "t");
    let read = ToolCall::new("fs_read", "{}", 1);
    let line = "INFO 2026-04-26 10:00:01 a line of a very large log, repeated\n";
    let mut range = String::new();
    let one_mb = match operation.as_str() {
        "offload_100mb" => Observation::text(line.repeat(100_000_000 / line.len())),
        _ => Observation::text(line.repeat(1_000_000 / line.len())),
    };
    match operation.as_str() {
        "before_query" | "append" => {
            for args in FILL {
                host.call_tool(&turn, "session.scratchpad", args).await.unwrap();
            }
        }
        "range_read" => {
            let hundred_mb = Observation::text(line.repeat(100_000_000 / line.len()));
            let seen = host.after_tool_result(&turn, &read, &hundred_mb).await.unwrap();
            let seen: serde_json::Value = serde_json::from_str(&seen.replacement.unwrap()).unwrap();
            let size = hundred_mb.bytes.len();
            range = serde_json::json!({ "scratchpad_id": seen["scratchpad_id"], "mode": "range", "start": size / 2, "end": size / 2 + 2048 })
                .to_string();
        }
        _ => {}
    }
    let native = NativeScratchpad::open(&database).await.unwrap();
    if operation == "native" || operation == "native_append" {
        host.create_session("native", Origin::New).await.unwrap();
        for args in FILL {
            native.call_tool("native", "t", 0, "session.scratchpad", args).await.unwrap();
        }
    }
    let before = usage();
    let started = Instant::now();
    let mut calls = 0u64;
    loop {
        match &budget {
            Budget::Time(limit) if started.elapsed() >= *limit => break,
            Budget::Calls(limit) if calls >= *limit => break,
            _ => {}
        }
        match operation.as_str() {
            "before_query" => drop(host.before_query(&turn, "continue").await.unwrap()),
            "native" => drop(native.before_query("native", "t", 0).await.unwrap()),
            "append" | "native_append" => {
                let args = if calls % 1000 == 999 {
                    r#"{"action":"set_notes","content":""}"#
                } else {
                    r#"{"action":"append_notes","content":"x"}"#
                };
                if operation == "append" {
                    host.call_tool(&turn, "session.scratchpad", args).await.unwrap();
                } else {
                    native.call_tool("native", "t", 0, "session.scratchpad", args).await.unwrap();
                }
            }
            "range_read" => drop(host.call_tool(&turn, "scratchpad_read", &range).await.unwrap()),
            "instantiate" => instantiate_once(&host, "scratchpad").await.unwrap(),
            "offload" | "offload_100mb" => drop(host.after_tool_result(&turn, &read, &one_mb).await.unwrap()),
            other => panic!("unknown operation `{other}`"),
        }
        calls += 1;
    }
    let took = started.elapsed();
    let after = usage();
    let per_call = |n: f64| n / calls as f64;
    println!(
        "{operation}: {calls} calls, {:.1} µs per call; per call: {:.2} minor + {:.2} major page faults, {:.1} µs CPU",
        took.as_secs_f64() * 1e6 / calls as f64,
        per_call((after.ru_minflt - before.ru_minflt) as f64),
        per_call((after.ru_majflt - before.ru_majflt) as f64),
        per_call(cpu_micros(&after) - cpu_micros(&before)),
    );
}

/// The whole process's resource usage so far (every thread: the recycling tasks too).
fn usage() -> libc::rusage {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(status, 0, "getrusage");
    // SAFETY: filled above (and zeroed before).
    unsafe { usage.assume_init() }
}

/// User plus system CPU time in microseconds.
fn cpu_micros(usage: &libc::rusage) -> f64 {
    let micros = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    micros(usage.ru_utime) + micros(usage.ru_stime)
}
