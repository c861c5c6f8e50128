//! MCP on stdio, with a front that makes bad input harmless. rmcp's stdio codec drops a line
//! that is not JSON without an answer (a client waiting on it hangs), stops reading at invalid
//! UTF-8, answers some malformed requests with an error that has no `id` member, and knows no
//! batches. So this front reads stdin itself and hands rmcp only lines it can take:
//!
//! - not UTF-8, or not JSON: a parse error (-32700) with `"id": null`;
//! - JSON that is no MCP message: invalid request (-32600) or invalid params (-32602), with
//!   the id when it can be read and `null` otherwise; a malformed notification gets no answer
//!   (JSON-RPC never answers notifications);
//! - a batch (array): under protocol version 2025-03-26 its messages go to rmcp one by one
//!   and the responses to its requests come back as one array; under any other version it is
//!   refused (-32600, id null).
//!
//! rmcp's output passes through here too, one line at a time, so the two never interleave.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::ServiceExt;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::batch;
use super::server::{Connection, Shared};

/// A batch waiting for the responses to its requests.
struct Batch {
    waiting: HashSet<String>,
    responses: Vec<Value>,
}

/// What the input side learns that the output side needs, and back.
#[derive(Default)]
struct Exchange {
    /// The id of the `initialize` request, to read the negotiated version from its response.
    initialize_id: Option<String>,
    /// The protocol version the server answered `initialize` with.
    version: Option<String>,
    batches: Vec<Batch>,
}

/// Serves one client on stdin/stdout until stdin closes, or the process is asked to stop
/// ([`Shutdown`](crate::shutdown::Shutdown)): then it reads no more and ends as when stdin
/// closes, after answering the requests it took.
pub(crate) async fn serve(shared: Shared, session: String, guidance: String) -> anyhow::Result<()> {
    let shutdown = crate::shutdown::Shutdown::listen()?;
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 20);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 20);
    let exchange = Arc::new(Mutex::new(Exchange::default()));
    let (out, mut lines_out) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(message) = lines_out.recv().await {
            let mut line = serde_json::to_vec(&message).expect("JSON values serialize");
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    // Input and output run before `serve`, which returns only after the client's
    // `initialize` went through them.
    let pump = tokio::spawn(pump(from_rmcp, exchange.clone(), out.clone()));
    let input = tokio::spawn(read_input(to_rmcp, exchange, out, shutdown));
    let running = Connection::new(shared, session, guidance).serve((rmcp_in, rmcp_out)).await?;
    running.waiting().await?;
    input.await??;
    let _ = pump.await;
    let _ = writer.await;
    Ok(())
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// A message's id as a key, when it has one of JSON-RPC's id types.
fn id_key(message: &Value) -> Option<String> {
    message.get("id").filter(|id| id.is_string() || id.is_number()).map(Value::to_string)
}

/// Reads stdin until it closes or the process is asked to stop; what rmcp can take goes to
/// `to_rmcp`, answers to `out`.
async fn read_input(
    mut to_rmcp: tokio::io::DuplexStream,
    exchange: Arc<Mutex<Exchange>>,
    out: mpsc::UnboundedSender<Value>,
    mut shutdown: crate::shutdown::Shutdown,
) -> anyhow::Result<()> {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = tokio::select! {
            read = stdin.read_until(b'\n', &mut line) => read?,
            () = shutdown.requested() => {
                tracing::info!("asked to stop: reading no more requests");
                return Ok(());
            }
        };
        if read == 0 {
            return Ok(());
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            let _ = out.send(error(Value::Null, -32700, "parse error: the line is not UTF-8"));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                let _ = out.send(error(Value::Null, -32700, &format!("parse error: not JSON: {e}")));
                continue;
            }
        };
        let forward = match value {
            Value::Array(messages) => {
                let version = exchange.lock().unwrap().version.clone();
                if !batch::allowed(Some(version.as_deref().unwrap_or_default())) {
                    let message = batch::refusal_message(version.as_deref().unwrap_or("none yet"));
                    let _ = out.send(error(Value::Null, -32600, &message));
                    continue;
                }
                if messages.is_empty() {
                    let _ = out.send(error(Value::Null, -32600, "invalid request: an empty batch"));
                    continue;
                }
                let mut forward = Vec::new();
                let mut batch = Batch { waiting: HashSet::new(), responses: Vec::new() };
                for message in messages {
                    match check(&message) {
                        Ok(()) => {
                            if message.get("method").is_some()
                                && let Some(key) = id_key(&message)
                            {
                                batch.waiting.insert(key);
                            }
                            forward.push(message);
                        }
                        Err(Some(answer)) => batch.responses.push(answer),
                        Err(None) => {}
                    }
                }
                if batch.waiting.is_empty() {
                    if !batch.responses.is_empty() {
                        let _ = out.send(Value::Array(batch.responses));
                    }
                } else {
                    exchange.lock().unwrap().batches.push(batch);
                }
                forward
            }
            message => match check(&message) {
                Ok(()) => {
                    if message.get("method").and_then(Value::as_str) == Some("initialize") {
                        exchange.lock().unwrap().initialize_id = id_key(&message);
                    }
                    vec![message]
                }
                Err(answer) => {
                    if let Some(answer) = answer {
                        let _ = out.send(answer);
                    }
                    continue;
                }
            },
        };
        for message in forward {
            let mut bytes = serde_json::to_vec(&message).expect("JSON values serialize");
            bytes.push(b'\n');
            to_rmcp.write_all(&bytes).await?;
        }
    }
}

