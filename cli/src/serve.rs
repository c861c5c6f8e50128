//! `scratchpad serve`: the whole host API as newline-delimited JSON-RPC 2.0 over stdio, for
//! agent runtimes that are not written in Rust. One host per process; requests may be sent
//! concurrently and are answered as they finish, matched by `id`. A bad line gets an error
//! response and never stops the server. The protocol is documented in `docs/protocol.md`.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use scratchpad_host::{
    ContentKind, Error, Host, HostConfig, Observation, Origin, Placement, ToolCall, ToolNames, ToolSpec, TurnContext,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

mod summarize;

/// JSON-RPC's own error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
/// This protocol's codes (the implementation-defined server-error range).
const TOOL_ERROR: i64 = -32001;
const PLUGIN_FAILED: i64 = -32002;
const SESSION_NOT_FOUND: i64 = -32003;
const SESSION_EXISTS: i64 = -32004;
const UNKNOWN_TOOL: i64 = -32005;
const CHECKPOINT_FAILED: i64 = -32006;
const BUSY: i64 = -32007;
const STORAGE_FAULT: i64 = -32008;
const UNAVAILABLE: i64 = -32009;

/// `scratchpad serve`'s options.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct ServeArgs {
    /// The client writes the rolling checkpoints: the server sends it `summarize` requests
    /// (docs/protocol.md), so context-guard's checkpoints are on
    #[arg(long)]
    pub(crate) summarize: bool,
}

/// Serves requests from stdin until it closes, or the process is asked to stop
/// ([`Shutdown`](crate::shutdown::Shutdown)); either way every request already taken is
/// answered before it returns.
pub(crate) async fn run(mut config: HostConfig, args: ServeArgs) -> anyhow::Result<()> {
    let mut shutdown = crate::shutdown::Shutdown::listen()?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let client = summarize::ClientRequests::new(tx.clone());
    if args.summarize {
        config = config.with_summarizer(summarize::ClientSummarizer::new(client.clone()));
    }
    let host = Arc::new(Host::open(config).await?);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(response) = rx.recv().await {
            let mut line = serde_json::to_vec(&response).expect("responses serialize");
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut tasks = tokio::task::JoinSet::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bytes, not `String` lines: one line of invalid UTF-8 is a parse error to answer,
        // not an I/O error that ends the server.
        let read = tokio::select! {
            read = stdin.read_until(b'\n', &mut line) => read?,
            () = shutdown.requested() => {
                tracing::info!("asked to stop: answering the {} request(s) taken, taking no more", tasks.len());
                break;
            }
        };
        if read == 0 {
            break;
        }
        let request = match parse_line(&line) {
            Ok(None) => continue,
            Ok(Some(value)) => value,
            Err(response) => {
                let _ = tx.send(response);
                continue;
            }
        };
        // A line with `result` or `error` and no `method` answers one of our requests.
        if request.get("method").is_none() && (request.get("result").is_some() || request.get("error").is_some()) {
            client.answer(request);
            continue;
        }
        let (host, tx) = (host.clone(), tx.clone());
        tasks.spawn(async move {
            if let Some(response) = handle_request(&host, request).await {
                let _ = tx.send(response);
            }
        });
    }
    // No answer can come any more: waiting requests fail now, and the writer's last sender
    // held by the summarizer goes.
    client.close();
    while tasks.join_next().await.is_some() {}
    drop(tx);
    let _ = writer.await;
    Ok(())
}

/// One line as JSON: `None` for a blank line, a parse-error response (id null: the id of a
/// line that cannot be read is unknown) for bytes that are not UTF-8 JSON.
fn parse_line(line: &[u8]) -> Result<Option<Value>, Value> {
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let message = format!("parse error: the line is not UTF-8 (invalid byte at offset {})", e.valid_up_to());
            return Err(error_response(Value::Null, PARSE_ERROR, &message, None));
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| error_response(Value::Null, PARSE_ERROR, &format!("parse error: not JSON: {e}"), None))
}

/// One request in, at most one response out (none for a notification).
async fn handle_request(host: &Host, request: Value) -> Option<Value> {
    let id = request.get("id").cloned();
    let method = request.get("method").and_then(Value::as_str);
    let id_valid = id.as_ref().is_none_or(|id| id.is_string() || id.is_number() || id.is_null());
    let valid = request.get("jsonrpc") == Some(&json!("2.0")) && request.is_object() && id_valid;
    let (Some(method), true) = (method, valid) else {
        let message = "a request is an object with \"jsonrpc\": \"2.0\", a string \"method\" and an optional id";
        // An id of the wrong type cannot be echoed: JSON-RPC 2.0 says null then.
        let id = id.filter(|_| id_valid).unwrap_or(Value::Null);
        return Some(error_response(id, INVALID_REQUEST, message, None));
    };
    let params = request.get("params").cloned().unwrap_or(json!({}));
    let result = dispatch(host, method, params).await;
    let id = id?; // notifications get no response
    Some(match result {
        Ok(value) => json!({ "jsonrpc": "2.0", "id": id, "result": value }),
        Err(Failure { code, message, data }) => error_response(id, code, &message, data),
    })
}

