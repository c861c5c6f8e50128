//! The component against native code and against Extism, in one process run (issue 8). Ratios
//! matter more than absolute times on a shared 2-core machine; `host/bench/report.py` turns
//! criterion's estimates into the README's tables. Run: `cargo bench -p scratchpad-bench` (add
//! `-- --quick` for a short pass: about 20 s on the project's machine).
//!
//! The three contenders run the same scratchpad code (`scratchpad-guest`) on one SQLite file,
//! each in its own session: the component through the host (`Host`, a fresh instance per call,
//! both default plugins), the native baseline (`native.rs` in the host) and the Extism peer
//! (`extism.rs`); native and Extism go through the host's own storage layer (`ScopedStore`).

mod extism;
mod record;
mod throughput;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use scratchpad_host::native::NativeScratchpad;
use scratchpad_host::reuse::{ReusedInstance, instantiate_once};
use scratchpad_host::{
    Host, HostConfig, InstanceAllocation, Limits, Observation, Origin, PluginSpec, ToolCall, TurnContext,
};

use crate::extism::ExtismScratchpad;
use crate::throughput::Contender;

const FILL: [&str; 3] = [
    r#"{"action":"set_notes","content":"Root cause: timezone mismatch in token expiry (UTC vs local). Affects login and refresh."}"#,
    r#"{"action":"set_plan","content":"1. Reproduce\n2. Fix token expiry\n3. Add a regression test\n4. Update docs"}"#,
    r#"{"action":"refs.set","items":["src/auth/login.ts","src/auth/token.ts","https://github.com/org/repo/issues/42"]}"#,
];
const APPEND: &str = r#"{"action":"append_notes","content":"x"}"#;
const RESET: &str = r#"{"action":"set_notes","content":""}"#;

/// `-- --quick`: criterion's quick mode, and shorter throughput windows.
fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

fn config(dir: &std::path::Path, cache: Option<std::path::PathBuf>) -> HostConfig {
    HostConfig { database: dir.join("bench.db").into(), cache_dir: cache, ..HostConfig::default() }
}

/// A host on `dir`'s database with only the scratchpad plugin: the same one plugin the native
/// and Extism contenders run.
fn scratchpad_only(dir: &std::path::Path) -> HostConfig {
    HostConfig { plugins: vec![PluginSpec::embedded("scratchpad")], ..config(dir, Some(dir.join("cache"))) }
}