/// Whether rmcp can take `message`; if not, the answer to send (none for a notification).
fn check(message: &Value) -> Result<(), Option<Value>> {
    if serde_json::from_value::<ClientJsonRpcMessage>(message.clone()).is_ok() {
        return Ok(());
    }
    let id = message.get("id");
    let id_readable = id.is_some_and(|id| id.is_string() || id.is_number());
    let method = message.get("method").and_then(Value::as_str);
    let jsonrpc = message.get("jsonrpc") == Some(&json!("2.0"));
    if jsonrpc && method.is_some() && id.is_none() {
        return Err(None); // a notification: never answered, even when malformed
    }
    let id_value = if id_readable { id.cloned().unwrap_or(Value::Null) } else { Value::Null };
    if jsonrpc
        && id_readable
        && let Some(method) = method
    {
        return Err(Some(error(id_value, -32602, &format!("invalid params for `{method}`"))));
    }
    let text = "invalid request: a JSON-RPC 2.0 message is an object with \"jsonrpc\": \"2.0\", a string \"method\" \
                and a string or number \"id\" (none for a notification)";
    Err(Some(error(id_value, -32600, text)))
}

/// rmcp's output to stdout, line by line, gathering batch responses and noting the
/// negotiated protocol version.
async fn pump(from_rmcp: tokio::io::DuplexStream, exchange: Arc<Mutex<Exchange>>, out: mpsc::UnboundedSender<Value>) {
    let mut lines = BufReader::new(from_rmcp).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        let mut exchange = exchange.lock().unwrap();
        let key = id_key(&message);
        let is_response = message.get("method").is_none();
        if is_response && key.is_some() && key == exchange.initialize_id {
            exchange.version = message.pointer("/result/protocolVersion").and_then(Value::as_str).map(str::to_owned);
        }
        if is_response
            && let Some(key) = &key
            && let Some(index) = exchange.batches.iter().position(|b| b.waiting.contains(key))
        {
            let batch = &mut exchange.batches[index];
            batch.waiting.remove(key);
            batch.responses.push(message);
            if batch.waiting.is_empty() {
                let done = exchange.batches.remove(index);
                let _ = out.send(Value::Array(done.responses));
            }
            continue;
        }
        drop(exchange);
        let _ = out.send(message);
    }
}
