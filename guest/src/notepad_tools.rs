//! The session notepad's tools, over the notes space with the notes limits.
//!
//! - `read_notepad` → `{"content": "...", "usage": "notepad 812/4000 chars"}` (empty content
//!   when nothing was written; like every response, it says what the budget holds).
//! - `write_notepad {content}` replaces everything (truncating to the budget) →
//!   `{"ok": true, "usage": "notepad 812/4000 chars"}`, plus `"warning"` when truncated.
//! - `update_notepad {operation, ...}`: `find_replace` (`find`, `replace`, `replace_all`
//!   default false), `append` / `prepend` (`content`, joined with a newline), `delete`
//!   (`content`: its first occurrence is removed) → `{"ok": true, "usage": ...}` (plus
//!   `"replaced": n` for find_replace). Text not found is `not-found`; a result over the budget
//!   is `rejected`; both change nothing.
//!
//! The host's sandbox API (003: agent-authored tools) maps `read` / `write` / `append` onto
//! these tools, so the same limits hold for code outside the model.

use scratchpad_plugin_sdk::{Storage, Tokenizer, ToolError, ToolOutput, Turn};
use serde_json::{Map, Value, json};

use crate::budget::{self, TextLimit};
use crate::plugin::Scratchpad;
use crate::schema::OPERATIONS;
use crate::scratchpad_tool::join_lines;
use crate::state::{self, NOTES};
use scratchpad_plugin_sdk::args::{Args, invalid};

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    pub(crate) fn read_notepad(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        Args::parse(arguments)?;
        let content = state::read_text(self.storage, NOTES);
        let usage = budget::text_usage("notepad", &content, &TextLimit::notes(self.config), self.tokens);
        Ok(ToolOutput { content: json!({ "content": content, "usage": usage }).to_string() })
    }

    pub(crate) fn write_notepad(&mut self, turn: &Turn, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args = Args::parse(arguments)?;
        let content = args.string("content")?;
        let limit = TextLimit::notes(self.config);
        let fit = budget::fit(content, &limit, self.tokens);
        state::write_text(self.storage, NOTES, fit.kept)?;
        state::mark_updated(self.storage, turn.turn_index);
        let mut extra = Map::new();
        if let Some(cut) = fit.cut {
            extra.insert("warning".into(), cut.message("Notepad", &limit).into());
        }
        Ok(self.ok(extra))
    }

    pub(crate) fn update_notepad(&mut self, turn: &Turn, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args = Args::parse(arguments)?;
        let operation = args.string("operation")?;
        let current = state::read_text(self.storage, NOTES);
        let mut extra = Map::new();
        let (result, added) = match operation {
            "find_replace" => {
                let find = args.string("find")?;
                if find.is_empty() {
                    return Err(invalid("`find` must not be empty".into()));
                }
                let replace = args.string("replace")?;
                let replace_all = args.bool_or("replace_all", false)?;
                let found = current.matches(find).count();
                if found == 0 {
                    return Err(ToolError::NotFound(
                        "the `find` text was not found in the notepad (exact match required); nothing was changed"
                            .into(),
                    ));
                }
                let (result, replaced) = if replace_all {
                    (current.replace(find, replace), found)
                } else {
                    (current.replacen(find, replace, 1), 1)
                };
                extra.insert("replaced".into(), replaced.into());
                (result, replace)
            }
            "append" => {
                let content = non_empty(&args)?;
                (join_lines(&current, content), content)
            }
            "prepend" => {
                let content = non_empty(&args)?;
                let result = if current.is_empty() { content.to_string() } else { format!("{content}\n{current}") };
                (result, content)
            }
            "delete" => {
                let content = non_empty(&args)?;
                if !current.contains(content) {
                    return Err(ToolError::NotFound(
                        "the text to delete (`content`) was not found in the notepad (exact match required); \
                         nothing was changed"
                            .into(),
                    ));
                }
                (current.replacen(content, "", 1), "")
            }
            other => {
                return Err(invalid(format!("`operation` must be one of {}, got \"{other}\"", OPERATIONS.join(", "))));
            }
        };
        budget::check(&current, added, &result, &TextLimit::notes(self.config), self.tokens).map_err(|over| {
            ToolError::Rejected(format!(
                "update_notepad {operation} rejected, notepad unchanged: the result ({} {unit}s) would exceed \
                 the {} {unit} budget (current: {}, adding: {}). Use write_notepad to rewrite the notepad as a \
                 tighter summary, or add less.",
                over.result,
                over.max,
                over.current,
                over.added,
                unit = over.unit
            ))
        })?;
        state::write_text(self.storage, NOTES, &result)?;
        state::mark_updated(self.storage, turn.turn_index);
        Ok(self.ok(extra))
    }

    /// `{"ok": true, "usage": "notepad 812/4000 chars", ...extra}`.
    fn ok(&self, mut extra: Map<String, Value>) -> ToolOutput {
        let notes = state::read_text(self.storage, NOTES);
        let usage = budget::text_usage("notepad", &notes, &TextLimit::notes(self.config), self.tokens);
        let mut object = Map::new();
        object.insert("ok".into(), true.into());
        object.insert("usage".into(), usage.into());
        object.append(&mut extra);
        ToolOutput { content: Value::Object(object).to_string() }
    }
}

/// `content` for append, prepend and delete: a string with something in it.
fn non_empty(args: &Args) -> Result<&str, ToolError> {
    let content = args.string("content")?;
    if content.is_empty() {
        return Err(invalid("`content` must not be empty for this operation".into()));
    }
    Ok(content)
}

#[cfg(test)]
mod tests;
