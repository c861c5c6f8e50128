//! The component against native code, in one process run (issue 8). Ratios matter more than
//! absolute times on a shared 2-core machine; `host/benches/report.py` turns criterion's
//! estimates into the README's table. Run: `cargo bench -p scratchpad-host --bench host`
//! (add `-- --quick` for a pass that finishes in well under two minutes).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use scratchpad_host::native::NativeScratchpad;
use scratchpad_host::{Host, HostConfig, Observation, Origin, ToolCall, TurnContext};

const FILL: [&str; 3] = [
    r#"{"action":"set_notes","content":"Root cause: timezone mismatch in token expiry (UTC vs local). Affects login and refresh."}"#,
    r#"{"action":"set_plan","content":"1. Reproduce\n2. Fix token expiry\n3. Add a regression test\n4. Update docs"}"#,
    r#"{"action":"refs.set","items":["src/auth/login.ts","src/auth/token.ts","https://github.com/org/repo/issues/42"]}"#,
];
const APPEND: &str = r#"{"action":"append_notes","content":"x"}"#;
const RESET: &str = r#"{"action":"set_notes","content":""}"#;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

fn config(dir: &std::path::Path, cache: Option<std::path::PathBuf>) -> HostConfig {
    HostConfig { database: dir.join("bench.db"), cache_dir: cache, ..HostConfig::default() }
}

fn hooks(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let (host, native) = rt.block_on(async {
        let host = Host::open(config(dir.path(), Some(dir.path().join("cache")))).await.unwrap();
        host.create_session("bench", Origin::New).await.unwrap();
        host.create_session("bench-native", Origin::New).await.unwrap();
        let turn = TurnContext::new("bench", "t");
        for args in FILL {
            host.call_tool(&turn, "session.scratchpad", args).await.unwrap();
        }
        let native = NativeScratchpad::open(&dir.path().join("bench.db")).await.unwrap();
        for args in FILL {
            native.call_tool("bench-native", "t", 0, "session.scratchpad", args).await.unwrap();
        }
        (host, native)
    });

    let mut group = c.benchmark_group("before_query");
    let turn = TurnContext::new("bench", "t");
    group.bench_function("component", |b| {
        b.to_async(&rt).iter(|| async { host.before_query(&turn, "continue").await.unwrap() })
    });
    group.bench_function("native", |b| {
        b.to_async(&rt).iter(|| async { native.before_query("bench-native", "t", 0).await.unwrap() })
    });
    group.finish();

    // An append with its commit; notes are reset (untimed) before the budget would reject.
    let mut group = c.benchmark_group("append_notes");
    group.bench_function("component", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    if i % 1000 == 0 {
                        host.call_tool(&turn, "session.scratchpad", RESET).await.unwrap();
                    }
                    let start = Instant::now();
                    host.call_tool(&turn, "session.scratchpad", APPEND).await.unwrap();
                    total += start.elapsed();
                }
                total
            })
        })
    });
    group.bench_function("native", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    if i % 1000 == 0 {
                        native.call_tool("bench-native", "t", 0, "session.scratchpad", RESET).await.unwrap();
                    }
                    let start = Instant::now();
                    native.call_tool("bench-native", "t", 0, "session.scratchpad", APPEND).await.unwrap();
                    total += start.elapsed();
                }
                total
            })
        })
    });
    group.finish();
}

fn load(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    rt.block_on(Host::open(config(dir.path(), Some(cache.clone())))).unwrap();
    let mut group = c.benchmark_group("plugin_load");
    group.sample_size(10);
    group.bench_function("cold_compile", |b| {
        b.to_async(&rt).iter(|| async { Host::open(config(dir.path(), None)).await.unwrap() })
    });
    group.bench_function("cached", |b| {
        b.to_async(&rt).iter(|| async { Host::open(config(dir.path(), Some(cache.clone()))).await.unwrap() })
    });
    group.finish();
}

/// Seed 004's store: offloading 1 MB (throughput) and a 2 KB range read from a 100 MB entry.
fn observations(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), Some(dir.path().join("cache")));
    for plugin in &mut config.plugins {
        plugin.limits.call_timeout = Duration::from_secs(30);
    }
    let host = rt.block_on(Host::open(config)).unwrap();
    rt.block_on(host.create_session("obs", Origin::New)).unwrap();
    let line = "INFO 2026-04-26 10:00:01 a line of a very large log, repeated\n";
    let one_mb = Observation::text(line.repeat(1_000_000 / line.len()));
    let hundred_mb = Observation::text(line.repeat(100_000_000 / line.len()));
    let turn = TurnContext::new("obs", "t");
    let read = ToolCall::new("fs_read", "{}", 1);
    let seen = rt.block_on(host.after_tool_result(&turn, &read, &hundred_mb)).unwrap();
    let seen: serde_json::Value = serde_json::from_str(&seen.replacement.unwrap()).unwrap();
    let size = hundred_mb.bytes.len();
    let args = serde_json::json!({
        "scratchpad_id": seen["scratchpad_id"], "mode": "range", "start": size / 2, "end": size / 2 + 2048
    })
    .to_string();

    let mut group = c.benchmark_group("observations");
    group.throughput(criterion::Throughput::Bytes(one_mb.bytes.len() as u64));
    group.bench_function("offload_1mb", |b| {
        b.to_async(&rt).iter(|| async { host.after_tool_result(&turn, &read, &one_mb).await.unwrap() })
    });
    group.throughput(criterion::Throughput::Bytes(2048));
    group.bench_function("range_read_2kb_of_100mb", |b| {
        b.to_async(&rt).iter(|| async { host.call_tool(&turn, "scratchpad_read", &args).await.unwrap() })
    });
    group.finish();
}

criterion_group!(benches, hooks, load, observations);
criterion_main!(benches);
