//! JSON-RPC batches over HTTP. Protocol version 2025-03-26 lets a client send an array of
//! messages in one POST; 2025-06-18 removed that. rmcp takes one message per request, so a
//! batch is answered here: each message goes to the session's rmcp service as a POST of its
//! own with the client's headers, and the responses to its requests come back as one JSON
//! array. Under any other protocol version a batch is refused with a JSON-RPC error.
//!
//! The version is the client's `MCP-Protocol-Version` header: required after initialization
//! from 2025-06-18 on, and absent means 2025-03-26 (the transport specification's rule).

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{Request, Response, StatusCode, header};
use serde_json::{Value, json};

use super::reply::{Body, refuse};

/// The protocol version that has batches.
pub(crate) const BATCH_VERSION: &str = "2025-03-26";

type Service = rmcp::transport::StreamableHttpService<
    super::server::Connection,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// Whether `version` is one that has JSON-RPC batches.
pub(crate) fn allowed(version: Option<&str>) -> bool {
    version.is_none_or(|v| v == BATCH_VERSION)
}

/// The error object for a batch under a protocol version without batches.
pub(crate) fn refusal_message(version: &str) -> String {
    format!(
        "JSON-RPC batches exist only in MCP protocol version {BATCH_VERSION}; this session uses {version}: send one \
         message per request"
    )
}

pub(crate) async fn handle(service: &Service, parts: Parts, body: Bytes) -> Response<Body> {
    let version = parts.headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
    if !allowed(version) {
        return refuse(StatusCode::BAD_REQUEST, -32600, &refusal_message(version.unwrap_or_default()));
    }
    let messages = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(messages)) if !messages.is_empty() => messages,
        Ok(_) => return refuse(StatusCode::BAD_REQUEST, -32600, "invalid request: an empty batch"),
        Err(e) => return refuse(StatusCode::BAD_REQUEST, -32700, &format!("parse error: not JSON: {e}")),
    };
    if messages.iter().any(|m| m.get("method").and_then(Value::as_str) == Some("initialize")) {
        return refuse(StatusCode::BAD_REQUEST, -32600, "invalid request: `initialize` cannot be part of a batch");
    }
    let mut responses = Vec::new();
    for message in messages {
        if !message.is_object() {
            responses.push(error(Value::Null, -32600, "invalid request: a batch element is not an object"));
            continue;
        }
        let id = message.get("id").cloned();
        let mut request = Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
        for (name, value) in &parts.headers {
            if name != header::CONTENT_LENGTH {
                request = request.header(name, value);
            }
        }
        let request = request.body(Full::new(Bytes::from(message.to_string()))).expect("a copied request is valid");
        let response = service.handle(request).await;
        // Notifications and responses get no answer; requests get theirs.
        if let Some(id) = id.filter(|_| message.get("method").is_some()) {
            responses.push(answer(response, &id).await);
        }
    }
    if responses.is_empty() {
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::ACCEPTED;
        return response;
    }
    let mut response = Response::new(Full::new(Bytes::from(Value::Array(responses).to_string())).boxed());
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The response to request `id` in rmcp's answer: a JSON body, or the event of an SSE stream
/// that carries it.
async fn answer(response: Response<Body>, id: &Value) -> Value {
    let status = response.status();
    let sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut body = response.into_body();
    let mut text = String::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else { continue };
        text.push_str(&String::from_utf8_lossy(&data));
        if sse && let Some(found) = find_in_events(&text, id) {
            return found;
        }
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(value) if !sse && value.get("id") == Some(id) => value,
        Ok(value) if value.get("error").is_some() => {
            let mut value = value;
            value["id"] = id.clone();
            value
        }
        _ => error(id.clone(), -32603, &format!("no response to this request (HTTP {status})")),
    }
}

/// The JSON-RPC response to `id` among complete SSE events of `text`.
fn find_in_events(text: &str, id: &Value) -> Option<Value> {
    let complete = &text[..text.rfind("\n\n")? + 2];
    complete.split("\n\n").find_map(|event| {
        let data: String =
            event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect::<Vec<_>>().join("\n");
        let value: Value = serde_json::from_str(&data).ok()?;
        let is_response = value.get("result").is_some() || value.get("error").is_some();
        (is_response && value.get("id") == Some(id)).then_some(value)
    })
}
