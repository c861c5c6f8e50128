//! What recall shows without a tool call: the block on a new session's first turn, and one
//! reminder line after a compaction.
//!
//! The block comes on turn 0 only, when recall may read (access read or read-write) and
//! `recall.budgetTokens` is not 0. It goes to the system side — the configured placement when
//! that is a system placement, else `append-system` (where the guidance goes) — and reads:
//!
//! ```text
//! ## What earlier sessions of this project left
//! (Found by recall; search more with recall_search, read one whole with recall_read.)
//! Latest plan, from session <s> on <YYYY-MM-DD> — offered, not adopted; copy it into your plan if it still applies:
//! <plan text>
//! - [note · <session> · <YYYY-MM-DD>] <snippet> (<id>)
//! ```
//!
//! - The latest plan is the newest plan document of another session. It is only offered: the
//!   new session's plan stays empty until the agent saves one. A session that already has a
//!   plan (inherited from its parent) is offered none.
//! - The lines are the documents of other sessions that match the first message (the
//!   host's BM25, best first, ties newest first), at most `recall.maxHits`, then, when fewer
//!   matched (or the message has no searchable words), the newest other documents, without
//!   duplicates. Plan documents are never lines: the latest plan is above, older versions are
//!   superseded by it.
//! - The whole block fits `recall.budgetTokens` (the host's tokenizer). When everything does
//!   not fit, the plan keeps at least half of what the heading leaves and is cut (on a char
//!   boundary, with a pointer to `recall_read` for the whole), and lines that do not fit are
//!   left out. No block when nothing is shown.
//!
//! After a compaction, the next turn starts with [`COMPACTION_HINT`] (once) at the
//! configured placement, beside the scratchpad's own hints.

use scratchpad_plugin_sdk::{Access, Injection, Placement, Query, Storage, Stored, Tokenizer, Turn};

use crate::budget::truncate_tokens;
use crate::inject::is_system;
use crate::plugin::Scratchpad;
use crate::recall::index::PLAN;
use crate::recall::{date, line};
use crate::state::{RECALL_COMPACTION_PENDING, Spaces};

/// First line of the block.
pub const HEADING: &str = "## What earlier sessions of this project left";
/// Second line of the block.
pub const INTRO: &str = "(Found by recall; search more with recall_search, read one whole with recall_read.)";
/// The reminder on the turn after a compaction.
pub const COMPACTION_HINT: &str = "[Hint: The conversation was compacted. recall_search finds what was saved in \
                                   this and earlier sessions of the project: plans, notes, refs and checkpoints.]";

/// Most words of the first message searched for (the host's limit of words per query).
const QUERY_WORDS: usize = 32;
/// Most bytes of the query (the host's limit).
const QUERY_BYTES: usize = 1024;
/// Most documents the fill looks at, per line wanted.
const FILL_FACTOR: u32 = 3;

/// Common English words left out of the first message's query: they match nearly everything
/// and would take the place of words that tell documents apart.
const STOP_WORDS: &[&str] = &[
    "about", "after", "again", "all", "also", "and", "any", "are", "back", "been", "but", "can", "could", "did",
    "does", "for", "from", "get", "had", "has", "have", "her", "his", "how", "into", "its", "just", "let", "like",
    "make", "may", "more", "need", "not", "now", "our", "out", "please", "should", "some", "than", "that", "the",
    "them", "then", "there", "these", "they", "this", "those", "too", "use", "very", "want", "was", "were", "what",
    "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// The words of `message` to search for: its runs of letters and digits, lowercased, each
/// once, without one- and two-letter words (unless they hold a digit) and [`STOP_WORDS`], at
/// most 32 of them and 1 KiB. Empty when nothing is left.
pub fn query_words(message: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut length = 0;
    for word in message.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        let short = word.chars().count() < 3 && !word.chars().any(|c| c.is_ascii_digit());
        if short || STOP_WORDS.contains(&word.as_str()) || words.contains(&word) {
            continue;
        }
        if words.len() == QUERY_WORDS || length + word.len() + 1 > QUERY_BYTES {
            break;
        }
        length += word.len() + 1;
        words.push(word);
    }
    words.join(" ")
}

/// The line that introduces the offered plan.
pub fn plan_intro(plan: &Stored) -> String {
    format!(
        "Latest plan, from session {} on {} — offered, not adopted; copy it into your plan if it still applies:",
        plan.session,
        date(plan.at_ms)
    )
}

