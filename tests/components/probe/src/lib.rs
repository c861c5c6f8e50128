//! A test component that probes the host: it stores and reads keys, and on request behaves
//! like a hostile plugin (loops, exhausts memory, recurses, panics after writing, returns
//! huge output, reaches for the filesystem, the environment and the network).
//!
//! Configuration (JSON): `prefix` (default `probe`) names its tools `<prefix>.<verb>`, so two
//! instances can be loaded side by side; `extraTools` declares further tool names (to provoke
//! a clash); `queryMode` (`inject` default, `loop`, `trap`, `huge`) picks what `before-query`
//! does; the hostile modes first store `query-was-here`, so a test can check the write is lost.
//!
//! `listMode: "undeclared"` makes `list-tools` store `listed` and offer a tool its manifest
//! does not declare (`<prefix>.ghost`).
//!
//! `resultMode: "hoard"` makes `after-tool-result` store the observation in the blob store
//! again and again until the host refuses, and answer what happened. `chainMode: "echo"`
//! makes `before-tool-call` and `after-tool-result` answer with what they were given (its size
//! and start), so a test sees what the plugin before it in the chain handed on.
//!
//! `stash` copies `{"secret": …}` into a buffer on its stack and one on its heap (both in its
//! linear memory; the heap's alone in its page) and answers their addresses, with what reading
//! them back there gives, after looping `linger` times (optional) touching no memory;
//! `peek` answers what is at `{"addr": …, "len": …}` of its memory now (or that it is past the
//! memory's end). A later call that peeks at a stash's addresses sees what a fresh instance
//! has there, never the secret.
//!
//! `index_*` verbs (`index.rs`) drive the `index` import (the project's search index) and
//! answer what it answered, as JSON; the probe declares them only with `indexVerbs: true`, and
//! asks for the `index` power only when its configuration's `powers` names it.
//!
//! Every tool takes an optional `mark` argument: a key the probe stores (value `marked`)
//! before doing its verb, so a test can check the writes of a failed call do not persist.

use scratchpad_plugin_sdk::{
    BlobError, Injection, Manifest, NewEntry, Observation, Placement, Plugin, Power, Storage, StorageError, ToolCall,
    ToolError, ToolOutput, ToolSpec, Turn, blobs, export_plugin,
};
use serde_json::{Value, json};

mod index;

const VERBS: &[&str] = &[
    "write",
    "read",
    "keys",
    "write_then_trap",
    "loop",
    "bomb",
    "recurse",
    "recurse_memory",
    "huge",
    "fill",
    "fs",
    "env",
    "net",
    "count",
    "stash",
    "peek",
];

struct Probe;

fn config() -> Value {
    serde_json::from_str(&scratchpad_plugin_sdk::config()).unwrap_or(json!({}))
}

fn prefix() -> String {
    config()["prefix"].as_str().unwrap_or("probe").to_owned()
}