pub(crate) fn error_response(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

struct Failure {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Failure {
    fn params(message: impl std::fmt::Display) -> Self {
        Failure { code: INVALID_PARAMS, message: format!("invalid params: {message}"), data: None }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let message = error.to_string();
        let (code, data) = match &error {
            Error::Tool { plugin, tool, error } => (
                TOOL_ERROR,
                Some(json!({ "plugin": plugin, "tool": tool, "kind": error.kind, "message": error.message })),
            ),
            Error::Plugin { plugin, hook, failure } => {
                (PLUGIN_FAILED, Some(json!({ "plugin": plugin, "hook": hook, "failure": failure.to_string() })))
            }
            Error::SessionNotFound(id) => (SESSION_NOT_FOUND, Some(json!({ "session": id }))),
            Error::SessionExists(id) => (SESSION_EXISTS, Some(json!({ "session": id }))),
            Error::UnknownTool(name) => (UNKNOWN_TOOL, Some(json!({ "tool": name }))),
            Error::InvalidInput { .. } => (INVALID_PARAMS, None),
            Error::Checkpoint { session, .. } => (CHECKPOINT_FAILED, Some(json!({ "session": session }))),
            Error::Busy { waited_ms, .. } => (BUSY, Some(json!({ "waited_ms": waited_ms, "retryable": true }))),
            Error::DiskFull { database } | Error::ReadOnly { database } => {
                (STORAGE_FAULT, Some(json!({ "fault": error.code(), "database": database })))
            }
            Error::Unavailable { .. } => (UNAVAILABLE, Some(json!({ "retryable": true }))),
            _ => (INTERNAL_ERROR, None),
        };
        Failure { code, message, data }
    }
}

fn parse<T: for<'de> Deserialize<'de>>(params: Value) -> Result<T, Failure> {
    serde_json::from_value(params).map_err(Failure::params)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnParams {
    turn: TurnContext,
    #[serde(default)]
    api_names: bool,
}

/// How a request's texts name tools: `"api_names": true` asks for the names the client offers
/// the model (each tool's API name), so guidance never names a tool the model does not have.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NamingParams {
    #[serde(default)]
    api_names: bool,
}

/// The tools' model-visible names when the client asked for API names.
fn naming(host: &Host, api_names: bool) -> Option<ToolNames> {
    api_names.then(|| host.tool_names(""))
}

/// `text` as the client's model reads it.
fn named(names: &Option<ToolNames>, text: &str) -> String {
    names.as_ref().map_or_else(|| text.to_owned(), |names| names.rewrite(text))
}

/// A tool's description as the client's model reads it.
fn described(names: &Option<ToolNames>, tool: ToolSpec) -> ToolSpec {
    ToolSpec { description: named(names, &tool.description), ..tool }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionParams {
    session: String,
    #[serde(default = "new_origin")]
    origin: Origin,
    /// The project key (a spawn or fork without one is in its parent's).
    #[serde(default)]
    project: Option<String>,
}

fn new_origin() -> Origin {
    Origin::New
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryParams {
    turn: TurnContext,
    message: String,
    #[serde(default)]
    system: String,
    #[serde(default)]
    api_names: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextParams {
    turn: TurnContext,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    turn: TurnContext,
    name: String,
    arguments: Value,
    #[serde(default)]
    api_names: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallParams {
    turn: TurnContext,
    call: ToolCall,
}

/// An observation as JSON: exactly one of `text`, `base64` or `path` (a file the server reads).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObservationParams {
    turn: TurnContext,
    call: ToolCall,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    kind: Option<ContentKind>,
    #[serde(default = "empty_object")]
    metadata: Value,
}

fn empty_object() -> Value {
    json!({})
}

async fn dispatch(host: &Host, method: &str, params: Value) -> Result<Value, Failure> {
    Ok(match method {
        "plugins" => {
            let p: NamingParams = if params.is_null() { NamingParams::default() } else { parse(params)? };
            let names = naming(host, p.api_names);
            let mut plugins = host.plugins();
            for plugin in &mut plugins {
                plugin.tools = std::mem::take(&mut plugin.tools).into_iter().map(|t| described(&names, t)).collect();
            }
            json!({ "plugins": plugins })
        }
        "session.create" => {
            let p: SessionParams = parse(params)?;
            json!({ "guidance": host.create_session_in(&p.session, p.origin, p.project.as_deref()).await? })
        }
        "session.show" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Show {
                session: String,
            }
            let p: Show = parse(params)?;
            let state: Vec<Value> = host
                .state(&p.session)
                .await?
                .into_iter()
                .map(|e| json!({ "plugin": e.plugin, "key": e.key, "value": String::from_utf8_lossy(&e.value) }))
                .collect();
            json!({
                "session": host.session(&p.session).await?,
                "metadata": host.metadata(&p.session).await?,
                "state": state,
                "observations": host.observations(&p.session).await?,
                "latest_checkpoint": host.latest_checkpoint(&p.session).await?,
            })
        }
        "before_query" => {
            let p: QueryParams = parse(params)?;
            let mut prompt = host.before_query(&p.turn, &p.message).await?;
            if let Some(names) = naming(host, p.api_names) {
                prompt = prompt.naming(&names);
            }
            let injections: serde_json::Map<String, Value> = Placement::ALL
                .iter()
                .map(|placement| (placement.as_str().to_owned(), json!(prompt.at(*placement).collect::<Vec<_>>())))
                .collect();
            json!({ "injections": injections, "rendered": prompt.render(&p.system, &p.message) })
        }
        "after_response" => {
            let p: TextParams = parse(params)?;
            host.after_response(&p.turn, &p.text).await?;
            json!({})
        }
        "tools.list" => {
            let p: TurnParams = parse(params)?;
            let names = naming(host, p.api_names);
            let tools: Vec<ToolSpec> = host.tools(&p.turn).await?.into_iter().map(|t| described(&names, t)).collect();
            json!({ "tools": tools })
        }
        "tools.call" => {
            let p: CallParams = parse(params)?;
            let arguments = match p.arguments {
                Value::String(text) => text,
                other => other.to_string(),
            };
            let output = host.call_tool(&p.turn, &p.name, &arguments).await?;
            json!({ "plugin": output.plugin, "content": named(&naming(host, p.api_names), &output.content) })
        }
        "before_tool_call" => {
            let p: ToolCallParams = parse(params)?;
            json!({ "arguments": host.before_tool_call(&p.turn, &p.call).await? })
        }
        "after_tool_result" => {
            let p: ObservationParams = parse(params)?;
            let bytes: Vec<u8> = match (p.text, p.base64, p.path) {
                (Some(text), None, None) => text.into_bytes(),
                (None, Some(encoded), None) => BASE64.decode(encoded).map_err(Failure::params)?,
                (None, None, Some(path)) => {
                    std::fs::read(&path).map_err(|e| Failure::params(format!("{path}: {e}")))?
                }
                _ => return Err(Failure::params("give exactly one of `text`, `base64` or `path`")),
            };
            let observation = Observation { bytes: bytes.into(), kind: p.kind, metadata: p.metadata };
            let view = host.after_tool_result(&p.turn, &p.call, &observation).await?;
            json!({ "replaced_by": view.replaced_by, "replacement": view.replacement })
        }
        "before_compaction" => {
            let p: TurnParams = parse(params)?;
            let names = naming(host, p.api_names);
            let mut warnings = host.before_compaction(&p.turn).await?;
            warnings.iter_mut().for_each(|w| w.text = named(&names, &w.text));
            json!({ "warnings": warnings })
        }
        "after_compaction" => {
            let p: TurnParams = parse(params)?;
            host.after_compaction(&p.turn).await?;
            json!({})
        }
        "project.of_dir" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct OfDir {
                dir: std::path::PathBuf,
            }
            let p: OfDir = parse(params)?;
            json!({ "project": scratchpad_host::project_of_dir(&p.dir)? })
        }
        "recall.search" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Search {
                project: String,
                query: String,
                #[serde(default = "ten")]
                limit: u32,
            }
            let p: Search = parse(params)?;
            json!({ "hits": host.recall_search(&p.project, &p.query, p.limit).await? })
        }
        "recall.preview" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Preview {
                project: String,
                #[serde(default)]
                message: String,
            }
            let p: Preview = parse(params)?;
            let prompt = host.preview_new_session(&p.project, &p.message).await?;
            json!({ "injections": prompt.injections, "rendered": prompt.render_system_only("") })
        }
        "gc" => json!({ "removed": host.gc().await? }),
        "metrics" => json!({ "text": host.metrics().render() }),
        other => {
            return Err(Failure {
                code: METHOD_NOT_FOUND,
                message: format!("method not found: `{other}`; see docs/protocol.md"),
                data: None,
            });
        }
    })
}
