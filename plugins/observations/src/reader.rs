//! Reading a stored entry by characters, bytes or lines without loading it: every read goes
//! through [`Blobs::read`] in chunks, and scans keep only the chunk at hand.
//!
//! Text entries are character-indexed. When the host says an entry is pure ASCII, character
//! offsets are byte offsets; otherwise a character offset is found by counting characters
//! from whichever end of the entry is nearer.

use std::ops::ControlFlow;

use scratchpad_plugin_sdk::{BlobError, ContentKind, Entry, ToolError};

use crate::store::{Blobs, HOST_READ_CAP};
use crate::text;

/// Bytes fetched per step when scanning an entry: the most the host returns per call, since
/// every call has a fixed cost on the host side (and, with SQLite's incremental blob I/O, a
/// read at a high offset walks the entry's page chain up to it). The guest holds one chunk at
/// a time.
pub const SCAN_CHUNK: u32 = HOST_READ_CAP;

/// A byte and character position in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// Byte offset.
    pub byte: u64,
    /// Character offset (the byte offset for binary and ASCII entries).
    pub char: u64,
}

/// Where lines `start_line..=end_line` lie in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// Start of `start_line`; `None` when the entry has fewer lines.
    pub start: Option<Position>,
    /// End of the last line returned, after its `\n` when it has one.
    pub end: Position,
    /// The entry's number of lines when the scan reached its end (it stops early otherwise).
    pub total_lines: Option<u64>,
}

/// One entry of the blob store, read in chunks.
pub struct EntryReader<'a, B: Blobs + ?Sized> {
    blobs: &'a B,
    entry: &'a Entry,
    chunk: u32,
}

impl<'a, B: Blobs + ?Sized> EntryReader<'a, B> {
    /// A reader of `entry`, fetching [`SCAN_CHUNK`] bytes per step.
    pub fn new(blobs: &'a B, entry: &'a Entry) -> Self {
        EntryReader { blobs, entry, chunk: SCAN_CHUNK }
    }

    /// The same reader fetching `chunk` bytes per step (tests use tiny chunks to put every
    /// boundary inside a character or a line).
    #[cfg(test)]
    pub fn with_chunk(self, chunk: u32) -> Self {
        EntryReader { chunk: chunk.clamp(1, HOST_READ_CAP), ..self }
    }

    /// Whether character offsets are byte offsets in this entry.
    fn bytewise(&self) -> bool {
        self.entry.kind == ContentKind::Binary || self.entry.ascii
    }

    fn fetch(&self, offset: u64, len: u64) -> Result<Vec<u8>, ToolError> {
        let len = len.min(u64::from(self.chunk)) as u32;
        self.blobs.read(&self.entry.id, offset, len).map_err(|e| blob_error(&self.entry.id, e))
    }

    /// Bytes `start..end` of the entry (fewer if the entry is shorter).
    pub fn bytes(&self, start: u64, end: u64) -> Result<Vec<u8>, ToolError> {
        let mut out = Vec::with_capacity(end.saturating_sub(start) as usize);
        let mut at = start;
        while at < end {
            let piece = self.fetch(at, end - at)?;
            if piece.is_empty() {
                break;
            }
            at += piece.len() as u64;
            out.extend_from_slice(&piece);
        }
        Ok(out)
    }

    /// Calls `visit(offset, chunk)` on consecutive chunks from byte `from` until it breaks or
    /// the entry ends. Returns whether `visit` broke.
    fn scan_forward(&self, from: u64, mut visit: impl FnMut(u64, &[u8]) -> ControlFlow<()>) -> Result<bool, ToolError> {
        let mut at = from;
        while at < self.entry.size_bytes {
            let chunk = self.fetch(at, self.entry.size_bytes - at)?;
            if chunk.is_empty() {
                break;
            }
            if visit(at, &chunk).is_break() {
                return Ok(true);
            }
            at += chunk.len() as u64;
        }
        Ok(false)
    }

    /// Calls `visit(offset, chunk)` on consecutive chunks from the end towards byte 0 until it
    /// breaks.
    fn scan_backward(&self, mut visit: impl FnMut(u64, &[u8]) -> ControlFlow<()>) -> Result<(), ToolError> {
        let mut end = self.entry.size_bytes;
        while end > 0 {
            let start = end.saturating_sub(u64::from(self.chunk));
            let chunk = self.fetch(start, end - start)?;
            if chunk.is_empty() || visit(start, &chunk).is_break() {
                break;
            }
            end = start;
        }
        Ok(())
    }

