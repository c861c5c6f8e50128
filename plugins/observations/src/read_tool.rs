//! `scratchpad_read`: the large-observation store's modes `full`, `head`, `tail` and `range`, and the line modes
//! `lines` and `grep` its v1.1 limits announce.
//!
//! Decisions, as the model is told in the results:
//! - Text is indexed by characters (Unicode scalar values), binary by bytes; binary content is
//!   returned as `content_base64`. `lines` and `grep` read text entries only.
//! - A range past the end is clamped, with a `note` saying so; a `start` at or past the end
//!   returns nothing (with a note). `n` larger than the entry returns all of it (with a note).
//!   Negative or fractional numbers, `n` = 0, `end` before `start` and `end_line` before
//!   `start_line` are `invalid-arguments` naming the field.
//! - One read returns at most `maxReadBytes` bytes of content; a longer one is cut on a
//!   character boundary, with `"truncated": true` and a note saying where to continue.
//! - `full` on an entry larger than `fullWarnBytes` works and carries a `warning`.
//! - An id that is unknown, of another session or of another turn is `not-found` with one and
//!   the same message; an expired id (not yet collected) is `not-found` saying it expired.

use base64::Engine;
use scratchpad_plugin_sdk::{ContentKind, Entry, ToolError, ToolOutput, Turn};
use serde::Serialize;

use crate::config::Config;
use crate::grep::{Grep, MAX_CONTEXT, Match};
use crate::reader::{EntryReader, not_found_message};
use crate::schema::MODES;
use crate::store::{Blobs, kind_name};
use scratchpad_plugin_sdk::args::{Args, invalid};

/// What a call asks for, validated before the entry is looked up.
#[derive(Debug)]
enum Request {
    Full,
    Head(u64),
    Tail(u64),
    Range { start: u64, end: u64 },
    Lines { start: u64, end: u64 },
    Grep(Grep),
}

impl Request {
    fn parse(args: &Args, config: &Config) -> Result<(&'static str, Request), ToolError> {
        let mode = args.optional_string("mode")?.unwrap_or("head");
        let Some(mode) = MODES.iter().copied().find(|m| *m == mode) else {
            return Err(invalid(format!("unknown `mode` \"{mode}\"; use one of {}", MODES.join(", "))));
        };
        let n = || Ok::<_, ToolError>(args.integer("n", 1)?.unwrap_or(config.default_read_chars));
        let request = match mode {
            "full" => Request::Full,
            "head" => Request::Head(n()?),
            "tail" => Request::Tail(n()?),
            "range" => {
                let start = args.required_integer("start", 0, "for mode range")?;
                let end = args.required_integer("end", 0, "for mode range")?;
                if end < start {
                    return Err(invalid(format!("`end` ({end}) is before `start` ({start}); end is exclusive")));
                }
                Request::Range { start, end }
            }
            "lines" => {
                let start = args.required_integer("start_line", 1, "for mode lines")?;
                let end = args.required_integer("end_line", 1, "for mode lines")?;
                if end < start {
                    return Err(invalid(format!(
                        "`end_line` ({end}) is before `start_line` ({start}); both are inclusive"
                    )));
                }
                Request::Lines { start, end }
            }
            _ => {
                let pattern = args.non_empty_string("pattern")?;
                let max_matches = args.integer("max_matches", 1)?.unwrap_or(config.grep_max_matches);
                let context = args.integer("context", 0)?.unwrap_or(0);
                if context > MAX_CONTEXT {
                    return Err(invalid(format!("`context` must be at most {MAX_CONTEXT}, got {context}")));
                }
                let grep = Grep::new(pattern, max_matches, context)
                    .map_err(|e| invalid(format!("`pattern` is not a valid regular expression: {e}")))?;
                Request::Grep(grep)
            }
        };
        Ok((mode, request))
    }
}

/// A `scratchpad_read` result. Fields that do not apply to the mode are left out.
#[derive(Debug, Default, Serialize)]
struct Output {
    scratchpad_id: String,
    mode: &'static str,
    kind: &'static str,
    size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    size_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    match_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<Vec<Match>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_base64: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<String>,
}

impl Output {
    fn note(&mut self, text: String) {
        self.note = Some(match self.note.take() {
            Some(before) => format!("{before} {text}"),
            None => text,
        });
    }
}

