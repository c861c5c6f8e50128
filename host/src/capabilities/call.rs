//! One call's state, the data of its wasmtime store: the plugin it runs, its scope, tokenizer,
//! session, pending writes and budgets, and the WASI context that grants nothing. The import
//! modules implement their host traits on [`CallState`]; what it holds is defined below it.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::capabilities::memory::MemoryLimiter;
use crate::capabilities::output::{CALL_BUDGET_BYTES, STDIO_CAPTURE, cut};
use crate::capabilities::scope::Scope;
use crate::capabilities::tokenizer::Tokenizer;
use crate::config::Limits;
use crate::store::{Db, PendingBlob};
use crate::types::CheckpointTrigger;

/// Where a call's database-backed imports (blobs, checkpoints, index) look: the database, the
/// plugin, the session, and the project's index as the operator allows it.
#[derive(Clone)]
pub(crate) struct SessionScope {
    pub(crate) db: Db,
    pub(crate) plugin: String,
    pub(crate) session: String,
    /// The session's project and what the call may do with its index (`None`: no project, or
    /// it opted out).
    pub(crate) project: Option<ProjectIndex>,
}

/// A project's search index as one call may use it.
#[derive(Debug, Clone)]
pub(crate) struct ProjectIndex {
    pub(crate) project: String,
    /// Whether the call may write (not in read-only mode).
    pub(crate) writable: bool,
}

/// What a call knows about the plugin it runs.
#[derive(Debug)]
pub(crate) struct PluginInfo {
    pub(crate) name: String,
    pub(crate) limits: Limits,
    /// The plugin's configuration as JSON object text.
    pub(crate) config_json: String,
    /// The powers it holds (see [`crate::grants`]).
    pub(crate) grants: crate::grants::Grants,
}

/// A checkpoint asked for by a call, kept until the call commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingCheckpoint {
    pub(crate) trigger: CheckpointTrigger,
    pub(crate) tokens: u64,
    pub(crate) message_count: u32,
}

impl CallState {
    /// A denial (a trap of this call) unless the plugin holds `power`: every import starts here.
    #[inline]
    pub(crate) fn require(&self, power: crate::grants::Power) -> wasmtime::Result<()> {
        Ok(self.plugin.grants.require(power)?)
    }
}

/// The data of one call's store: everything the imports need, and nothing that outlives the
/// call except the scope's writes, which the host commits when the call succeeds.
pub(crate) struct CallState {
    pub(crate) plugin: Arc<PluginInfo>,
    pub(crate) scope: Scope,
    pub(crate) tokenizer: Arc<Tokenizer>,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    /// The session the call runs in, for the imports that query the database (`None` when the
    /// call has no session: loading, creating a session).
    pub(crate) session: Option<SessionScope>,
    /// Blob entries stored by this call, written when it commits.
    pub(crate) pending_blobs: Vec<PendingBlob>,
    /// Writes to the project's search index by this call, applied when it commits.
    pub(crate) pending_index: Vec<crate::store::IndexWrite>,
    /// Reads of the project's index by this call (`search` and `recent`) and the documents
    /// they answered, for the metrics.
    pub(crate) index_reads: (u32, u32),
    /// Makes blob ids of concurrent calls distinct.
    pub(crate) id_salt: u64,
    /// Whether the embedder gave the host a summarizer (the `checkpoints` import).
    pub(crate) summarizer_available: bool,
    /// The checkpoint this call asked for, handed to the summarizer when it commits.
    pub(crate) checkpoint_request: Option<PendingCheckpoint>,
    /// When the call's deadline passes: host imports that work in steps stop there.
    pub(crate) deadline: Option<std::time::Instant>,
    /// Bytes of log records this call may still emit (see [`CALL_BUDGET_BYTES`]).
    pub(crate) log_budget: usize,
    wasi: WasiCtx,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

impl CallState {
    pub(crate) fn new(plugin: Arc<PluginInfo>, scope: Scope, tokenizer: Arc<Tokenizer>) -> Self {
        let stdout = MemoryOutputPipe::new(STDIO_CAPTURE);
        let stderr = MemoryOutputPipe::new(STDIO_CAPTURE);
        // The sandbox grants nothing: no preopened directories, no environment, no arguments,
        // no stdin, no network (every socket address denied, no name lookups). Clocks and
        // randomness are harmless and std's runtime needs them.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        let limiter = MemoryLimiter::new(plugin.limits.memory_bytes);
        static SALT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        CallState {
            plugin,
            scope,
            tokenizer,
            table: ResourceTable::new(),
            limiter,
            session: None,
            pending_blobs: Vec::new(),
            pending_index: Vec::new(),
            index_reads: (0, 0),
            id_salt: SALT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            summarizer_available: false,
            checkpoint_request: None,
            deadline: None,
            log_budget: CALL_BUDGET_BYTES,
            wasi,
            stdout,
            stderr,
        }
    }

    /// Sends what the guest printed to tracing, tagged with the plugin's name.
    pub(crate) fn flush_stdio(&self) {
        for (stream, pipe) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            let bytes = pipe.contents();
            if !bytes.is_empty() {
                let text = String::from_utf8_lossy(&bytes);
                let text = crate::terminal::line(text.trim_end());
                tracing::info!(target: "scratchpad::plugin", plugin = %self.plugin.name, stream, "{text}");
            }
        }
    }
}

impl CallState {
    /// The last lines the guest wrote to stderr: a Rust panic's location and message.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
            .collect();
        if lines.is_empty() {
            return None;
        }
        let tail = lines[lines.len().saturating_sub(2)..].join(" ");
        Some(cut(&tail, 1024).to_owned())
    }
}

/// Awaits a database trip an import makes, ending the call as a timeout when the call's
/// `deadline` passes first: a slow or locked database (a PostgreSQL server far away, another
/// process's long write) never holds a call past its deadline. A SQLite trip already on the
/// blocking pool finishes there; nothing waits for it.
pub(crate) async fn within_deadline<T>(
    deadline: Option<std::time::Instant>,
    trip: impl std::future::Future<Output = crate::Result<T>>,
) -> wasmtime::Result<T> {
    let Some(deadline) = deadline else { return Ok(trip.await?) };
    match tokio::time::timeout_at(deadline.into(), trip).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(crate::error::DeadlineExceeded.into()),
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}