    /// The byte offset of character `c` (clamped to the entry's length).
    pub fn char_to_byte(&self, c: u64) -> Result<u64, ToolError> {
        let entry = self.entry;
        if self.bytewise() {
            return Ok(c.min(entry.size_bytes));
        }
        if c == 0 {
            return Ok(0);
        }
        if c >= entry.size_chars {
            return Ok(entry.size_bytes);
        }
        let mut found = None;
        if c <= entry.size_chars / 2 {
            let mut seen = 0;
            self.scan_forward(0, |offset, chunk| {
                let here = text::count_chars(chunk);
                if seen + here <= c {
                    seen += here;
                    return ControlFlow::Continue(());
                }
                for (i, b) in chunk.iter().enumerate() {
                    if text::is_char_start(*b) {
                        if seen == c {
                            found = Some(offset + i as u64);
                            return ControlFlow::Break(());
                        }
                        seen += 1;
                    }
                }
                ControlFlow::Continue(())
            })?;
        } else {
            // Character `c` is the `size_chars - c`-th character start counted from the end.
            let wanted = entry.size_chars - c;
            let mut seen = 0;
            self.scan_backward(|offset, chunk| {
                let here = text::count_chars(chunk);
                if seen + here < wanted {
                    seen += here;
                    return ControlFlow::Continue(());
                }
                for (i, b) in chunk.iter().enumerate().rev() {
                    if text::is_char_start(*b) {
                        seen += 1;
                        if seen == wanted {
                            found = Some(offset + i as u64);
                            return ControlFlow::Break(());
                        }
                    }
                }
                ControlFlow::Continue(())
            })?;
        }
        found.ok_or_else(|| inconsistent(&entry.id))
    }

    /// Characters `start..end` as text, at most `max_bytes` bytes of it (cut on a character
    /// boundary). Returns the text and the character offset where it really ends.
    pub fn text(&self, start: u64, end: u64, max_bytes: u64) -> Result<(String, u64), ToolError> {
        let from = Position { byte: self.char_to_byte(start)?, char: start };
        let to = Position { byte: self.char_to_byte(end)?, char: end };
        self.text_between(from, to, max_bytes)
    }

    /// The text between two positions, at most `max_bytes` bytes of it (cut on a character
    /// boundary). Returns the text and the character offset where it really ends.
    pub fn text_between(&self, from: Position, to: Position, max_bytes: u64) -> Result<(String, u64), ToolError> {
        let bytes = self.bytes(from.byte, to.byte.min(from.byte.saturating_add(max_bytes)))?;
        let whole = text::end_boundary(&bytes);
        let end =
            if from.byte + whole as u64 == to.byte { to.char } else { from.char + text::count_chars(&bytes[..whole]) };
        Ok((text::decode(&bytes[..whole]), end))
    }

    /// Where lines `start_line..=end_line` (1-based) lie. Lines end at `\n`; a final `\n`
    /// does not start another line. The scan stops after `end_line`.
    pub fn lines(&self, start_line: u64, end_line: u64) -> Result<LineSpan, ToolError> {
        let bytewise = self.bytewise();
        let mut newlines = 0u64;
        let mut chars = 0u64;
        let mut start = (start_line == 1).then_some(Position::default());
        let mut end = None;
        let mut last_byte = None;
        self.scan_forward(0, |offset, chunk| {
            last_byte = chunk.last().copied();
            let mut counted = 0;
            for i in memchr::memchr_iter(b'\n', chunk) {
                if !bytewise {
                    chars += text::count_chars(&chunk[counted..=i]);
                    counted = i + 1;
                }
                newlines += 1;
                let after = offset + i as u64 + 1;
                let here = Position { byte: after, char: if bytewise { after } else { chars } };
                if newlines == start_line - 1 {
                    start = Some(here);
                }
                if newlines == end_line {
                    end = Some(here);
                    return ControlFlow::Break(());
                }
            }
            if !bytewise {
                chars += text::count_chars(&chunk[counted..]);
            }
            ControlFlow::Continue(())
        })?;
        if let Some(end) = end {
            return Ok(LineSpan { start, end, total_lines: None });
        }
        let total = newlines + u64::from(last_byte.is_some_and(|b| b != b'\n'));
        let end = Position { byte: self.entry.size_bytes, char: self.entry.size_chars };
        let start = start.filter(|_| start_line <= total);
        Ok(LineSpan { start, end, total_lines: Some(total) })
    }

