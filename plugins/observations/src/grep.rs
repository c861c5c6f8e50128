//! `scratchpad_read` mode `grep`: the lines of a text entry that match a regular expression,
//! with their 1-based line numbers and optional context lines, found by streaming the entry.
//!
//! Lines end at `\n`; a trailing `\r` is not part of the line. The pattern is matched against
//! each line on its own (Rust `regex` syntax; `(?i)` makes it case-insensitive). The scan stops
//! once `max_matches` matches and their context are collected, or when the result reaches the
//! read limit.
//!
//! Speed: a chunk's complete lines are first tested at once with the same pattern in
//! multi-line mode, where `^` and `$` match at line ends exactly as they do on a single line;
//! only a block that matches is searched line by line. Patterns where the two could differ
//! (`\A`, `\z`, or a flag group that turns a flag off) are searched line by line throughout.

use std::collections::VecDeque;
use std::ops::ControlFlow;

use regex::bytes::{Regex, RegexBuilder};
use scratchpad_plugin_sdk::ToolError;
use serde::Serialize;

use crate::reader::{EntryReader, Lines};
use crate::text;

/// Most context lines before and after a match.
pub const MAX_CONTEXT: u64 = 50;

/// Lines longer than this many bytes are searched and shown only up to here.
pub const LINE_CAP: usize = 1 << 20;

/// Most characters of a line shown in a result (longer lines are shown cut, marked `cut`).
pub const SHOWN_CHARS: u64 = 1000;

/// What a grep asks for.
#[derive(Debug)]
pub struct Grep {
    /// The pattern, matched against one line.
    regex: Regex,
    /// The pattern in multi-line mode, to test a block of lines at once; `None` when that test
    /// could miss a line's match.
    block: Option<Regex>,
    /// Most matches returned.
    pub max_matches: u64,
    /// Context lines before and after each match.
    pub context: u64,
}

impl Grep {
    /// A grep for `pattern`; `Err` is the regex crate's explanation of a bad pattern.
    pub fn new(pattern: &str, max_matches: u64, context: u64) -> Result<Grep, String> {
        let regex = RegexBuilder::new(pattern).build().map_err(|e| e.to_string())?;
        let block = if block_safe(pattern) {
            RegexBuilder::new(pattern).multi_line(true).crlf(true).build().ok()
        } else {
            None
        };
        Ok(Grep { regex, block, max_matches, context })
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }
}

/// Whether a match of `pattern` on a line always shows in a multi-line test of a block that
/// holds the line: not when it anchors to the haystack's ends (`\A`, `\z`) or may turn off
/// multi-line or CRLF mode (`(?-m)`, `(?-R)`; any flag group with `-` counts, to be safe).
fn block_safe(pattern: &str) -> bool {
    if pattern.contains("\\A") || pattern.contains("\\z") {
        return false;
    }
    !pattern
        .match_indices("(?")
        .any(|(i, _)| pattern[i + 2..].chars().take_while(|c| !matches!(c, ':' | ')')).any(|c| c == '-'))
}

/// One line of a result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub line: u64,
    /// The line's text (without `\n`), at most [`SHOWN_CHARS`] characters.
    pub text: String,
    /// True when the line is longer than what `text` shows.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// A matching line with its context.
#[derive(Debug, Serialize)]
pub struct Match {
    /// The matching line.
    #[serde(flatten)]
    pub line: Line,
    /// Up to `context` lines before it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Line>,
    /// Up to `context` lines after it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Line>,
}

/// The outcome of a grep.
#[derive(Debug)]
pub struct Found {
    /// The matches, in order.
    pub matches: Vec<Match>,
    /// The entry's number of lines, when the whole entry was scanned.
    pub total_lines: Option<u64>,
    /// Why the scan stopped early, when it did (for the result's note).
    pub stopped: Option<String>,
    /// The first line longer than [`LINE_CAP`], if any (only its start was searched).
    pub long_line: Option<u64>,
}

impl Grep {
    /// Runs the grep over `reader`'s entry; the result's lines total at most `max_bytes`.
    pub fn run<B: crate::store::Blobs + ?Sized>(
        &self,
        reader: &EntryReader<'_, B>,
        max_bytes: u64,
    ) -> Result<Found, ToolError> {
        let mut scan = Scan {
            grep: self,
            max_bytes,
            matches: Vec::new(),
            before: VecDeque::with_capacity(self.context as usize),
            used: 0,
            last: 0,
            stopped: None,
            long_line: None,
        };
        reader.scan_lines(LINE_CAP, |lines| match lines {
            Lines::Block { first, bytes, .. } if scan.can_skip(bytes) => scan.skip(first, lines),
            lines => lines.each(|number, bytes, cut| scan.line(number, bytes, cut)),
        })?;
        let total_lines = scan.stopped.is_none().then_some(scan.last);
        Ok(Found { matches: scan.matches, total_lines, stopped: scan.stopped, long_line: scan.long_line })
    }
}

