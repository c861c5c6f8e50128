//! The component against native code, in one process run (issue 8). Ratios matter more than
//! absolute times on a shared 2-core machine; `host/benches/report.py` turns criterion's
//! estimates into the README's table. Run: `cargo bench -p scratchpad-host --bench host`
//! (add `-- --quick` for a pass that finishes in well under two minutes).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use scratchpad_host::native::NativeScratchpad;
use scratchpad_host::{Host, HostConfig, Origin, TurnContext};

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

criterion_group!(benches, hooks, load);
criterion_main!(benches);
