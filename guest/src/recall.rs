//! Recall: what earlier sessions of the same project left, found again.
//!
//! The host keeps a full-text index per plugin and project (`wit/index.wit`): it scopes every
//! call to the current session's project, ranks matches (BM25) and removes `<private>` spans
//! and secrets before anything is kept. This component feeds it and reads it back:
//!
//! - `recall/index.rs`: what gets indexed — every plan version, each note and ref the agent
//!   saved, and the session's rolling checkpoints (only with read-write access).
//! - `recall/inject.rs`: the first turn's block (the latest plan of an earlier session,
//!   offered and never adopted, then the documents matching the first message) and the
//!   one-line reminder after a compaction.
//! - `recall/tools.rs`: `recall_search` and `recall_read`.
//! - `recall/date.rs`: Unix milliseconds to and from `YYYY-MM-DD` (UTC).
//!
//! Nothing here fails a hook or a tool call of the scratchpad: an index error while indexing
//! is a warning for the host's log ([`Scratchpad::take_warnings`]). Recall is on when the
//! configuration enables it (`recall.enabled`, the default) *and* the embedder gave the
//! scratchpad an index ([`Scratchpad::with_recall`]); the host then decides what the session
//! may do ([`Access`]): nothing (no project), read, or read and write.

use scratchpad_plugin_sdk::{Access, Checkpoints, Index, Storage, Tokenizer};

use crate::plugin::Scratchpad;

mod date;
pub mod index;
pub mod inject;
pub mod tools;

pub use date::{date, parse_date};
pub use tools::{RECALL_READ, RECALL_SEARCH};

/// Where recall reads the time, for each document's `at-ms`.
pub trait Clock {
    /// Now, in Unix milliseconds.
    fn now_ms(&self) -> u64;
}

/// The system clock (`std::time::SystemTime`, which WASI gives the component).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
    }
}

/// The seams recall works through: the project's index, the session's checkpoints, a clock.
pub(crate) struct Recall<'a> {
    pub(crate) index: &'a mut dyn Index,
    pub(crate) checkpoints: &'a dyn Checkpoints,
    pub(crate) clock: &'a dyn Clock,
}

impl<'a, S: Storage, T: Tokenizer> Scratchpad<'a, S, T> {
    /// The scratchpad with recall: `index` is the project's index, `checkpoints` gives the
    /// session's latest checkpoint, `clock` stamps what is indexed. Without this (as in the
    /// benchmarks), recall is off whatever the configuration says.
    pub fn with_recall(
        mut self,
        index: &'a mut dyn Index,
        checkpoints: &'a dyn Checkpoints,
        clock: &'a dyn Clock,
    ) -> Self {
        self.recall = Some(Recall { index, checkpoints, clock });
        self
    }

    /// What recall may do in this session: [`Access::None`] when recall is disabled or was not
    /// given an index, else what the host says.
    pub fn recall_access(&self) -> Access {
        match &self.recall {
            Some(recall) if self.config.enabled && self.config.recall.enabled => recall.index.access(),
            _ => Access::None,
        }
    }

    /// The warnings of the calls so far (index errors while indexing), for the host's log;
    /// emptied.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// At most `max_bytes` of `text` on one line (runs of whitespace as one space), cut on a char
/// boundary with `…` where it was cut.
pub fn one_line(text: &str, max_bytes: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.len() <= max_bytes {
        return flat;
    }
    let mut end = max_bytes;
    while !flat.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", flat[..end].trim_end())
}

/// One document as a line of the recall block and of `recall_search`:
/// `- [note · <session> · <YYYY-MM-DD>] <snippet> (<id>)`.
pub fn line(kind: &str, session: &str, at_ms: u64, snippet: &str, id: &str) -> String {
    format!("- [{kind} · {session} · {}] {} ({id})", date(at_ms), one_line(snippet, SNIPPET_BYTES))
}

/// Longest snippet in a line, in bytes (the host's snippets are about 240 bytes).
pub const SNIPPET_BYTES: usize = 240;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_whitespace_and_cuts_on_a_char_boundary() {
        assert_eq!(one_line("a\n  b\tc ", 10), "a b c");
        assert_eq!(one_line("héllo wörld", 2), "h…");
        assert_eq!(one_line("héllo wörld", 6), "héllo…");
    }

    #[test]
    fn a_line_names_kind_session_date_and_id() {
        assert_eq!(
            line("note", "s0", 86_400_000, "Root cause:\n tz", "note:00ff"),
            "- [note · s0 · 1970-01-02] Root cause: tz (note:00ff)"
        );
    }
}
