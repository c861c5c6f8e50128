//! `session.scratchpad` (the session scratchpad and the scratchpad extension).
//!
//! With `action` (the session scratchpad): `set_notes`, `append_notes`, `set_plan` take `content`;
//! `refs.add` and `refs.remove` take `ref`; `refs.set` takes `items`. Without `action`, the
//! extension's legacy form `{content, mode: "replace"|"append"}` (mode defaults to replace) acts on
//! notes with the extension's response texts.
//!
//! Every success ends with a `Usage: notes 812/4000 chars; plan 0/2000 chars; refs 3/50 items`
//! line (notes also show tokens when the token budget is on). Every failure is an error value
//! and changes nothing: each action validates first, then writes exactly one space key.

use scratchpad_plugin_sdk::{Storage, Tokenizer, ToolError, ToolOutput, Turn};
use serde_json::Value;

use crate::budget::{self, Over, TextLimit};
use crate::plugin::Scratchpad;
use crate::schema::ACTIONS;
use crate::state::{self, NOTES, PLAN};
use scratchpad_plugin_sdk::args::{Args, invalid, kind};

/// Joins `added` to `current` on a new line (no leading newline when `current` is empty).
pub fn join_lines(current: &str, added: &str) -> String {
    if current.is_empty() { added.to_string() } else { format!("{current}\n{added}") }
}

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    pub(crate) fn call_scratchpad(&mut self, turn: &Turn, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args = Args::parse(arguments)?;
        let first = if args.has("action") {
            match args.string("action")? {
                "set_notes" => {
                    self.set_text(turn, NOTES, TextLimit::notes(self.config), args.string("content")?, "Notes")?
                }
                "append_notes" => self.append_notes(turn, &args)?,
                "set_plan" => {
                    self.set_text(turn, PLAN, TextLimit::plan(self.config), args.string("content")?, "Plan")?
                }
                "refs.add" => self.add_ref(turn, args.non_empty_string("ref")?)?,
                "refs.remove" => self.remove_ref(turn, args.non_empty_string("ref")?)?,
                "refs.set" => self.set_refs(turn, args.value("items"))?,
                other => {
                    return Err(invalid(format!("`action` must be one of {}, got \"{other}\"", ACTIONS.join(", "))));
                }
            }
        } else if args.has("content") {
            self.legacy(turn, &args)?
        } else {
            return Err(invalid(format!(
                "`action` is required: one of {} (or give `content` with `mode` \"replace\" or \"append\")",
                ACTIONS.join(", ")
            )));
        };
        Ok(ToolOutput { content: format!("{first}\nUsage: {}", self.usage()) })
    }

    /// The usage of all three spaces after the call.
    fn usage(&self) -> String {
        let spaces = self.spaces();
        format!(
            "{}; {}; {}",
            budget::text_usage("notes", &spaces.notes, &TextLimit::notes(self.config), self.tokens),
            budget::text_usage("plan", &spaces.plan, &TextLimit::plan(self.config), self.tokens),
            budget::refs_usage(spaces.refs.len(), self.config.refs_max_items),
        )
    }

    /// Replaces a text space, truncating to its limit. Returns the first response line.
    fn set_text(
        &mut self,
        turn: &Turn,
        key: &str,
        limit: TextLimit,
        content: &str,
        subject: &str,
    ) -> Result<String, ToolError> {
        let fit = budget::fit(content, &limit, self.tokens);
        state::write_text(self.storage, key, fit.kept)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(match fit.cut {
            Some(cut) => cut.message(subject, &limit),
            None => format!("{subject} set."),
        })
    }

    fn append_notes(&mut self, turn: &Turn, args: &Args) -> Result<String, ToolError> {
        let added = non_empty_content(args)?;
        self.append_checked(turn, added, |over| {
            format!(
                "append_notes rejected, notes unchanged: the result ({} {unit}s) would exceed the {} {unit} \
                 budget of notes (current: {}, append: {}). Use set_notes to replace the notes with a \
                 tighter summary, or append less.",
                over.result,
                over.max,
                over.current,
                over.added,
                unit = over.unit
            )
        })?;
        Ok("Appended to notes.".into())
    }

    /// Appends to notes; an over-budget append is `rejected` with `message(over)`.
    pub(crate) fn append_checked(
        &mut self,
        turn: &Turn,
        added: &str,
        message: impl Fn(&Over) -> String,
    ) -> Result<(), ToolError> {
        let current = state::read_text(self.storage, NOTES);
        let result = join_lines(&current, added);
        budget::check(&current, added, &result, &TextLimit::notes(self.config), self.tokens)
            .map_err(|over| ToolError::Rejected(message(&over)))?;
        state::write_text(self.storage, NOTES, &result)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(())
    }

    /// The scratchpad extension's `{content, mode}` form, with its texts.
    fn legacy(&mut self, turn: &Turn, args: &Args) -> Result<String, ToolError> {
        let content = args.string("content")?;
        let limit = TextLimit::notes(self.config);
        match args.optional_string("mode")?.unwrap_or("replace") {
            "replace" => {
                let fit = budget::fit(content, &limit, self.tokens);
                state::write_text(self.storage, NOTES, fit.kept)?;
                state::mark_updated(self.storage, turn.turn_index);
                if let Some(cut) = fit.cut {
                    return Ok(cut.message("Scratchpad", &limit));
                }
            }
            "append" => {
                let added = non_empty_content(args)?;
                self.append_checked(turn, added, |over| {
                    format!(
                        "Append would exceed {} {} budget (current: {}, append: {}). Use mode 'replace' to \
                         rewrite, or reduce content.",
                        over.max, over.unit, over.current, over.added
                    )
                })?;
            }
            other => {
                return Err(invalid(format!("`mode` must be \"replace\" or \"append\", got \"{other}\"")));
            }
        }
        let notes = state::read_text(self.storage, NOTES);
        Ok(match limit.max_tokens {
            Some(max) => format!("Scratchpad updated ({} tokens / {max} budget)", self.tokens.count(&notes)),
            None => format!("Scratchpad updated ({} chars / {} budget)", budget::char_count(&notes), limit.max_chars),
        })
    }

    fn add_ref(&mut self, turn: &Turn, new: &str) -> Result<String, ToolError> {
        let mut refs = state::read_refs(self.storage);
        let message = if let Some(at) = refs.iter().position(|r| r == new) {
            refs.remove(at);
            refs.push(new.to_string());
            format!("Ref already present, moved to newest: {new}")
        } else {
            refs.push(new.to_string());
            let excess = refs.len().saturating_sub(self.config.refs_max_items);
            let dropped: Vec<String> = refs.drain(..excess).collect();
            if dropped.is_empty() {
                format!("Ref added: {new}")
            } else {
                format!("Ref added: {new} (refs were full; dropped oldest: {})", dropped.join(", "))
            }
        };
        state::write_refs(self.storage, &refs)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(message)
    }

    fn remove_ref(&mut self, turn: &Turn, old: &str) -> Result<String, ToolError> {
        let mut refs = state::read_refs(self.storage);
        let Some(at) = refs.iter().position(|r| r == old) else {
            return Err(ToolError::NotFound(format!(
                "ref \"{old}\" is not in refs (exact match required); nothing was changed"
            )));
        };
        refs.remove(at);
        state::write_refs(self.storage, &refs)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(format!("Ref removed: {old}"))
    }

    /// Replaces all refs: keeps non-empty strings, without duplicates, the first N of them.
    fn set_refs(&mut self, turn: &Turn, items: Option<&Value>) -> Result<String, ToolError> {
        let items = match items {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(invalid(format!("`items` must be an array of strings, got {}", kind(other))));
            }
            None => return Err(invalid("`items` is required (an array of strings)".into())),
        };
        let mut refs: Vec<String> = Vec::new();
        for item in items.iter().filter_map(Value::as_str).filter(|s| !s.trim().is_empty()) {
            if refs.len() == self.config.refs_max_items {
                break;
            }
            if !refs.iter().any(|r| r == item) {
                refs.push(item.to_string());
            }
        }
        state::write_refs(self.storage, &refs)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(format!("Refs set ({} items).", refs.len()))
    }
}

/// `content` for an append: a string with something in it.
fn non_empty_content(args: &Args) -> Result<&str, ToolError> {
    let content = args.string("content")?;
    if content.is_empty() {
        return Err(invalid("`content` must not be empty when appending".into()));
    }
    Ok(content)
}

#[cfg(test)]
mod tests;
