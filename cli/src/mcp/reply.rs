//! What the HTTP transport answers itself, before or instead of rmcp: the response body type
//! and a JSON-RPC error as an HTTP response (`http.rs` refuses requests, `batch.rs` bad
//! batches).

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Response, StatusCode, header};
use serde_json::json;

/// A response body, from rmcp or from this server.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// A JSON-RPC error as an HTTP response (id null: a refused request's id is not read).
pub(crate) fn refuse(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

/// The host's metrics as a Prometheus scrape answer (text exposition format 0.0.4).
pub(crate) fn metrics(text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}
