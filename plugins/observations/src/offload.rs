//! The large-observation store's offload: a large observation is stored whole by the host and the model sees a
//! short synthetic observation instead, with a summary made from the observation's two ends.
//!
//! The guest reads only what the summary shows (at most 4 bytes per character of the head and
//! of the tail), so offloading a 100 MB observation touches a few KiB of guest memory.

use scratchpad_plugin_sdk::{BlobError, ContentKind, NewEntry, ToolCall, Turn};
use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::store::{Blobs, HOST_READ_CAP, Source, kind_name};
use crate::text;

/// The `_note` of a synthetic observation (the large-observation store's text).
pub const NOTE: &str =
    "Large observation saved in scratchpad. To read it in full or partially, use the scratchpad_read tool.";

/// The synthetic observation the model sees, in the large-observation store's field order.
#[derive(Debug, Serialize)]
struct Synthetic<'a> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    scratchpad_id: Option<&'a str>,
    size_bytes: u64,
    kind: &'static str,
    summary: &'a str,
    metadata: Value,
    #[serde(rename = "_note")]
    note: String,
}

/// `after-tool-result`: `None` (pass through) when the observation is at most
/// `thresholdBytes`; otherwise stores it and returns the synthetic observation's JSON text.
///
/// If the host refuses to store it, the model still gets the summary (never the whole
/// observation), without a `scratchpad_id` and with a `_note` that says why.
pub fn offload<B: Blobs + ?Sized>(
    blobs: &mut B,
    config: &Config,
    turn: &Turn,
    call: &ToolCall,
    observation: &B::Content,
) -> Option<String> {
    let size_bytes = observation.size();
    if size_bytes <= config.threshold_bytes {
        return None;
    }
    let summary = summary(observation, config);
    let metadata = metadata(&observation.metadata());
    let new = NewEntry {
        turn_id: turn.turn_id.clone(),
        step: call.step,
        tool: call.name.clone(),
        summary: summary.clone(),
        ttl_seconds: ttl_seconds(&metadata, config),
    };
    let stored = blobs.store(observation, new);
    let (scratchpad_id, note) = match &stored {
        Ok(id) => (Some(id.as_str()), NOTE.to_owned()),
        Err(error) => {
            let reason = match error {
                BlobError::NotFound(reason) | BlobError::Invalid(reason) => reason.clone(),
                BlobError::QuotaExceeded(q) => format!(
                    "this session's saved observations use {} of their {} bytes and this one has {}",
                    q.used, q.limit, q.requested
                ),
            };
            (
                None,
                format!(
                    "Large observation could not be saved in the scratchpad ({reason}); only this summary is \
                     available."
                ),
            )
        }
    };
    let synthetic = Synthetic {
        ok: true,
        scratchpad_id,
        size_bytes,
        kind: kind_name(observation.kind()),
        summary: &summary,
        metadata,
        note,
    };
    Some(serde_json::to_string(&synthetic).expect("a synthetic observation serialises"))
}

/// The entry's time to live: the tool's `ttl_seconds` metadata when it is a positive integer
/// (the large-observation store's per-entry TTL), else the configured `ttlSeconds`.
fn ttl_seconds(metadata: &Value, config: &Config) -> u64 {
    metadata.get("ttl_seconds").and_then(Value::as_u64).filter(|&t| t > 0).unwrap_or(config.ttl_seconds)
}

/// The tool's metadata as a JSON value: the object the host gave, `{}` if it was not one.
fn metadata(text: &str) -> Value {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(Default::default()),
    }
}

/// The large-observation store's summary of `source`. Binary: `[BINARY: N bytes, sha256=<hex>]`. Text: the first
/// `headChars` characters, `\n[... N characters omitted ...]\n` with the exact N, and the last
/// `tailChars` characters; the whole text when it has at most `headChars + tailChars`.
pub fn summary<S: Source + ?Sized>(source: &S, config: &Config) -> String {
    let size = source.size();
    if source.kind() == ContentKind::Binary {
        return format!("[BINARY: {size} bytes, sha256={}]", source.sha256());
    }
    let (head, tail) = (config.head_chars, config.tail_chars);
    let chars = source.size_chars();
    // A character is at most 4 bytes, so these windows hold the characters wanted.
    if chars <= head.saturating_add(tail) {
        return text::decode_inner(&read(source, 0, size.min(chars.saturating_mul(4))));
    }
    let head_text = text::decode_inner(&read(source, 0, size.min(head.saturating_mul(4))));
    let tail_text = text::decode_inner(&read(source, size.saturating_sub(tail.saturating_mul(4)), size));
    let omitted = chars - head - tail;
    format!(
        "{}\n[... {omitted} characters omitted ...]\n{}",
        text::first_chars(&head_text, head),
        text::last_chars(&tail_text, tail)
    )
}

/// Bytes `start..end` of `source`, in host-capped reads.
fn read<S: Source + ?Sized>(source: &S, start: u64, end: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(end.saturating_sub(start) as usize);
    let mut at = start;
    while at < end {
        let piece = source.read(at, (end - at).min(u64::from(HOST_READ_CAP)) as u32);
        if piece.is_empty() {
            break;
        }
        at += piece.len() as u64;
        out.extend_from_slice(&piece);
    }
    out
}

#[cfg(test)]
mod tests;