/// Runs `scratchpad_read` in `turn` with the model's `arguments`.
pub fn read<B: Blobs + ?Sized>(
    blobs: &B,
    config: &Config,
    turn: &Turn,
    arguments: &str,
) -> Result<ToolOutput, ToolError> {
    let args = Args::parse(arguments)?;
    let id = args.non_empty_string("scratchpad_id")?;
    let (mode, request) = Request::parse(&args, config)?;
    let entry = find(blobs, turn, id)?;
    let reader = EntryReader::new(blobs, &entry);
    let text = entry.kind == ContentKind::Text;
    let mut out = Output {
        scratchpad_id: entry.id.clone(),
        mode,
        kind: kind_name(entry.kind),
        size_bytes: entry.size_bytes,
        size_chars: text.then_some(entry.size_chars),
        ..Output::default()
    };
    match request {
        Request::Full => {
            if entry.size_bytes > config.full_warn_bytes {
                out.warning = Some(format!(
                    "this entry is {} bytes: reading it whole puts all of it in the context; prefer head, \
                     tail, range, lines or grep",
                    entry.size_bytes
                ));
            }
            slice(&reader, &entry, config, &mut out, 0, u64::MAX)?;
        }
        Request::Head(n) => {
            let length = length(&entry);
            note_short(&mut out, n, length, unit(&entry));
            slice(&reader, &entry, config, &mut out, 0, n.min(length))?;
        }
        Request::Tail(n) => {
            let length = length(&entry);
            note_short(&mut out, n, length, unit(&entry));
            slice(&reader, &entry, config, &mut out, length - n.min(length), length)?;
        }
        Request::Range { start, end } => {
            let length = length(&entry);
            if start > length || (start == length && end > start) {
                out.note(format!(
                    "`start` ({start}) is at or past the end of the entry ({length} {}); nothing returned.",
                    unit(&entry)
                ));
            } else if end > length {
                out.note(format!(
                    "`end` ({end}) is past the end of the entry; clamped to its length, {length} {}.",
                    unit(&entry)
                ));
            }
            slice(&reader, &entry, config, &mut out, start.min(length), end.min(length))?;
        }
        Request::Lines { start, end } => {
            text_only(&entry, mode)?;
            lines(&reader, config, &mut out, start, end)?;
        }
        Request::Grep(grep) => {
            text_only(&entry, mode)?;
            let found = grep.run(&reader, config.max_read_bytes)?;
            out.pattern = Some(grep.pattern().to_owned());
            out.match_count = Some(found.matches.len());
            out.matches = Some(found.matches);
            out.total_lines = found.total_lines;
            if let Some(line) = found.long_line {
                out.note(format!(
                    "line {line} is longer than {} bytes: only its start was searched; read it with mode range.",
                    crate::grep::LINE_CAP
                ));
            }
            if let Some(stopped) = found.stopped {
                out.truncated = true;
                out.note(format!("{stopped}."));
            }
        }
    }
    Ok(ToolOutput { content: serde_json::to_string(&out).expect("a read result serialises") })
}

/// The entry `id` if it belongs to `turn` and has not expired.
pub fn find<B: Blobs + ?Sized>(blobs: &B, turn: &Turn, id: &str) -> Result<Entry, ToolError> {
    match blobs.stat(id) {
        Some(entry) if entry.turn_id == turn.turn_id => {
            if entry.expired {
                let ttl = entry.expires_at_ms.saturating_sub(entry.created_at_ms) / 1000;
                return Err(ToolError::NotFound(format!(
                    "scratchpad entry `{id}` expired (entries are kept {ttl} seconds); run the tool that \
                     produced it again"
                )));
            }
            Ok(entry)
        }
        _ => Err(ToolError::NotFound(not_found_message(id))),
    }
}

/// The entry's length in its reading unit: characters for text, bytes for binary.
fn length(entry: &Entry) -> u64 {
    match entry.kind {
        ContentKind::Text => entry.size_chars,
        ContentKind::Binary => entry.size_bytes,
    }
}

fn unit(entry: &Entry) -> &'static str {
    match entry.kind {
        ContentKind::Text => "characters",
        ContentKind::Binary => "bytes",
    }
}

fn note_short(out: &mut Output, n: u64, length: u64, unit: &str) {
    if n > length {
        out.note(format!("`n` ({n}) is more than the entry's {length} {unit}; returned all of it."));
    }
}

fn text_only(entry: &Entry, mode: &str) -> Result<(), ToolError> {
    if entry.kind == ContentKind::Binary {
        return Err(invalid(format!(
            "mode {mode} reads text entries; entry `{}` is binary: use head, tail, range or full (bytes, \
             returned as content_base64)",
            entry.id
        )));
    }
    Ok(())
}

/// Characters (text) or bytes (binary) `start..end`, clamped to the entry and cut at the read
/// limit, into `out`.
fn slice<B: Blobs + ?Sized>(
    reader: &EntryReader<'_, B>,
    entry: &Entry,
    config: &Config,
    out: &mut Output,
    start: u64,
    end: u64,
) -> Result<(), ToolError> {
    let end = end.min(length(entry));
    let real_end = match entry.kind {
        ContentKind::Text => {
            let (content, real_end) = reader.text(start, end, config.max_read_bytes)?;
            out.content = Some(content);
            real_end
        }
        ContentKind::Binary => {
            let bytes = reader.bytes(start, end.min(start.saturating_add(config.max_read_bytes)))?;
            let real_end = start + bytes.len() as u64;
            out.content_base64 = Some(base64::engine::general_purpose::STANDARD.encode(&bytes));
            real_end
        }
    };
    out.start = Some(start);
    out.end = Some(real_end);
    if real_end < end {
        cut(out, config, real_end);
    }
    Ok(())
}

fn cut(out: &mut Output, config: &Config, at: u64) {
    out.truncated = true;
    out.note(format!(
        "The result was cut at the read limit of {} bytes; continue with mode range from start {at}.",
        config.max_read_bytes
    ));
}

/// Lines `start..=end` (1-based) into `out`: their exact text, each with its `\n`.
fn lines<B: Blobs + ?Sized>(
    reader: &EntryReader<'_, B>,
    config: &Config,
    out: &mut Output,
    start: u64,
    end: u64,
) -> Result<(), ToolError> {
    let span = reader.lines(start, end)?;
    out.start_line = Some(start);
    out.total_lines = span.total_lines;
    let Some(from) = span.start else {
        let total = span.total_lines.unwrap_or_default();
        out.content = Some(String::new());
        out.note(format!(
            "`start_line` ({start}) is past the last line: the entry has {total} lines; nothing returned."
        ));
        return Ok(());
    };
    let last = span.total_lines.map_or(end, |total| end.min(total));
    if last < end {
        out.note(format!("`end_line` ({end}) is past the last line; clamped to {last}."));
    }
    out.end_line = Some(last);
    let (content, real_end) = reader.text_between(from, span.end, config.max_read_bytes)?;
    out.content = Some(content);
    out.start = Some(from.char);
    out.end = Some(real_end);
    if real_end < span.end.char {
        cut(out, config, real_end);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