/// The block for `plan` and `lines`, within `budget` tokens; `None` when nothing fits.
pub fn block(plan: Option<&Stored>, lines: &[String], budget: u32, tokens: &impl Tokenizer) -> Option<String> {
    let mut text = format!("{HEADING}\n{INTRO}");
    let used = tokens.count(&text);
    if used > budget {
        return None;
    }
    let mut shown = 0;
    if let Some(plan) = plan {
        let available = budget - used;
        let lines_cost: u32 = lines.iter().map(|line| tokens.count(line)).sum();
        let intro = plan_intro(plan);
        let whole = plan.text.trim();
        let plan_cost = tokens.count(&format!("{intro}\n{whole}"));
        let allowance = if plan_cost + lines_cost <= available {
            available
        } else {
            available.saturating_sub(lines_cost).max(available / 2)
        };
        let cut_note = format!("\n… (cut; recall_read {} gives the whole plan)", plan.id);
        let room = allowance.saturating_sub(tokens.count(&format!("{intro}\n{cut_note}")));
        let kept = if plan_cost <= allowance { whole } else { truncate_tokens(whole, room, tokens).trim_end() };
        if !kept.is_empty() {
            let candidate = if kept.len() == whole.len() {
                format!("{text}\n{intro}\n{whole}")
            } else {
                format!("{text}\n{intro}\n{kept}{cut_note}")
            };
            if tokens.count(&candidate) <= budget {
                text = candidate;
                shown += 1;
            }
        }
    }
    for line in lines {
        let candidate = format!("{text}\n{line}");
        if tokens.count(&candidate) <= budget {
            text = candidate;
            shown += 1;
        }
    }
    (shown > 0).then_some(text)
}

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    /// before-query: the block, on turn 0 (see the module's docs).
    pub(crate) fn recall_block(&self, turn: &Turn, message: &str, spaces: &Spaces) -> Option<Injection> {
        let budget = self.config.recall.budget_tokens;
        if turn.turn_index != 0 || budget == 0 || matches!(self.recall_access(), Access::None) {
            return None;
        }
        let index = &*self.recall.as_ref()?.index;
        let plan = if spaces.plan.is_empty() {
            index.recent(Some(PLAN), true, 1).ok().and_then(|plans| plans.into_iter().next())
        } else {
            None
        };
        let max_hits = self.config.recall.max_hits as usize;
        let mut ids: Vec<String> = Vec::new();
        let mut lines = Vec::new();
        let query = Query {
            text: query_words(message),
            kind: None,
            session: None,
            since_ms: None,
            other_sessions: true,
            limit: max_hits as u32,
        };
        // A message without searchable words is `invalid` for the host: the fill takes over.
        let hits = if query.text.is_empty() { Vec::new() } else { index.search(&query).unwrap_or_default() };
        for hit in hits.iter().filter(|hit| hit.kind != PLAN) {
            if lines.len() < max_hits && !ids.contains(&hit.id) {
                ids.push(hit.id.clone());
                lines.push(line(&hit.kind, &hit.session, hit.at_ms, &hit.snippet, &hit.id));
            }
        }
        if lines.len() < max_hits {
            let newest = index.recent(None, true, (max_hits as u32 * FILL_FACTOR).min(50)).unwrap_or_default();
            for document in newest.iter().filter(|document| document.kind != PLAN) {
                if lines.len() < max_hits && !ids.contains(&document.id) {
                    ids.push(document.id.clone());
                    lines.push(line(&document.kind, &document.session, document.at_ms, &document.text, &document.id));
                }
            }
        }
        let text = block(plan.as_ref(), &lines, budget, self.tokens)?;
        Some(Injection { placement: self.recall_placement(), text })
    }

    /// Where the block goes: the configured placement when it is a system one, else
    /// `append-system`.
    pub(crate) fn recall_placement(&self) -> Placement {
        if is_system(self.config.placement) { self.config.placement } else { Placement::AppendSystem }
    }

    /// after-compaction: arms the reminder, when recall may read.
    pub(crate) fn note_compaction_for_recall(&mut self) {
        if !matches!(self.recall_access(), Access::None) {
            let _ = self.storage.set(RECALL_COMPACTION_PENDING, b"1");
        }
    }

    /// before-query: the reminder, once after each compaction, when recall may read.
    pub(crate) fn recall_reminder(&mut self) -> Option<String> {
        let pending =
            self.storage.get(RECALL_COMPACTION_PENDING).is_some() && self.storage.delete(RECALL_COMPACTION_PENDING);
        (pending && !matches!(self.recall_access(), Access::None)).then(|| COMPACTION_HINT.to_string())
    }
}

#[cfg(test)]
mod tests;