fn spec(name: String) -> ToolSpec {
    ToolSpec { name, description: "probe".into(), parameters: r#"{"type":"object"}"#.into() }
}

impl Plugin for Probe {
    /// Everything a probe may use, unless its configuration's `powers` (names) says what to ask.
    const POWERS: &'static [Power] = &[
        Power::Inject,
        Power::RewriteToolCalls,
        Power::ReplaceToolResults,
        Power::ReadToolTraffic,
        Power::Storage,
        Power::Blobs,
        Power::Config,
    ];

    fn requested_powers() -> Vec<Power> {
        match config()["powers"].as_array() {
            Some(names) => names.iter().filter_map(Value::as_str).filter_map(Power::parse).collect(),
            None => Self::POWERS.to_vec(),
        }
    }

    fn load() -> Result<Manifest, String> {
        let prefix = prefix();
        // The index verbs only with `indexVerbs`: the others keep the manifest the output-cap
        // tests measure.
        let index_verbs = config()["indexVerbs"].as_bool().unwrap_or(false);
        let verbs = VERBS.iter().chain(if index_verbs { index::VERBS } else { &[] });
        let mut tools: Vec<ToolSpec> = verbs.map(|v| spec(format!("{prefix}.{v}"))).collect();
        if let Some(extra) = config()["extraTools"].as_array() {
            tools.extend(extra.iter().filter_map(Value::as_str).map(|n| spec(n.to_owned())));
        }
        Ok(Manifest { tools })
    }

    fn before_query(_turn: Turn, _message: String) -> Vec<Injection> {
        let mode = config()["queryMode"].as_str().unwrap_or("inject").to_owned();
        if ["loop", "trap", "huge"].contains(&mode.as_str()) {
            let _ = scratchpad_plugin_sdk::HostStorage.set("query-was-here", b"1");
        }
        match mode.as_str() {
            "loop" => spin(),
            "trap" => panic!("probe trapped in before-query"),
            "huge" => vec![Injection { placement: Placement::AppendContext, text: "x".repeat(50 << 20) }],
            _ => match scratchpad_plugin_sdk::HostStorage.get("inject") {
                Some(text) => vec![Injection {
                    placement: Placement::PrependContext,
                    text: String::from_utf8_lossy(&text).into_owned(),
                }],
                None => Vec::new(),
            },
        }
    }

    fn before_tool_call(_turn: Turn, call: ToolCall) -> Result<Option<String>, ToolError> {
        if config()["chainMode"].as_str() != Some("echo") {
            return Ok(None);
        }
        let start: String = call.arguments.chars().take(24).collect();
        Ok(Some(json!({ "saw_bytes": call.arguments.len(), "saw_start": start }).to_string()))
    }

    fn after_tool_result(turn: Turn, call: ToolCall, observation: &Observation) -> Option<String> {
        if config()["chainMode"].as_str() == Some("echo") {
            let start = String::from_utf8_lossy(&observation.read(0, 24)).into_owned();
            return Some(format!("probe saw {} bytes starting {start:?}", observation.size()));
        }
        if config()["resultMode"].as_str() != Some("hoard") {
            return None;
        }
        let mut stored = 0;
        let refusal = loop {
            let entry = NewEntry {
                turn_id: turn.turn_id.clone(),
                step: call.step,
                tool: call.name.clone(),
                summary: "hoarded".into(),
                ttl_seconds: 3600,
            };
            match blobs::store(observation, &entry) {
                Ok(_) if stored < 10_000 => stored += 1,
                Ok(_) => break "never refused".to_owned(),
                Err(BlobError::QuotaExceeded(q)) => {
                    break format!("quota exceeded: used {} + requested {} > limit {}", q.used, q.requested, q.limit);
                }
                Err(other) => break format!("{other:?}"),
            }
        };
        Some(format!("stored {stored} copies, then: {refusal}"))
    }

    fn tools(_turn: Turn) -> Vec<ToolSpec> {
        let mut tools = Self::load().map(|manifest| manifest.tools).unwrap_or_default();
        if config()["listMode"].as_str() == Some("undeclared") {
            let _ = scratchpad_plugin_sdk::HostStorage.set("listed", b"1");
            tools.push(spec(format!("{}.ghost", prefix())));
        }
        tools
    }

    fn call_tool(_turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let prefix = prefix();
        let verb = name.strip_prefix(&format!("{prefix}.")).unwrap_or(&name).to_owned();
        let args: Value = serde_json::from_str(&arguments).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let text = |field: &str| args[field].as_str().unwrap_or_default().to_owned();
        let mut storage = scratchpad_plugin_sdk::HostStorage;
        if let Some(mark) = args["mark"].as_str() {
            storage.set(mark, b"marked").map_err(|e| ToolError::Failed(describe(&e)))?;
        }
        let out = match verb.as_str() {
            "write" => match storage.set(&text("key"), text("value").as_bytes()) {
                Ok(()) => "ok".to_owned(),
                Err(e) => return Err(ToolError::Failed(describe(&e))),
            },
            "read" => match storage.get(&text("key")) {
                Some(v) => String::from_utf8_lossy(&v).into_owned(),
                None => return Err(ToolError::NotFound(text("key"))),
            },
            "keys" => json!(storage.list(&text("prefix"))).to_string(),
            "write_then_trap" => {
                storage.set(&text("key"), text("value").as_bytes()).map_err(|e| ToolError::Failed(describe(&e)))?;
                panic!("probe panicked after writing");
            }
            "loop" => spin(),
            "bomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "recurse" => recurse(args["depth"].as_u64().unwrap_or(u64::MAX)).to_string(),
            "recurse_memory" => recurse_memory(u64::MAX).to_string(),
            "huge" => "x".repeat(args["bytes"].as_u64().unwrap_or(50 << 20) as usize),
            "fill" => {
                let chunk = vec![b'f'; 64 << 10];
                let mut i = 0;
                loop {
                    match storage.set(&format!("fill/{i}"), &chunk) {
                        Ok(()) => i += 1,
                        Err(e) => break format!("stored {i} chunks, then: {}", describe(&e)),
                    }
                }
            }
            "fs" => match std::fs::read_to_string(text("path")) {
                Ok(content) => format!("READ {} bytes", content.len()),
                Err(e) => format!("denied: {e}"),
            },
            "env" => json!(std::env::vars().collect::<Vec<_>>()).to_string(),
            // A counter in the instance's own memory: it survives only if an instance is reused.
            "count" => {
                static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                (CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1).to_string()
            }
            "stash" => {
                let secret = text("secret").into_bytes();
                let mut on_stack = [0u8; 256];
                let len = secret.len().min(on_stack.len());
                on_stack[..len].copy_from_slice(&secret[..len]);
                let on_heap = page_of_its_own(&secret);
                let (stack, heap) = (std::hint::black_box(&on_stack).as_ptr() as usize, on_heap.as_ptr() as usize);
                let echo = (peek(stack, len), peek(heap, len));
                // Time for a test to have the kernel swap the stash's page out while the
                // instance is alive: the loop touches no memory.
                let linger = args["linger"].as_u64().unwrap_or(0);
                let mut n = 0u64;
                while std::hint::black_box(n) < linger {
                    n += 1;
                }
                json!({ "stack": stack, "heap": heap, "len": len, "echo": [echo.0, echo.1] }).to_string()
            }
            "peek" => {
                let (addr, len) = (args["addr"].as_u64().unwrap_or(0), args["len"].as_u64().unwrap_or(0));
                peek(addr as usize, len.min(4096) as usize)
            }
            "net" => match std::net::TcpStream::connect(text("addr")) {
                Ok(_) => "CONNECTED".to_owned(),
                Err(e) => format!("denied: {e}"),
            },
            other => match index::run(other, &args) {
                Some(out) => out,
                None => return Err(ToolError::UnknownTool(name)),
            },
        };
        Ok(ToolOutput { content: out })
    }
}

