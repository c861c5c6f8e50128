//! Any bytes as `scratchpad_read` arguments or as a later call's arguments with references:
//! never a panic, over a store holding one offloaded text entry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use observations_plugin::store::{Blobs, Source};
use observations_plugin::{Config, Observations};
use scratchpad_plugin_sdk::{BlobError, ContentKind, Entry, NewEntry, ToolCall, Turn};

const CONTENT: &str = "INFO first line\nWARN ünïcödé line\nERROR LAST_CRITICAL_EVENT\n";

struct OneEntry;

/// Nothing is stored while fuzzing the read side.
struct NoContent;

impl Source for NoContent {
    fn size(&self) -> u64 {
        0
    }
    fn kind(&self) -> ContentKind {
        ContentKind::Text
    }
    fn size_chars(&self) -> u64 {
        0
    }
    fn read(&self, _: u64, _: u32) -> Vec<u8> {
        Vec::new()
    }
    fn sha256(&self) -> String {
        String::new()
    }
    fn metadata(&self) -> String {
        "{}".into()
    }
}

fn entry() -> Entry {
    Entry {
        id: "0123456789abcdef".into(),
        turn_id: "t".into(),
        step: 1,
        tool: "fs_read".into(),
        kind: ContentKind::Text,
        size_bytes: CONTENT.len() as u64,
        size_chars: CONTENT.chars().count() as u64,
        ascii: false,
        sha256: "0".repeat(64),
        summary: "summary".into(),
        metadata: r#"{"path":"/tmp/x"}"#.into(),
        created_at_ms: 0,
        expires_at_ms: u64::MAX,
        expired: false,
    }
}

impl Blobs for OneEntry {
    type Content = NoContent;
    fn store(&mut self, _: &NoContent, _: NewEntry) -> Result<String, BlobError> {
        Err(BlobError::Invalid("read-only".into()))
    }
    fn stat(&self, id: &str) -> Option<Entry> {
        (id == "0123456789abcdef").then(entry)
    }
    fn list_turn(&self, turn_id: &str) -> Vec<Entry> {
        if turn_id == "t" { vec![entry()] } else { Vec::new() }
    }
    fn read(&self, id: &str, offset: u64, len: u32) -> Result<Vec<u8>, BlobError> {
        if id != "0123456789abcdef" {
            return Err(BlobError::NotFound(id.into()));
        }
        let start = (offset as usize).min(CONTENT.len());
        let end = start.saturating_add(len as usize).min(CONTENT.len());
        Ok(CONTENT.as_bytes()[start..end].to_vec())
    }
}

fuzz_target!(|data: &[u8]| {
    let arguments = String::from_utf8_lossy(data);
    let config = Config::default();
    let turn =
        Turn { session_id: "s".into(), turn_id: "t".into(), turn_index: 0, tokens_used: None, context_window: None };
    let mut store = OneEntry;
    let plugin = Observations::new(&mut store, &config);
    let _ = plugin.call_tool(&turn, "scratchpad_read", &arguments);
    let call = ToolCall { name: "fs_write".into(), arguments: arguments.into_owned(), step: 2 };
    let _ = plugin.before_tool_call(&turn, &call);
});