/// The state of one grep's scan.
struct Scan<'g> {
    grep: &'g Grep,
    max_bytes: u64,
    matches: Vec<Match>,
    /// The last `context` lines seen.
    before: VecDeque<Line>,
    /// Bytes of line text in the result so far.
    used: u64,
    /// Number of the last line seen.
    last: u64,
    stopped: Option<String>,
    long_line: Option<u64>,
}

impl Scan<'_> {
    fn collecting(&self) -> bool {
        (self.matches.len() as u64) < self.grep.max_matches
    }

    /// Matches still waiting for context after them: always the latest ones.
    fn waiting(&mut self) -> impl Iterator<Item = &mut Match> {
        let context = self.grep.context as usize;
        self.matches.iter_mut().rev().take_while(move |m| m.after.len() < context)
    }

    /// Context lines the earliest waiting match still needs.
    fn after_wanted(&self) -> u64 {
        let context = self.grep.context as usize;
        let waiting = self.matches.iter().rev().take_while(|m| m.after.len() < context);
        waiting.last().map_or(0, |m| (context - m.after.len()) as u64)
    }

    /// Whether no line of `block` can match (or no match is wanted any more).
    fn can_skip(&self, block: &[u8]) -> bool {
        !self.collecting() || self.grep.block.as_ref().is_some_and(|b| !b.is_match(block))
    }

    /// A block where no line is a match: only its first lines (context after the latest match)
    /// and its last lines (context before the next one) are looked at.
    fn skip(&mut self, first: u64, lines: Lines<'_>) -> ControlFlow<()> {
        let Lines::Block { bytes, line_cap, .. } = lines else { unreachable!("only blocks are skipped") };
        let count = memchr::memchr_iter(b'\n', bytes).count() as u64;
        let (head, tail) = (self.after_wanted(), self.grep.context);
        if count <= head + tail {
            return lines.each(|number, line, cut| self.line(number, line, cut));
        }
        if head > 0 {
            let end = memchr::memchr_iter(b'\n', bytes).nth(head as usize - 1).expect("count > head");
            Lines::Block { first, bytes: &bytes[..=end], line_cap }.each(|n, line, cut| self.line(n, line, cut))?;
        }
        self.last = first + count - 1;
        if tail > 0 {
            let body = &bytes[..bytes.len() - 1];
            let start = memchr::memrchr_iter(b'\n', body).nth(tail as usize - 1).expect("count > tail") + 1;
            let block = Lines::Block { first: first + count - tail, bytes: &bytes[start..], line_cap };
            block.each(|n, line, cut| self.line(n, line, cut))?;
        }
        ControlFlow::Continue(())
    }

    /// One line: context for the latest match, maybe a match, then the window before.
    fn line(&mut self, number: u64, bytes: &[u8], cut: bool) -> ControlFlow<()> {
        let context = self.grep.context as usize;
        self.last = number;
        if cut && self.long_line.is_none() {
            self.long_line = Some(number);
        }
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let is_match = self.collecting() && self.grep.regex.is_match(bytes);
        let wanted = self.after_wanted() > 0;
        if !(is_match || wanted || context > 0) {
            return ControlFlow::Continue(());
        }
        let full = text::decode_inner(bytes);
        let shown = Line {
            line: number,
            text: text::first_chars(&full, SHOWN_CHARS).to_owned(),
            cut: cut || full.chars().nth(SHOWN_CHARS as usize).is_some(),
        };
        let size = shown.text.len() as u64;
        if wanted {
            let mut added = 0;
            for m in self.waiting() {
                m.after.push(shown.clone());
                added += size;
            }
            self.used += added;
        }
        if is_match {
            self.used += size + self.before.iter().map(|l| l.text.len() as u64).sum::<u64>();
            let before = self.before.iter().cloned().collect();
            self.matches.push(Match { line: shown.clone(), before, after: Vec::new() });
        }
        if context > 0 {
            if self.before.len() == context {
                self.before.pop_front();
            }
            self.before.push_back(shown);
        }
        if self.used > self.max_bytes {
            self.stopped = Some(format!(
                "stopped at line {number}: the result reached the read limit of {} bytes; grep with a narrower \
                 pattern or fewer context lines, or read on from line {} with mode lines",
                self.max_bytes,
                number + 1
            ));
            return ControlFlow::Break(());
        }
        if !self.collecting() && self.after_wanted() == 0 {
            self.stopped = Some(format!(
                "stopped after {} matches (max_matches) at line {number}; there may be more: grep again with a \
                 larger max_matches, or read on from line {} with mode lines",
                self.grep.max_matches,
                number + 1
            ));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests;
