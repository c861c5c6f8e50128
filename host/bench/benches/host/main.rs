//! The component against native code and against Extism, in one process run (issue 8). Ratios
//! matter more than absolute times on a shared 2-core machine; `host/bench/report.py` turns
//! criterion's estimates into the README's tables. Run: `cargo bench -p scratchpad-bench` (add
//! `-- --quick` for a pass that finishes in under two minutes).
//!
//! The three contenders run the same scratchpad code (`scratchpad-guest`) on one SQLite file,
//! each in its own session: the component through the host (`Host`, a fresh instance per call,
//! both default plugins), the native baseline (`native.rs` in the host) and the Extism peer
//! (`extism.rs`); native and Extism go through the host's own storage layer (`ScopedStore`).

mod extism;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use scratchpad_host::native::NativeScratchpad;
use scratchpad_host::{Host, HostConfig, Observation, Origin, ToolCall, TurnContext};

use crate::extism::ExtismScratchpad;

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
    let (host, native, peer) = rt.block_on(async {
        let host = Host::open(config(dir.path(), Some(dir.path().join("cache")))).await.unwrap();
        for session in ["bench", "bench-native", "bench-extism"] {
            host.create_session(session, Origin::New).await.unwrap();
        }
        let turn = TurnContext::new("bench", "t");
        for args in FILL {
            host.call_tool(&turn, "session.scratchpad", args).await.unwrap();
        }
        let native = NativeScratchpad::open(&dir.path().join("bench.db")).await.unwrap();
        let peer = ExtismScratchpad::open(&dir.path().join("bench.db")).await.unwrap();
        for args in FILL {
            native.call_tool("bench-native", "t", 0, "session.scratchpad", args).await.unwrap();
            peer.call_tool("bench-extism", "t", 0, "session.scratchpad", args).await.unwrap();
        }
        // The same injections from all three: the comparison is of the same work.
        let component = host.before_query(&turn, "continue").await.unwrap();
        let component: Vec<&str> = component.injections.iter().map(|i| i.text.as_str()).collect();
        let native_texts = native.before_query("bench-native", "t", 0).await.unwrap();
        let peer_texts = peer.before_query("bench-extism", "t", 0).await.unwrap();
        assert_eq!(peer_texts.iter().map(|i| &i.text).collect::<Vec<_>>(), native_texts.iter().collect::<Vec<_>>());
        assert!(native_texts.iter().all(|t| component.contains(&t.as_str())), "{component:?} vs {native_texts:?}");
        (host, native, peer)
    });

    let mut group = c.benchmark_group("before_query");
    let turn = TurnContext::new("bench", "t");
    group.bench_function("component", |b| {
        b.to_async(&rt).iter(|| async { host.before_query(&turn, "continue").await.unwrap() })
    });
    group.bench_function("native", |b| {
        b.to_async(&rt).iter(|| async { native.before_query("bench-native", "t", 0).await.unwrap() })
    });
    group.bench_function("extism", |b| {
        b.to_async(&rt).iter(|| async { peer.before_query("bench-extism", "t", 0).await.unwrap() })
    });
    group.finish();

    // An append with its commit.
    let mut group = c.benchmark_group("append_notes");
    let (host, native, peer, turn) = (&host, &native, &peer, &turn);
    group.bench_function("component", |b| {
        b.iter_custom(|iters| {
            appends(&rt, iters, |args| async move {
                host.call_tool(turn, "session.scratchpad", args).await.unwrap();
            })
        })
    });
    group.bench_function("native", |b| {
        b.iter_custom(|iters| {
            appends(&rt, iters, |args| async move {
                native.call_tool("bench-native", "t", 0, "session.scratchpad", args).await.unwrap();
            })
        })
    });
    group.bench_function("extism", |b| {
        b.iter_custom(|iters| {
            appends(&rt, iters, |args| async move {
                peer.call_tool("bench-extism", "t", 0, "session.scratchpad", args).await.unwrap();
            })
        })
    });
    group.finish();
}

/// The time of `iters` appends through `call`, each timed on its own; the notes are reset
/// (untimed) every 1000 appends, before the budget would reject one.
fn appends<F: Future<Output = ()>>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    call: impl Fn(&'static str) -> F,
) -> Duration {
    rt.block_on(async {
        let mut total = Duration::ZERO;
        for i in 0..iters {
            if i % 1000 == 0 {
                call(RESET).await;
            }
            let start = Instant::now();
            call(APPEND).await;
            total += start.elapsed();
        }
        total
    })
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
