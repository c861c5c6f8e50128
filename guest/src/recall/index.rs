//! What gets indexed: what the agent saved, as documents of the project's recall index.
//!
//! Only with read-write access. A tool call that changes the scratchpad (any of its tools, for
//! the model or the host's sandbox API) puts, after it succeeded:
//!
//! - the plan, when it changed and is not empty: kind `plan`, title `Plan`, the whole text.
//!   Every version is its own document, so older versions stay searchable; the newest one
//!   supersedes the others in the first turn's block.
//! - each note the call added: kind `note`. A note is one line of the notes with a letter or
//!   digit in it (lines are what `append_notes` and the notepad's `append` add, so an append
//!   indexes what it added and nothing twice). A Markdown heading line (`#` marks then a
//!   space, `## Findings`) is not a note: it is the title of the notes under it (`Note`
//!   before any heading).
//! - each ref the call added: kind `ref`, title `Ref`.
//!
//! A document's id is its kind and the 64-bit FNV-1a hash (hex) of its text with whitespace
//! runs as one space (`plan:9f0c…`, `note:…`, `ref:…`): the same text is one document per
//! project, whichever session saved it, and saving it again only moves its date. Removing a
//! note, a ref or a plan from the scratchpad does not remove it from the index: it was saved
//! once, and a later session may still want it (`scratchpad recall forget` is the operator's).
//!
//! At the start of each turn, the session's latest checkpoint (the context-pressure policy's
//! rolling summary, written by the host at a turn's end) is put once: kind `checkpoint`, id
//! `checkpoint:<its id>`, title `Checkpoint`, the summary then `Decisions: …` and
//! `Open questions: …`, dated when the checkpoint was stored. The id of the last one put is
//! kept in storage (`meta/recall/checkpoint`).
//!
//! An index error (a quota, a field out of bounds) stops this call's indexing and becomes a
//! warning for the log; the tool call or hook goes on as if recall were not there.

use scratchpad_plugin_sdk::{Access, Checkpoint, Document, Storage, Tokenizer};

use crate::plugin::Scratchpad;
use crate::state::{self, RECALL_CHECKPOINT, Spaces};

/// Kind of a plan version.
pub const PLAN: &str = "plan";
/// Kind of a note.
pub const NOTE: &str = "note";
/// Kind of a ref.
pub const REF: &str = "ref";
/// Kind of a checkpoint.
pub const CHECKPOINT: &str = "checkpoint";
/// Every kind recall indexes, in the order its tools name them.
pub const KINDS: &[&str] = &[PLAN, NOTE, REF, CHECKPOINT];

/// Most documents put in one call (the host's limit of index writes per call).
pub const MAX_PUTS_PER_CALL: usize = 64;

/// The 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The id of a document of `kind` holding `text`: `<kind>:<16 hex digits>`, the hash of the
/// text with whitespace runs as one space (so re-wrapping a text keeps its id).
pub fn document_id(kind: &str, text: &str) -> String {
    let normalized = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{kind}:{:016x}", fnv1a64(normalized.as_bytes()))
}

/// A note: one line of the notes, with the heading it sits under as its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note<'s> {
    /// The heading's text, or `Note` before any heading.
    pub title: &'s str,
    /// The line, trimmed.
    pub text: &'s str,
}

/// The notes in `notes`, in order (see the module's docs).
pub fn notes(notes: &str) -> Vec<Note<'_>> {
    let mut title = "Note";
    let mut found = Vec::new();
    for line in notes.lines().map(str::trim) {
        let heading = line.trim_start_matches('#');
        if line.starts_with('#') && (heading.is_empty() || heading.starts_with(char::is_whitespace)) {
            title = if heading.trim().is_empty() { "Note" } else { heading.trim() };
        } else if line.chars().any(char::is_alphanumeric) {
            found.push(Note { title, text: line });
        }
    }
    found
}

/// The text a checkpoint is indexed with: the summary, then its decisions and open questions.
pub fn checkpoint_text(checkpoint: &Checkpoint) -> String {
    let summary = &checkpoint.summary;
    let mut text = summary.summary.trim().to_string();
    for (label, items) in [("Decisions", &summary.key_decisions), ("Open questions", &summary.open_questions)] {
        if !items.is_empty() {
            text.push_str(&format!("\n{label}: {}", items.join("; ")));
        }
    }
    text
}

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    /// Whether this call indexes: recall is on and the session may write its project's index.
    pub(crate) fn indexing(&self) -> bool {
        matches!(self.recall_access(), Access::ReadWrite)
    }

    /// After a successful tool call: puts what it added to the scratchpad since `before`.
    pub(crate) fn index_changes(&mut self, before: &Spaces) {
        let after = self.spaces();
        let mut documents = Vec::new();
        if after.plan != before.plan && !after.plan.trim().is_empty() {
            documents.push((PLAN, "Plan".to_string(), after.plan.clone()));
        }
        let known: Vec<String> = notes(&before.notes).iter().map(|n| document_id(NOTE, n.text)).collect();
        for note in notes(&after.notes) {
            if !known.contains(&document_id(NOTE, note.text)) {
                documents.push((NOTE, note.title.to_string(), note.text.to_string()));
            }
        }
        for added in after.refs.iter().filter(|r| !before.refs.contains(r)) {
            documents.push((REF, "Ref".to_string(), added.clone()));
        }
        let at_ms = self.now_ms();
        for (kind, title, text) in documents.into_iter().take(MAX_PUTS_PER_CALL) {
            let id = document_id(kind, &text);
            if !self.put(Document { id, kind: kind.into(), title, text, at_ms }) {
                break;
            }
        }
    }

    /// At a turn's start: puts the session's latest checkpoint, once.
    pub(crate) fn index_checkpoint(&mut self) {
        if !self.indexing() {
            return;
        }
        let Some(recall) = &self.recall else { return };
        // A host without a summarizer never writes a checkpoint: no database trip to look.
        if !recall.checkpoints.available() {
            return;
        }
        let Some(checkpoint) = recall.checkpoints.latest() else { return };
        if state::read_text(self.storage, RECALL_CHECKPOINT) == checkpoint.id {
            return;
        }
        let document = Document {
            id: format!("{CHECKPOINT}:{}", checkpoint.id),
            kind: CHECKPOINT.into(),
            title: "Checkpoint".into(),
            text: checkpoint_text(&checkpoint),
            at_ms: checkpoint.created_at_ms,
        };
        // Remembered only once kept, so a refused put is tried again next turn.
        if self.put(document) {
            let _ = self.storage.set(RECALL_CHECKPOINT, checkpoint.id.as_bytes());
        }
    }

    /// Puts `document`; `false` (and a warning) when the index refused it.
    fn put(&mut self, document: Document) -> bool {
        let Some(recall) = &mut self.recall else { return false };
        let id = document.id.clone();
        match recall.index.put(document) {
            Ok(()) => true,
            Err(error) => {
                self.warnings
                    .push(format!("recall: indexing `{id}` failed, nothing more is indexed in this call: {error:?}"));
                false
            }
        }
    }

    fn now_ms(&self) -> u64 {
        self.recall.as_ref().map_or(0, |recall| recall.clock.now_ms())
    }
}

#[cfg(test)]
mod tests;
