//! Per-call latencies and other figures criterion does not keep, written beside criterion's
//! own estimates (`target/criterion/<group>/<name>/`) for `report.py`.
//!
//! Criterion's estimates are of per-*sample* means; the figures wanted are p50 and p99 of single
//! calls, so the latency rows time every call on its own and keep them all.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;

/// Where criterion writes: `$CARGO_TARGET_DIR/criterion`, else the workspace's `target/criterion`.
pub fn criterion_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
    target.join("criterion")
}

/// Writes `value` as `<group>/<name>/<file>` under criterion's directory.
pub fn write(group: &str, name: &str, file: &str, value: &serde_json::Value) {
    let dir = criterion_dir().join(group).join(name);
    std::fs::create_dir_all(&dir).expect("creating the benchmark's directory");
    std::fs::write(dir.join(file), serde_json::to_vec_pretty(value).unwrap()).expect("writing the figures");
}

/// Benchmarks `call` as row `name` of `group`, timing every call on its own, and writes the
/// p50 and p99 of all of them to `percentiles.json`.
pub fn calls<F: Future<Output = ()>>(
    group: (&mut BenchmarkGroup<'_, WallTime>, &str),
    rt: &tokio::runtime::Runtime,
    name: &str,
    call: impl Fn() -> F,
) {
    let (group, group_name) = group;
    let latencies = Mutex::new(Vec::new());
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                let mut mine = Vec::with_capacity(iters as usize);
                for _ in 0..iters {
                    let start = Instant::now();
                    call().await;
                    let took = start.elapsed();
                    mine.push(took);
                    total += took;
                }
                latencies.lock().unwrap().extend(mine);
                total
            })
        })
    });
    let mut all = latencies.into_inner().unwrap();
    all.sort_unstable();
    if all.is_empty() {
        return;
    }
    let at = |q: f64| all[((all.len() - 1) as f64 * q).round() as usize].as_nanos() as u64;
    let figures = serde_json::json!({ "calls": all.len(), "p50_ns": at(0.50), "p99_ns": at(0.99) });
    write(group_name, name, "percentiles.json", &figures);
}
