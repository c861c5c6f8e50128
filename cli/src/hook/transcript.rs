//! What the hook reads from the agent's transcript (`transcript_path`, JSONL): the final
//! assistant text of the turn (for `after_response`) and the context the last model call used
//! (for the context-pressure policy's context line and flush warnings). Claude Code writes one JSON object per
//! line; an assistant line is `{"type":"assistant","message":{"content":[{"type":"text",
//! "text":…}, …],"usage":{"input_tokens":…,"cache_creation_input_tokens":…,
//! "cache_read_input_tokens":…,…}}, …}`. Only the file's tail is read, so a long session costs
//! the same as a short one.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// How much of the transcript's end is read.
const TAIL_BYTES: u64 = 4 << 20;

/// What the tail of a transcript says about the turn.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// The text of the last assistant message that has text.
    pub(crate) last_text: Option<String>,
    /// Tokens of context of the last model call: its input, cache-creation and cache-read
    /// tokens.
    pub(crate) context_tokens: Option<u64>,
}

/// Reads the tail of the transcript at `path`; a missing or unreadable file says nothing.
pub(crate) fn read(path: &Path) -> Tail {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Tail::default();
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = size.saturating_sub(TAIL_BYTES);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Tail::default();
    }
    let mut bytes = Vec::new();
    if file.take(TAIL_BYTES).read_to_end(&mut bytes).is_err() {
        return Tail::default();
    }
    parse(&String::from_utf8_lossy(&bytes), start > 0)
}

/// The tail of transcript `text`; with `cut`, its first line may be partial and is skipped.
fn parse(text: &str, cut: bool) -> Tail {
    let mut tail = Tail::default();
    let lines = text.lines().skip(usize::from(cut));
    for line in lines.collect::<Vec<_>>().into_iter().rev() {
        if tail.last_text.is_some() && tail.context_tokens.is_some() {
            break;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        let message = &entry["message"];
        if entry["type"] != "assistant" && message["role"] != "assistant" {
            continue;
        }
        if tail.context_tokens.is_none() {
            let usage = &message["usage"];
            let tokens: u64 = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
                .iter()
                .filter_map(|k| usage[k].as_u64())
                .sum();
            if usage.is_object() && tokens > 0 {
                tail.context_tokens = Some(tokens);
            }
        }
        if tail.last_text.is_none() {
            let text: Vec<&str> = match &message["content"] {
                Value::String(s) => vec![s.as_str()],
                Value::Array(blocks) => {
                    blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect()
                }
                _ => Vec::new(),
            };
            if !text.is_empty() {
                tail.last_text = Some(text.join("\n"));
            }
        }
    }
    tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_text_and_the_last_calls_context_are_found() {
        let transcript = [
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"first"}],"usage":{"input_tokens":10}}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Saved."},{"type":"text","text":"Done."}],"usage":{"input_tokens":5}}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"Bash","input":{}}],"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":3000,"output_tokens":7}}}"#,
            "not json",
        ]
        .join("\n");
        assert_eq!(
            parse(&transcript, false),
            Tail { last_text: Some("Saved.\nDone.".into()), context_tokens: Some(3120) }
        );
    }

    #[test]
    fn a_cut_first_line_and_a_missing_file_say_nothing_wrong() {
        let text = "e\":\"assistant\"}\n{\"type\":\"assistant\",\"message\":{\"content\":\"ok\"}}";
        assert_eq!(parse(text, true).last_text.as_deref(), Some("ok"));
        assert_eq!(read(Path::new("/nonexistent/transcript.jsonl")), Tail::default());
    }
}
