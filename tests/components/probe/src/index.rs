//! The probe's verbs over the `index` import (the project's search index), each answering
//! JSON: what the import answered, so a test asserts on the host's behaviour itself.

use scratchpad_plugin_sdk::{Access, Document, HostIndex, Index, IndexError, Query};
use serde_json::{Value, json};

/// The index verbs, `index_<verb>`.
pub const VERBS: &[&str] =
    &["index_access", "index_put", "index_put_then_trap", "index_remove", "index_get", "index_search", "index_recent"];

fn error(e: &IndexError) -> Value {
    match e {
        IndexError::NoProject => json!({ "error": "no-project" }),
        IndexError::ReadOnly => json!({ "error": "read-only" }),
        IndexError::QuotaExceeded(q) => {
            json!({ "error": "quota-exceeded", "used": q.used, "requested": q.requested, "limit": q.limit })
        }
        IndexError::Invalid(message) => json!({ "error": "invalid", "message": message }),
    }
}

fn text(args: &Value, field: &str) -> String {
    args[field].as_str().unwrap_or_default().to_owned()
}

fn put(index: &mut HostIndex, args: &Value) -> Value {
    let document = Document {
        id: text(args, "id"),
        kind: args["kind"].as_str().unwrap_or("note").to_owned(),
        title: text(args, "title"),
        text: text(args, "text"),
        at_ms: args["at"].as_u64().unwrap_or(0),
    };
    match index.put(document) {
        Ok(()) => json!({ "ok": true }),
        Err(e) => error(&e),
    }
}

/// Runs index verb `verb` with `args`; `None` when `verb` is not one.
pub fn run(verb: &str, args: &Value) -> Option<String> {
    let mut index = HostIndex;
    let out = match verb {
        "index_access" => json!(match index.access() {
            Access::None => "none",
            Access::Read => "read",
            Access::ReadWrite => "read-write",
        }),
        "index_put" => match args["documents"].as_array() {
            Some(many) => json!(many.iter().map(|one| put(&mut index, one)).collect::<Vec<_>>()),
            None => put(&mut index, args),
        },
        "index_put_then_trap" => {
            put(&mut index, args);
            panic!("probe trapped after an index write")
        }
        "index_remove" => match index.remove(&text(args, "id")) {
            Ok(there) => json!({ "removed": there }),
            Err(e) => error(&e),
        },
        "index_get" => match index.get(&text(args, "id")) {
            Some(d) => json!({ "id": d.id, "kind": d.kind, "title": d.title, "text": d.text, "at": d.at_ms,
                               "session": d.session }),
            None => Value::Null,
        },
        "index_search" => {
            let query = Query {
                text: text(args, "query"),
                kind: args["kind"].as_str().map(str::to_owned),
                session: args["session"].as_str().map(str::to_owned),
                since_ms: args["since"].as_u64(),
                other_sessions: args["other"].as_bool().unwrap_or(false),
                limit: args["limit"].as_u64().unwrap_or(10) as u32,
            };
            match index.search(&query) {
                Ok(hits) => json!(
                    hits.iter()
                        .map(|h| json!({ "id": h.id, "kind": h.kind, "title": h.title, "at": h.at_ms,
                                     "session": h.session, "snippet": h.snippet, "bytes": h.text_bytes,
                                     "score": h.score }))
                        .collect::<Vec<_>>()
                ),
                Err(e) => error(&e),
            }
        }
        "index_recent" => {
            let limit = args["limit"].as_u64().unwrap_or(10) as u32;
            let other = args["other"].as_bool().unwrap_or(false);
            match index.recent(args["kind"].as_str(), other, limit) {
                Ok(kept) => json!(kept
                    .iter()
                    .map(|d| json!({ "id": d.id, "kind": d.kind, "text": d.text, "at": d.at_ms, "session": d.session }))
                    .collect::<Vec<_>>()),
                Err(e) => error(&e),
            }
        }
        _ => return None,
    };
    Some(out.to_string())
}