    /// Scans the entry's lines from the first, handing `visit` whole blocks of complete lines
    /// where a chunk holds them (so a caller can test a block at once) and single lines where
    /// a line spans chunks, until `visit` breaks. Lines end at `\n`; a final `\n` does not
    /// start another line.
    pub fn scan_lines(
        &self,
        line_cap: usize,
        mut visit: impl FnMut(Lines<'_>) -> ControlFlow<()>,
    ) -> Result<(), ToolError> {
        let mut number = 1u64;
        let mut carry: Vec<u8> = Vec::new();
        let mut cut = false;
        let keep = |carry: &mut Vec<u8>, cut: &mut bool, piece: &[u8]| {
            let room = line_cap.saturating_sub(carry.len());
            *cut |= piece.len() > room;
            carry.extend_from_slice(&piece[..piece.len().min(room)]);
        };
        let broke = self.scan_forward(0, |_, chunk| {
            let (Some(first), Some(last)) = (memchr::memchr(b'\n', chunk), memchr::memrchr(b'\n', chunk)) else {
                keep(&mut carry, &mut cut, chunk);
                return ControlFlow::Continue(());
            };
            let mut block_start = 0;
            if !carry.is_empty() || cut {
                // The line in progress ends at this chunk's first newline.
                keep(&mut carry, &mut cut, &chunk[..first]);
                let flow = visit(Lines::Line { number, bytes: &carry, cut });
                carry.clear();
                cut = false;
                number += 1;
                flow?;
                block_start = first + 1;
            }
            if block_start <= last {
                let bytes = &chunk[block_start..=last];
                visit(Lines::Block { first: number, bytes, line_cap })?;
                number += memchr::memchr_iter(b'\n', bytes).count() as u64;
            }
            keep(&mut carry, &mut cut, &chunk[last + 1..]);
            ControlFlow::Continue(())
        })?;
        if !broke && (!carry.is_empty() || cut) {
            let _ = visit(Lines::Line { number, bytes: &carry, cut });
        }
        Ok(())
    }

    /// Calls `visit(line_number, line, cut)` on every line from the first, without its `\n`,
    /// keeping at most `line_cap` bytes of each (`cut` says the line was longer), until
    /// `visit` breaks.
    pub fn for_each_line(
        &self,
        line_cap: usize,
        mut visit: impl FnMut(u64, &[u8], bool) -> ControlFlow<()>,
    ) -> Result<(), ToolError> {
        self.scan_lines(line_cap, |lines| lines.each(&mut visit))
    }
}

/// What a line scan hands its visitor.
#[derive(Debug, Clone, Copy)]
pub enum Lines<'c> {
    /// Complete lines numbered from `first`, each with its `\n` (so `bytes` ends with one).
    Block {
        /// Number of the block's first line.
        first: u64,
        /// The lines.
        bytes: &'c [u8],
        /// The scan's line cap, applied by [`Lines::each`].
        line_cap: usize,
    },
    /// One line without its `\n`, at most the scan's line cap of it.
    Line {
        /// Its number.
        number: u64,
        /// Its bytes.
        bytes: &'c [u8],
        /// Whether the line was longer than `bytes`.
        cut: bool,
    },
}

impl<'c> Lines<'c> {
    /// Calls `visit(number, line, cut)` on each line, without `\n`, capped, until it breaks.
    pub fn each(self, mut visit: impl FnMut(u64, &'c [u8], bool) -> ControlFlow<()>) -> ControlFlow<()> {
        match self {
            Lines::Line { number, bytes, cut } => visit(number, bytes, cut),
            Lines::Block { first, bytes, line_cap } => {
                let mut from = 0;
                for (n, end) in memchr::memchr_iter(b'\n', bytes).enumerate() {
                    let line = &bytes[from..end];
                    from = end + 1;
                    visit(first + n as u64, &line[..line.len().min(line_cap)], line.len() > line_cap)?;
                }
                ControlFlow::Continue(())
            }
        }
    }
}

/// The message of an id that does not exist in this turn. Unknown ids, ids of other sessions
/// and ids of other turns all get exactly this message, so nothing tells them apart.
pub fn not_found_message(id: &str) -> String {
    format!("no scratchpad entry `{id}` in this turn; use a scratchpad_id from an observation of the current turn")
}

fn blob_error(id: &str, error: BlobError) -> ToolError {
    match error {
        BlobError::NotFound(_) => ToolError::NotFound(not_found_message(id)),
        BlobError::Invalid(message) => ToolError::Failed(format!("reading scratchpad entry `{id}` failed: {message}")),
        // Reads never store, so the quota cannot be the reason; say what the host said.
        BlobError::QuotaExceeded(q) => ToolError::Failed(format!(
            "reading scratchpad entry `{id}` failed: the host reported its quota ({} of {} bytes)",
            q.used, q.limit
        )),
    }
}

fn inconsistent(id: &str) -> ToolError {
    ToolError::Failed(format!("scratchpad entry `{id}` is shorter than its recorded size"))
}

#[cfg(test)]
mod tests;
