//! The wasmtime engine: component model, async, pooling allocator, epoch deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ProfilingStrategy};

use crate::config::InstanceAllocation;

/// How often the epoch advances. A call's deadline is checked at every tick, so this is the
/// resolution of timeouts; a running guest also yields to tokio at every tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Bytes of each pooled linear memory kept resident and reset in place between instances.
const KEEP_RESIDENT: usize = 4 << 20;
/// Bytes of each pooled table kept resident likewise.
const KEEP_RESIDENT_TABLES: usize = 64 << 10;
/// Bytes of each pooled fiber stack kept resident and zeroed with memset.
const KEEP_RESIDENT_STACK: usize = 64 << 10;

/// The environment variable that turns on wasmtime's perf map (`perfmap`).
const PROFILER_ENV: &str = "SCRATCHPAD_WASM_PROFILER";

/// Stack available to wasm code; deeper recursion traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// Builds the engine shared by every plugin of a host.
///
/// `max_memory_bytes` is the largest memory cap of any plugin (the pool's slot size) and
/// `slots` how many instances may be alive at once. With [`InstanceAllocation::OnDemand`]
/// every instance's memory is mapped when it is created instead of taken from a pool.
pub(crate) fn build(max_memory_bytes: u64, slots: u32, allocation: InstanceAllocation) -> anyhow::Result<Engine> {
    let config = config(max_memory_bytes, slots, allocation)?;
    Engine::new(&config).map_err(anyhow::Error::from).context("creating the wasmtime engine")
}

/// The configuration [`build`] makes its engine with: also what components compiled ahead of
/// time are compiled with (`precompiled.rs`), so they load into this engine.
pub(crate) fn config(max_memory_bytes: u64, slots: u32, allocation: InstanceAllocation) -> anyhow::Result<Config> {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * 4)
        .total_memories(slots * 2)
        .total_tables(slots * 2)
        .max_memories_per_component(2)
        .max_tables_per_component(4)
        .max_core_instances_per_component(16)
        .max_memory_size(usize::try_from(max_memory_bytes).context("memory cap too large")?)
        // A fresh instance per call means every call starts in a recycled slot. By default the
        // slot's memory is given back with madvise and every page the next call touches
        // faults in again, which cost more than the call itself. Instead keep the low
        // `KEEP_RESIDENT` bytes resident, reset in place to the image's contents (memcpy and
        // memset); the rest is given back. The next instance sees exactly its initial memory.
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT_TABLES)
        // Not PAGEMAP_SCAN (resetting only the pages written; with the first-party components'
        // 128 KiB stack the copy costs what it did): wasmtime 48's scan skips a written page
        // the kernel has swapped out, and the next instance in the slot reads the last one's
        // data from it — another session's, or in a table, a dead instance's function pointers
        // (fixed in wasmtime 50, PR #14357). `sandbox_isolation.rs` swaps such a page out for
        // real; docs/benchmarks.md has the cost.
        .pagemap_scan(Enabled::No)
        // The zeroed fiber stacks (`async_stack_zeroing` below): the first bytes are zeroed
        // with memset and stay resident, the rest by the kernel (a system call).
        .async_stack_keep_resident(KEEP_RESIDENT_STACK);

    let strategy = match allocation {
        InstanceAllocation::Pooling => InstanceAllocationStrategy::Pooling(pool),
        InstanceAllocation::OnDemand => InstanceAllocationStrategy::OnDemand,
    };
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        // Defense in depth: a fiber stack is zeroed before another call uses it, so a bug in
        // compiled code reading a stack slot before writing it could not see another plugin's
        // call. It costs 1.2-1.5 µs per instance (a store keeps one fiber stack for its
        // instantiation and its call, zeroed once when it drops): docs/benchmarks.md.
        .async_stack_zeroing(true)
        .allocation_strategy(strategy);
    // `SCRATCHPAD_WASM_PROFILER=perfmap` names compiled wasm functions for `perf` (written to
    // /tmp/perf-<pid>.map), so a profile of the host shows which plugin function the time went
    // to; see docs/benchmarks.md. Off by default: it costs a little at compile time.
    if std::env::var_os(PROFILER_ENV).is_some_and(|v| v == "perfmap") {
        config.profiler(ProfilingStrategy::PerfMap);
    }
    Ok(config)
}

/// A thread that advances an engine's epoch every [`EPOCH_TICK`] until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.weak();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("scratchpad-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    match engine.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                }
            })
            .expect("spawning the epoch thread");
        EpochTicker { stop, thread: Some(thread) }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
