//! The measurements of plugins in other languages, in one run: the Python (`plugins/python-redactor`) and JavaScript
//! (`plugins/js-todo`) plugins beside the Rust one (`plugins/reminder`) — component size, cold
//! compile, load from the compiled-component cache, per-call latency of `before_query` and of
//! a tool call (each a fresh instance, with its commit), and the linear memory a call starts
//! with and peaks at. A benchmark, not a test: run it in release mode on a quiet machine.
//!
//! ```text
//! cargo run --release -p scratchpad-tests --bin third_party_bench [CALLS]   # default 200 calls per row
//! ```
//!
//! It builds the plugins as the tests do (`scratchpad_tests::third_party`), then prints a
//! markdown table. Deadlines are raised to 10 s so a slow call is measured, not refused.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scratchpad_host::{Host, HostConfig, Limits, Origin, PluginSpec, ToolCall, TurnContext};
use scratchpad_tests::components::REMINDER_PATH;
use scratchpad_tests::third_party::{js_todo, python_redactor};
use scratchpad_tests::trusted;

/// One plugin and the calls that exercise it.
struct Contender {
    label: &'static str,
    name: &'static str,
    path: PathBuf,
    /// Tool calls made once before measuring, so `before_query` has state to inject.
    setup: &'static [(&'static str, &'static str)],
    /// The tool call measured.
    tool: (&'static str, &'static str),
}

const CALLS: usize = 200;

fn main() {
    let calls = std::env::args().nth(1).map_or(CALLS, |n| n.parse().expect("CALLS is a number"));
    let contenders = [
        Contender {
            label: "Rust (reminder)",
            name: "reminder",
            path: PathBuf::from(REMINDER_PATH),
            setup: &[("reminder.set", r#"{"text":"run the tests before pushing"}"#)],
            tool: ("reminder.set", r#"{"text":"run the tests before pushing"}"#),
        },
        Contender {
            label: "Python (python-redactor)",
            name: "redactor",
            path: python_redactor(),
            setup: &[],
            tool: ("redactor.stats", "{}"),
        },
        Contender {
            label: "JavaScript (js-todo)",
            name: "todo",
            path: js_todo(),
            setup: &[("todo", r#"{"action":"add","items":["write the tests","fix the bug","ship it"]}"#)],
            tool: ("todo", r#"{"action":"list"}"#),
        },
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "| plugin | size | cold compile | cached load | before_query p50 / p99 | tool call p50 / p99 | memory at start / peak |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for contender in &contenders {
        let row = runtime.block_on(measure(contender, calls));
        println!("| {} | {row} |", contender.label);
    }
    let redactor = &contenders[1];
    let line = runtime.block_on(redactor_hook(redactor, calls));
    println!("\nPython before_tool_call on arguments with two secrets (its main hook): {line}");
}

fn spec(contender: &Contender) -> PluginSpec {
    let limits = Limits { call_timeout: Duration::from_secs(10), ..Limits::default() };
    PluginSpec { name: contender.name.into(), ..trusted(&contender.path).with_limits(limits) }
}

fn config(dir: &Path, contender: &Contender, cache: Option<PathBuf>) -> HostConfig {
    HostConfig {
        database: dir.join("bench.db").into(),
        cache_dir: cache,
        plugins: vec![spec(contender)],
        ..HostConfig::default()
    }
}

async fn measure(contender: &Contender, calls: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let size = std::fs::metadata(&contender.path).unwrap().len();

    // Cold: no cache, the component compiled from its bytes (once: it takes seconds).
    let started = Instant::now();
    drop(Host::open(config(dir.path(), contender, None)).await.unwrap());
    let cold = started.elapsed();
    // Cached: the first open fills the cache; the median of five later opens.
    let cache = dir.path().join("cache");
    drop(Host::open(config(dir.path(), contender, Some(cache.clone()))).await.unwrap());
    let mut loads = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        drop(Host::open(config(dir.path(), contender, Some(cache.clone()))).await.unwrap());
        loads.push(started.elapsed());
    }
    loads.sort_unstable();

    let host = Host::open(config(dir.path(), contender, Some(cache))).await.unwrap();
    host.create_session("bench", Origin::New).await.unwrap();
    let turn = TurnContext::new("bench", "t1");
    for (tool, arguments) in contender.setup {
        host.call_tool(&turn, tool, arguments).await.unwrap();
    }
    let query = latencies(calls, || async {
        host.before_query(&turn, "continue").await.unwrap();
    })
    .await;
    let (tool, arguments) = contender.tool;
    let tool_call = latencies(calls, || async {
        host.call_tool(&turn, tool, arguments).await.unwrap();
    })
    .await;
    let memory = host.last_call_memory(contender.name).unwrap_or_default();
    let (start, peak) = (memory.initial_bytes, memory.peak_bytes);
    format!(
        "{:.1} MB | {} | {} | {} | {} | {:.1} / {:.1} MiB",
        size as f64 / 1e6,
        ms(cold),
        ms(loads[2]),
        query,
        tool_call,
        start as f64 / (1 << 20) as f64,
        peak as f64 / (1 << 20) as f64
    )
}

async fn redactor_hook(contender: &Contender, calls: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::open(config(dir.path(), contender, Some(dir.path().join("cache")))).await.unwrap();
    host.create_session("bench", Origin::New).await.unwrap();
    let turn = TurnContext::new("bench", "t1");
    let arguments = r#"{"command":"deploy --key sk-proj-Abc123Def456Ghi789Jkl012Mno345 --aws AKIAIOSFODNN7EXAMPLE"}"#;
    let call = ToolCall::new("shell", arguments, 1);
    latencies(calls, || async {
        host.before_tool_call(&turn, &call).await.unwrap();
    })
    .await
}

/// p50 / p99 of `calls` calls, each timed on its own.
async fn latencies<F: Future<Output = ()>>(calls: usize, call: impl Fn() -> F) -> String {
    let mut all = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call().await;
        all.push(started.elapsed());
    }
    all.sort_unstable();
    let at = |p: f64| all[((all.len() - 1) as f64 * p).round() as usize];
    format!("{} / {}", ms(at(0.5)), ms(at(0.99)))
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1e3)
}