fn hooks(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let (defaults, host, reused, native, peer) = rt.block_on(async {
        let defaults = Host::open(config(dir.path(), Some(dir.path().join("cache")))).await.unwrap();
        let host = Host::open(scratchpad_only(dir.path())).await.unwrap();
        for session in ["bench", "bench-defaults", "bench-reused", "bench-native", "bench-extism"] {
            host.create_session(session, Origin::New).await.unwrap();
        }
        for session in ["bench", "bench-defaults", "bench-reused"] {
            for args in FILL {
                host.call_tool(&TurnContext::new(session, "t"), "session.scratchpad", args).await.unwrap();
            }
        }
        let native = NativeScratchpad::open(&dir.path().join("bench.db")).await.unwrap();
        let peer = ExtismScratchpad::open(&dir.path().join("bench.db")).await.unwrap();
        for args in FILL {
            native.call_tool("bench-native", "t", 0, "session.scratchpad", args).await.unwrap();
            peer.call_tool("bench-extism", "t", 0, "session.scratchpad", args).await.unwrap();
        }
        // The same injections from every contender: the comparison is of the same work.
        let component = host.before_query(&TurnContext::new("bench", "t"), "continue").await.unwrap();
        let component: Vec<&str> = component.injections.iter().map(|i| i.text.as_str()).collect();
        let native_texts = native.before_query("bench-native", "t", 0).await.unwrap();
        let peer_texts = peer.before_query("bench-extism", "t", 0).await.unwrap();
        assert_eq!(peer_texts.iter().map(|i| &i.text).collect::<Vec<_>>(), native_texts.iter().collect::<Vec<_>>());
        assert!(native_texts.iter().all(|t| component.contains(&t.as_str())), "{component:?} vs {native_texts:?}");
        let reused = ReusedInstance::new(&host, "scratchpad").await.unwrap();
        (defaults, host, tokio::sync::Mutex::new(reused), native, peer)
    });

    let name = "before_query";
    let mut group = c.benchmark_group(name);
    let (turn, turn_defaults, turn_reused) = (
        TurnContext::new("bench", "t"),
        TurnContext::new("bench-defaults", "t"),
        TurnContext::new("bench-reused", "t"),
    );
    record::calls((&mut group, name), &rt, "component", || async {
        host.before_query(&turn, "continue").await.unwrap();
    });
    record::calls((&mut group, name), &rt, "component_defaults", || async {
        defaults.before_query(&turn_defaults, "continue").await.unwrap();
    });
    record::calls((&mut group, name), &rt, "component_reused", || async {
        reused.lock().await.before_query(&turn_reused, "continue").await.unwrap();
    });
    record::calls((&mut group, name), &rt, "native", || async {
        native.before_query("bench-native", "t", 0).await.unwrap();
    });
    record::calls((&mut group, name), &rt, "extism", || async {
        peer.before_query("bench-extism", "t", 0).await.unwrap();
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

/// Instantiation alone (no call): wasmtime's pooling allocator against on-demand allocation.
fn instantiation(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let open = |allocation| {
        let config = HostConfig { instance_allocation: allocation, warm_instances: 0, ..scratchpad_only(dir.path()) };
        rt.block_on(Host::open(config)).unwrap()
    };
    let (pooling, on_demand) = (open(InstanceAllocation::Pooling), open(InstanceAllocation::OnDemand));
    let mut group = c.benchmark_group("instantiate");
    group.bench_function("pooling", |b| {
        b.to_async(&rt).iter(|| async { instantiate_once(&pooling, "scratchpad").await.unwrap() })
    });
    group.bench_function("on_demand", |b| {
        b.to_async(&rt).iter(|| async { instantiate_once(&on_demand, "scratchpad").await.unwrap() })
    });
    group.finish();
}

/// Seed 004's store: offloading 1 MB and 100 MB (throughput, and how much the guest's memory
/// grew), a 2 KB range read and a grep over a 100 MB entry.
fn observations(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), Some(dir.path().join("cache")));
    for plugin in &mut config.plugins {
        // Seconds of work on 100 MB; and room for every iteration's copy in one session.
        plugin.limits = Limits { call_timeout: Duration::from_secs(60), blob_quota_bytes: u64::MAX, ..plugin.limits };
    }
    let host = rt.block_on(Host::open(config)).unwrap();
    // The reads run in a session whose turn holds just the 100 MB entry, as a real turn holds a
    // few; the offloads pile up their entries in a session of their own.
    for session in ["obs", "obs-read"] {
        rt.block_on(host.create_session(session, Origin::New)).unwrap();
    }
    let line = "INFO 2026-04-26 10:00:01 a line of a very large log, repeated\n";
    let one_mb = Observation::text(line.repeat(1_000_000 / line.len()));
    let hundred_mb = Observation::text(line.repeat(100_000_000 / line.len()));
    let (turn, reading) = (TurnContext::new("obs", "t"), TurnContext::new("obs-read", "t"));
    let read = ToolCall::new("fs_read", "{}", 1);
    let seen = rt.block_on(host.after_tool_result(&reading, &read, &hundred_mb)).unwrap();
    let seen: serde_json::Value = serde_json::from_str(&seen.replacement.unwrap()).unwrap();
    let size = hundred_mb.bytes.len();
    let id = &seen["scratchpad_id"];
    let range = serde_json::json!({ "scratchpad_id": id, "mode": "range", "start": size / 2, "end": size / 2 + 2048 });
    let grep = serde_json::json!({ "scratchpad_id": id, "mode": "grep", "pattern": "CRITICAL", "max_matches": 5 });
    let (range, grep) = (range.to_string(), grep.to_string());

    let mut group = c.benchmark_group("observations");
    group.throughput(criterion::Throughput::Bytes(one_mb.bytes.len() as u64));
    group.bench_function("offload_1mb", |b| {
        b.to_async(&rt).iter(|| async { host.after_tool_result(&turn, &read, &one_mb).await.unwrap() })
    });
    group.throughput(criterion::Throughput::Bytes(2048));
    group.bench_function("range_read_2kb_of_100mb", |b| {
        b.to_async(&rt).iter(|| async { host.call_tool(&reading, "scratchpad_read", &range).await.unwrap() })
    });
    group.sample_size(10);
    group.throughput(criterion::Throughput::Bytes(size as u64));
    group.bench_function("grep_100mb", |b| {
        b.to_async(&rt).iter(|| async { host.call_tool(&reading, "scratchpad_read", &grep).await.unwrap() })
    });
    group.bench_function("offload_100mb", |b| {
        b.to_async(&rt).iter(|| async { host.after_tool_result(&turn, &read, &hundred_mb).await.unwrap() })
    });
    group.finish();
    let (initial, peak) = host.last_call_memory("observations").unwrap();
    let memory = serde_json::json!({ "initial_bytes": initial, "peak_bytes": peak, "growth_bytes": peak - initial });
    record::write("observations", "offload_100mb", "memory.json", &memory);
}

/// Calls per second of concurrent tasks over 10,000 sessions, the component against native.
fn concurrency(_c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let host = rt.block_on(Host::open(scratchpad_only(dir.path()))).unwrap();
    throughput::seed(&dir.path().join("bench.db"), "scratchpad");
    let native = rt.block_on(NativeScratchpad::open(&dir.path().join("bench.db"))).unwrap();
    let window = Duration::from_secs(if quick() { 3 } else { 10 });
    let component = throughput::run(&rt, "component", Contender::Component(host), window);
    let native = throughput::run(&rt, "native", Contender::Native(std::sync::Arc::new(native)), window);
    println!("throughput: component {component:.0} calls/s, native {native:.0} calls/s");
}

criterion_group!(benches, hooks, load, instantiation, observations, concurrency);
criterion_main!(benches);
