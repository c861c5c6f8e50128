//! The session scratchpad's auto-trigger nudges: `[Hint: ...]` lines injected before the block on the next
//! turn. All are off by default (0). Each fires once per occasion, and since every hook runs
//! in a fresh instance, what has fired is remembered in storage (`meta/...`, see `state.rs`):
//!
//! - `nudgeAfterTurns = N`: once per session, on the first turn with index ≥ N while every
//!   space is empty.
//! - `nudgeOnPlanDetected > 0`: after-response sees a plan (`plan_detection.rs`) while every
//!   space is empty → one hint on the next turn, if everything is still empty then.
//! - `nudgeAfterCompaction > 0`: after-compaction → one hint on the next turn.
//! - `nudgeTurnsSinceLastUse = N`: once per stretch of N turns without a write while some
//!   space is non-empty (a write starts a new stretch). A session that inherits its parent's
//!   state counts the copy as written before its own first turn.
//!
//! No hint is given when no tool surface is offered (the model could not act on it). Turns are
//! counted with the host's `turn_index`; the component has no clock.

use scratchpad_plugin_sdk::{Storage, Tokenizer, Turn};

use crate::config::Surface;
use crate::plan_detection::contains_plan;
use crate::plugin::Scratchpad;
use crate::state::{
    self, AFTER_TURNS_FIRED, COMPACTION_PENDING, LAST_UPDATE_TURN, PLAN_PENDING, STALE_FIRED_FOR, Spaces,
};

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    /// The hints due at the start of `turn`, in order: compaction, after-turns, plan, staleness.
    /// Records that they fired.
    pub(crate) fn due_hints(&mut self, turn: &Turn, spaces: &Spaces) -> Vec<String> {
        let nudges = self.config.nudges;
        let compacted = self.take(COMPACTION_PENDING);
        let plan_seen = self.take(PLAN_PENDING);
        if self.config.surfaces.is_empty() {
            return Vec::new();
        }
        let (noun, tool) = self.words();
        let mut hints = Vec::new();
        if compacted && nudges.after_compaction > 0 {
            hints.push(format!(
                "[Hint: The conversation was just compacted, so earlier details may now be summarized. Review \
                 your {noun} and save any working state, findings or progress that is missing from it with \
                 {tool}.]"
            ));
        }
        let n = nudges.after_turns;
        if n > 0 && turn.turn_index >= n && spaces.is_empty() && self.storage.get(AFTER_TURNS_FIRED).is_none() {
            let _ = self.storage.set(AFTER_TURNS_FIRED, b"1");
            hints.push(format!(
                "[Hint: Your {noun} is still empty after {}. If this is a multi-step task, save your plan, \
                 key findings and decisions with {tool} so they survive context compaction.]",
                turns(turn.turn_index)
            ));
        }
        if plan_seen && nudges.on_plan_detected > 0 && spaces.is_empty() {
            let plan_tool = if self.config.offers(Surface::Scratchpad) {
                "session.scratchpad (action \"set_plan\")"
            } else {
                "write_notepad"
            };
            hints.push(format!(
                "[Hint: Your last reply contained a plan, but your {noun} is empty. Save the plan with {plan_tool} \
                 so it survives context compaction.]"
            ));
        }
        let n = nudges.turns_since_last_use;
        if n > 0 && !spaces.is_empty() {
            let last = state::read_number(self.storage, LAST_UPDATE_TURN).unwrap_or(0);
            let since = turn.turn_index.saturating_sub(last);
            if since >= n && state::read_number(self.storage, STALE_FIRED_FOR) != Some(last) {
                state::write_number(self.storage, STALE_FIRED_FOR, last);
                hints.push(format!(
                    "[Hint: Your {noun} has not been updated in {}. Review it: mark completed steps, \
                     drop what is stale, and record new findings with {tool}.]",
                    turns(since)
                ));
            }
        }
        hints
    }

    /// after-response: remembers a plan seen while every space is empty.
    pub(crate) fn note_reply(&mut self, turn: &Turn, text: &str) {
        if self.config.nudges.on_plan_detected > 0 && contains_plan(text) && self.spaces().is_empty() {
            state::write_number(self.storage, PLAN_PENDING, turn.turn_index);
        }
    }

    /// before-session-create of a session that inherits the parent's state (fork, spawn with
    /// copy). The copied `last-update-turn` and `stale-fired-for` are turn indexes of the
    /// parent, whose turns are numbered on while the child's start again at 0, so the child
    /// would count staleness against the wrong turns. The copy counts as written just before
    /// the child's first turn (index 0), with no staleness hint given yet. The hook sees empty
    /// storage and the host applies its writes over the copy, so it sets the keys.
    pub(crate) fn restart_turn_counts(&mut self) {
        state::mark_updated(self.storage, 0);
        let _ = self.storage.set(STALE_FIRED_FOR, state::NOT_FIRED);
    }

    /// after-compaction: arms the compaction hint.
    pub(crate) fn note_compaction(&mut self) {
        if self.config.nudges.after_compaction > 0 {
            let _ = self.storage.set(COMPACTION_PENDING, b"1");
        }
    }

    /// What the hints call the scratchpad and its write tool, for the offered surfaces.
    fn words(&self) -> (&'static str, &'static str) {
        if self.config.offers(Surface::Scratchpad) {
            ("scratchpad", "session.scratchpad")
        } else {
            ("notepad", "write_notepad or update_notepad")
        }
    }

    /// Removes `key`; whether it was there. Reads first so that nothing is written when absent.
    fn take(&mut self, key: &str) -> bool {
        self.storage.get(key).is_some() && self.storage.delete(key)
    }
}

/// `1 turn`, `3 turns`.
fn turns(n: u32) -> String {
    if n == 1 { "1 turn".into() } else { format!("{n} turns") }
}

#[cfg(test)]
mod tests;
