//! The component against native code and against Extism, in one process run. Ratios
//! matter more than absolute times on a shared 2-core machine; `bench/report.py` turns
//! criterion's estimates into the README's tables. Run: `cargo bench -p scratchpad-bench` (add
//! `-- --quick` for a short pass: about 2.5 min on the project's machine, 80 s of it the
//! PostgreSQL round-trip count waiting for the server's statistics).
//!
//! The three contenders run the same scratchpad code (`scratchpad-guest`) on one SQLite file,
//! each in its own session: the component through the host (`Host`, a fresh instance per call,
//! both default plugins), the native baseline (`src/native.rs`) and the Extism peer
//! (`extism.rs`); native and Extism go through the host's own storage layer (`ScopedStore`).
//!
//! Recall: a search and a new session's injection over a project of 10,000 earlier sessions, on
//! SQLite and PostgreSQL, and the index's size on disk (`recall.rs`).
//!
//! Fleet mode: the same component rows on PostgreSQL beside SQLite, offload and a
//! range read on PostgreSQL, throughput of 1, 2 and 4 host processes on one PostgreSQL, and the
//! round trips each operation costs — on a private server the run starts (`fleet.rs`).

mod extism;
mod fleet;
mod recall;
mod record;
mod throughput;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use scratchpad_bench::native::NativeScratchpad;
use scratchpad_host::internals::{KeptInstance, instantiate_once};
use scratchpad_host::{
    Host, HostConfig, InstanceAllocation, Limits, Location, Observation, Origin, PluginSpec, ToolCall, TurnContext,
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

/// A host configuration on the PostgreSQL database `url` with both default plugins, sharing
/// `dir`'s compiled-component cache.
fn on_postgres(dir: &std::path::Path, url: &str) -> HostConfig {
    HostConfig { database: url.into(), ..config(dir, Some(dir.join("cache"))) }
}

/// [`scratchpad_only`] on the PostgreSQL database `url`.
fn scratchpad_on_postgres(dir: &std::path::Path, url: &str) -> HostConfig {
    HostConfig { database: url.into(), ..scratchpad_only(dir) }
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
        let reused = KeptInstance::new(&host, "scratchpad").await.unwrap();
        (defaults, host, tokio::sync::Mutex::new(reused), native, peer)
    });
    // The same rows on PostgreSQL: hosts on two fresh databases of the run's server, one of
    // them with `synchronous_commit = off` (the commit's WAL flush, by difference).
    let (pg_url, pg_async_url) = (fleet::database(), fleet::database());
    fleet::without_commit_flush(&pg_async_url);
    let (pg_defaults, pg_host, pg_async) = rt.block_on(async {
        let pg_defaults = Host::open(on_postgres(dir.path(), &pg_url)).await.unwrap();
        let pg = Host::open(scratchpad_on_postgres(dir.path(), &pg_url)).await.unwrap();
        let unflushed = Host::open(scratchpad_on_postgres(dir.path(), &pg_async_url)).await.unwrap();
        for (on, session) in [(&pg, "bench"), (&pg, "bench-defaults"), (&unflushed, "bench")] {
            on.create_session(session, Origin::New).await.unwrap();
            for args in FILL {
                on.call_tool(&TurnContext::new(session, "t"), "session.scratchpad", args).await.unwrap();
            }
        }
        let texts = |prompt: scratchpad_host::Prompt| prompt.injections.into_iter().map(|i| i.text).collect::<Vec<_>>();
        let on_sqlite = texts(host.before_query(&TurnContext::new("bench", "t"), "continue").await.unwrap());
        let on_postgres = texts(pg.before_query(&TurnContext::new("bench", "t"), "continue").await.unwrap());
        assert_eq!(on_sqlite, on_postgres, "the same prompt from either backend");
        (pg_defaults, pg, unflushed)
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
    record::calls((&mut group, name), &rt, "component_postgres", || async {
        pg_host.before_query(&turn, "continue").await.unwrap();
    });
    record::calls((&mut group, name), &rt, "component_defaults_postgres", || async {
        pg_defaults.before_query(&turn_defaults, "continue").await.unwrap();
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

    // One trip to the database and nothing else: reading a session's row (`Host::session`),
    // one statement through the same pool (PostgreSQL) or blocking pool (SQLite).
    let name = "one_trip";
    let mut group = c.benchmark_group(name);
    record::calls((&mut group, name), &rt, "sqlite", || async {
        host.session("bench").await.unwrap();
    });
    record::calls((&mut group, name), &rt, "postgres", || async {
        pg_host.session("bench").await.unwrap();
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
    let (pg_host, pg_async) = (&pg_host, &pg_async);
    group.bench_function("component_postgres", |b| {
        b.iter_custom(|iters| {
            appends(&rt, iters, |args| async move {
                pg_host.call_tool(turn, "session.scratchpad", args).await.unwrap();
            })
        })
    });
    group.bench_function("component_postgres_async_commit", |b| {
        b.iter_custom(|iters| {
            appends(&rt, iters, |args| async move {
                pg_async.call_tool(turn, "session.scratchpad", args).await.unwrap();
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

/// What powers cost a call (grants): the checks one `before_query` of the scratchpad makes,
/// one for the hook and one for each of its six imports, each a bit test of the set the host
/// settled at load. Compare with `before_query/component`.
fn grants(c: &mut Criterion) {
    use scratchpad_host::{Grants, Power};
    let held = scratchpad_host::embedded::grants("scratchpad");
    let checks = [Power::Inject, Power::Config, Power::Storage, Power::Storage, Power::Tokens, Power::Log, Power::Log];
    let mut group = c.benchmark_group("grants");
    group.bench_function("before_query_checks", |b| {
        b.iter(|| checks.iter().all(|power| std::hint::black_box(held).has(*power)))
    });
    group.bench_function("settle_at_load", |b| b.iter(|| Grants::parse(std::hint::black_box(held.names())).unwrap()));
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

/// The large-observation store: offloading 1 MB and 100 MB (throughput, and how much the guest's memory
/// grew), a 2 KB range read and a grep over a 100 MB entry; then the same offloads and range
/// read on PostgreSQL (`observations_postgres`).
fn observations(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    store(c, "observations", &dir, dir.path().join("bench.db").into());
    store(c, "observations_postgres", &dir, Location::parse(&fleet::database()));
}

/// [`observations`]' rows as group `name`, on `database` (the grep on SQLite only).
fn store(c: &mut Criterion, name: &str, dir: &tempfile::TempDir, database: Location) {
    let rt = runtime();
    let grepping = !database.is_postgres();
    let mut config = HostConfig { database, ..config(dir.path(), Some(dir.path().join("cache"))) };
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

    let mut group = c.benchmark_group(name);
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
    if grepping {
        group.bench_function("grep_100mb", |b| {
            b.to_async(&rt).iter(|| async { host.call_tool(&reading, "scratchpad_read", &grep).await.unwrap() })
        });
    }
    group.bench_function("offload_100mb", |b| {
        b.to_async(&rt).iter(|| async { host.after_tool_result(&turn, &read, &hundred_mb).await.unwrap() })
    });
    group.finish();
    let memory = host.last_call_memory("observations").unwrap();
    let (initial, peak) = (memory.initial_bytes, memory.peak_bytes);
    let memory = serde_json::json!({ "initial_bytes": initial, "peak_bytes": peak, "growth_bytes": peak - initial });
    record::write(name, "offload_100mb", "memory.json", &memory);
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

    // Host processes (this executable re-run as children, `fleet::processes`): one on the same
    // SQLite file, then 1, 2 and 4 on one PostgreSQL database seeded with the same sessions.
    let cache = dir.path().join("cache");
    let sqlite = dir.path().join("bench.db");
    let sqlite = fleet::processes("processes_sqlite_1", sqlite.to_str().unwrap(), &cache, 1, window);
    println!("throughput: 1 process on SQLite {sqlite:.0} calls/s");
    let url = fleet::database();
    drop(rt.block_on(Host::open(scratchpad_on_postgres(dir.path(), &url))).unwrap());
    fleet::seed(&url, "scratchpad");
    for n in [1, 2, 4] {
        let rate = fleet::processes(&format!("processes_postgres_{n}"), &url, &cache, n, window);
        println!("throughput: {n} process(es) on PostgreSQL {rate:.0} calls/s");
    }
}

/// Round trips to PostgreSQL per operation, counted on the wire by a relay (`fleet::Proxy`),
/// and committed transactions per operation by the server's own statistics; then, on another
/// database with every statement's duration logged, the time the server spent in the
/// statements of each operation. Written to `round_trips/<operation>/{trips,server}.json`. Not
/// timed by criterion: counts.
fn round_trips(_c: &mut Criterion) {
    // Each operation, and how many of it are counted. `before_query_new_turn` is the first
    // operation of a turn (it enters the turn and collects expired observations);
    // `session_read` is `Host::session`, one statement: the check that one trip counts as one.
    const OPERATIONS: [(&str, u64); 6] = [
        ("before_query", 200),
        ("append_notes", 200),
        ("before_query_new_turn", 100),
        ("range_read_2kb", 100),
        ("offload_1mb", 20),
        ("session_read", 200),
    ];
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let proxy = fleet::Proxy::start(&rt);
    let url = fleet::database();
    let counted = Operations::open(&rt, on_postgres(dir.path(), &proxy.url(&url)));
    fleet::quiet(&url);
    // Warm: every statement prepared on the pool's connection before counting.
    for (operation, _) in OPERATIONS {
        counted.run(&rt, operation, 5);
    }
    let mut committed = fleet::xact_commit(&url);
    for (operation, count) in OPERATIONS {
        let (trips, connections) = (proxy.trips(), proxy.connections());
        counted.run(&rt, operation, count);
        let (trips, connections) = (proxy.trips() - trips, proxy.connections() - connections);
        let after = fleet::xact_commit(&url);
        let transactions = after - committed;
        committed = after;
        let figures = serde_json::json!({
            "operations": count,
            "trips_per_operation": trips as f64 / count as f64,
            "transactions_per_operation": transactions as f64 / count as f64,
            "new_connections": connections,
        });
        println!("round trips: {operation}: {figures}");
        record::write("round_trips", operation, "trips.json", &figures);
    }
    drop(counted);

    // The server's side of the same operations: every statement's duration logged.
    let url = fleet::database();
    fleet::log_durations(&url);
    let logged = Operations::open(&rt, on_postgres(dir.path(), &url));
    for (operation, count) in OPERATIONS {
        logged.run(&rt, operation, 5);
        let offset = fleet::log_length();
        logged.run(&rt, operation, count);
        let spent = fleet::durations_since(offset);
        let per = |x: f64| x / count as f64;
        let figures = serde_json::json!({
            "operations": count,
            "statements_per_operation": per(spent.statements as f64),
            "server_us_per_operation": per(spent.total_ms() * 1000.0),
            "parse_us_per_operation": per(spent.parse_ms * 1000.0),
            "bind_us_per_operation": per(spent.bind_ms * 1000.0),
            "execute_us_per_operation": per(spent.execute_ms * 1000.0),
        });
        println!("server time: {operation}: {figures}");
        record::write("round_trips", operation, "server.json", &figures);
    }
}

/// A host with both default plugins and the sessions [`round_trips`] works on.
struct Operations {
    host: Host,
    read: ToolCall,
    one_mb: Observation,
    /// The `scratchpad_read` arguments of a 2 KB range in the middle of a 1 MB entry.
    range: String,
    turns: std::sync::atomic::AtomicU64,
}

impl Operations {
    fn open(rt: &tokio::runtime::Runtime, mut config: HostConfig) -> Operations {
        for plugin in &mut config.plugins {
            plugin.limits = Limits { blob_quota_bytes: u64::MAX, ..plugin.limits };
        }
        let line = "INFO 2026-04-26 10:00:01 a line of a very large log, repeated\n";
        let one_mb = Observation::text(line.repeat(1_000_000 / line.len()));
        let read = ToolCall::new("fs_read", "{}", 1);
        rt.block_on(async {
            let host = Host::open(config).await.unwrap();
            for session in ["trips", "trips-turns", "trips-read", "trips-offload"] {
                host.create_session(session, Origin::New).await.unwrap();
            }
            for args in FILL {
                host.call_tool(&TurnContext::new("trips", "t"), "session.scratchpad", args).await.unwrap();
            }
            let seen = host.after_tool_result(&TurnContext::new("trips-read", "t"), &read, &one_mb).await.unwrap();
            let seen: serde_json::Value = serde_json::from_str(&seen.replacement.unwrap()).unwrap();
            let (id, middle) = (&seen["scratchpad_id"], one_mb.bytes.len() / 2);
            let range =
                serde_json::json!({ "scratchpad_id": id, "mode": "range", "start": middle, "end": middle + 2048 });
            Operations { host, read, one_mb, range: range.to_string(), turns: Default::default() }
        })
    }

    /// Runs `operation` `count` times, one after another.
    fn run(&self, rt: &tokio::runtime::Runtime, operation: &str, count: u64) {
        let host = &self.host;
        rt.block_on(async {
            for _ in 0..count {
                match operation {
                    "before_query" => {
                        host.before_query(&TurnContext::new("trips", "t"), "continue").await.unwrap();
                    }
                    "append_notes" => {
                        host.call_tool(&TurnContext::new("trips", "t"), "session.scratchpad", APPEND).await.unwrap();
                    }
                    "before_query_new_turn" => {
                        let turn = format!("t{}", self.turns.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
                        host.before_query(&TurnContext::new("trips-turns", &turn), "continue").await.unwrap();
                    }
                    "range_read_2kb" => {
                        host.call_tool(&TurnContext::new("trips-read", "t"), "scratchpad_read", &self.range)
                            .await
                            .unwrap();
                    }
                    "offload_1mb" => {
                        let turn = TurnContext::new("trips-offload", "t");
                        host.after_tool_result(&turn, &self.read, &self.one_mb).await.unwrap();
                    }
                    "session_read" => {
                        host.session("trips").await.unwrap();
                    }
                    other => unreachable!("{other}"),
                }
            }
        })
    }
}

criterion_group!(benches, hooks, grants, load, instantiation, observations, recall::recall, concurrency, round_trips);

fn main() {
    // A throughput child process (`fleet::processes`) runs its workload and nothing else.
    if fleet::child() {
        return;
    }
    // The recall rows' importing child imports and exits.
    if recall::child() {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