fn describe(error: &StorageError) -> String {
    match error {
        StorageError::QuotaExceeded(q) => {
            format!("quota exceeded: used {} + requested {} > limit {}", q.used, q.requested, q.limit)
        }
        StorageError::InvalidKey(m) => format!("invalid key: {m}"),
    }
}

/// A leaked copy of `bytes` at the start of a 4 KiB page that holds nothing else of the heap
/// (the leaked buffer covers the whole page), so no later work of the call touches it.
fn page_of_its_own(bytes: &[u8]) -> &'static mut [u8] {
    const PAGE: usize = 4096;
    let buffer: &'static mut [u8] = Box::leak(vec![0u8; 2 * PAGE].into_boxed_slice());
    let start = (PAGE - buffer.as_ptr() as usize % PAGE) % PAGE;
    let len = bytes.len().min(PAGE);
    let page = &mut buffer[start..start + len];
    page.copy_from_slice(&bytes[..len]);
    page
}

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

/// Recursion that only uses the wasm call stack: values live across the call are spilled to
/// the engine's stack, nothing goes to linear memory, so the host's stack limit is what stops it.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let (a, b, c, d) = (depth.wrapping_mul(3), depth ^ 0x55, depth.rotate_left(7), depth.wrapping_add(11));
    if depth == 0 {
        return a ^ b ^ c ^ d;
    }
    let r = recurse(depth - 1);
    r.wrapping_mul(a) ^ b.wrapping_add(r) ^ c.rotate_right(r as u32) ^ d
}

/// Recursion whose frames live on the shadow stack in linear memory (what Rust puts there
/// for locals whose address is taken): it runs off the bottom of that stack.
#[inline(never)]
fn recurse_memory(depth: u64) -> u64 {
    let pad = std::hint::black_box([depth; 16]);
    if depth == 0 { pad[3] } else { recurse_memory(std::hint::black_box(depth - 1)) + pad[7] }
}

export_plugin!(Probe);

/// What `len` bytes at `addr` of this instance's linear memory hold now, as lossy text, or
/// `past the end` when they are not all inside it. Volatile reads: the compiler must not assume
/// what is there.
fn peek(addr: usize, len: usize) -> String {
    #[cfg(target_arch = "wasm32")]
    let end = core::arch::wasm32::memory_size(0) * 65536;
    #[cfg(not(target_arch = "wasm32"))]
    let end = 0;
    if addr.checked_add(len).is_none_or(|last| last > end) {
        return "past the end".to_owned();
    }
    let bytes: Vec<u8> = (0..len).map(|i| unsafe { std::ptr::read_volatile((addr + i) as *const u8) }).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
