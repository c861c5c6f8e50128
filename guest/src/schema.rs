//! The specs of the four tools: names, descriptions written for the model (with the real
//! configured budgets) and JSON Schemas (draft 2020-12) of their arguments.

use scratchpad_plugin_sdk::ToolSpec;
use serde_json::{Value, json};

use crate::config::{Config, Surface};
use crate::phrases::{delivery_phrase, notes_budget};

/// Name of the scratchpad tool of the session scratchpad and the scratchpad extension.
pub const SCRATCHPAD_TOOL: &str = "session.scratchpad";
/// Name of the session notepad's read tool.
pub const READ_NOTEPAD: &str = "read_notepad";
/// Name of the session notepad's full-replacement tool.
pub const WRITE_NOTEPAD: &str = "write_notepad";
/// Name of the session notepad's surgical-edit tool.
pub const UPDATE_NOTEPAD: &str = "update_notepad";

/// The actions of `session.scratchpad`, in the session scratchpad's order.
pub const ACTIONS: &[&str] = &["set_notes", "append_notes", "set_plan", "refs.add", "refs.remove", "refs.set"];

/// The operations of `update_notepad`, in the session notepad's order.
pub const OPERATIONS: &[&str] = &["find_replace", "append", "prepend", "delete"];

/// The specs of the tools of `surface`.
pub fn surface_tools(surface: Surface, config: &Config) -> Vec<ToolSpec> {
    match surface {
        Surface::Scratchpad => vec![scratchpad(config)],
        Surface::Notepad => vec![read_notepad(), write_notepad(config), update_notepad(config)],
    }
}

fn spec(name: &str, description: String, parameters: Value) -> ToolSpec {
    ToolSpec { name: name.into(), description, parameters: parameters.to_string() }
}

fn scratchpad(config: &Config) -> ToolSpec {
    let description = format!(
        "Persist important working state (plans, findings, decisions) that survives context \
         compaction. Content is {}. Three spaces: notes (max {}), plan (max {} chars), refs \
         (max {} items). Every response shows what each space now uses of its budget.",
        delivery_phrase(config.placement),
        notes_budget(config),
        config.plan_max_chars,
        config.refs_max_items,
    );
    let parameters = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ACTIONS,
                "description": format!(
                    "set_notes: replace notes (truncated to the budget). append_notes: add a line \
                     to notes (rejected, notes unchanged, if it would exceed {}). set_plan: \
                     replace the plan (truncated to {} chars). refs.add / refs.remove: add or \
                     remove one ref (oldest dropped beyond {} items). refs.set: replace all refs.",
                    notes_budget(config), config.plan_max_chars, config.refs_max_items
                ),
            },
            "content": {
                "type": "string",
                "description": "The text, for set_notes, append_notes and set_plan (and the form without action)."
            },
            "ref": {
                "type": "string",
                "minLength": 1,
                "description": "For refs.add and refs.remove: a file path, URL or identifier (exact match)."
            },
            "items": {
                "type": "array",
                "items": { "type": "string" },
                "description": format!("For refs.set: all refs; the first {} are kept.", config.refs_max_items)
            },
            "mode": {
                "type": "string",
                "enum": ["replace", "append"],
                "default": "replace",
                "description": "Only without action: replace overwrites the notes, append adds to them."
            }
        }
    });
    spec(SCRATCHPAD_TOOL, description, parameters)
}

fn read_notepad() -> ToolSpec {
    spec(
        READ_NOTEPAD,
        "Read the session notepad. Returns {\"content\": string}, empty if nothing was written yet.".into(),
        json!({ "type": "object", "properties": {}, "required": [] }),
    )
}

fn write_notepad(config: &Config) -> ToolSpec {
    spec(
        WRITE_NOTEPAD,
        format!(
            "Replace the whole session notepad (write \"\" to clear it). The notepad survives \
             context compaction. Budget: {}; longer content is truncated.",
            notes_budget(config)
        ),
        json!({
            "type": "object",
            "properties": {
                "content": { "type": "string", "description": "The new notepad content (replaces everything)" }
            },
            "required": ["content"]
        }),
    )
}

fn update_notepad(config: &Config) -> ToolSpec {
    spec(
        UPDATE_NOTEPAD,
        format!(
            "Edit the session notepad surgically: find_replace, append, prepend or delete. An edit \
             that would exceed the budget ({}) is rejected and changes nothing.",
            notes_budget(config)
        ),
        json!({
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "enum": OPERATIONS,
                    "description": "The type of edit to perform"
                },
                "content": {
                    "type": "string",
                    "description": "For append/prepend: text to add. For delete: text to remove."
                },
                "find": { "type": "string", "description": "For find_replace: exact substring to find" },
                "replace": { "type": "string", "description": "For find_replace: replacement text" },
                "replace_all": {
                    "type": "boolean",
                    "description": "For find_replace: replace all occurrences. Default: false."
                }
            },
            "required": ["operation"]
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_json_object_schema() {
        let config = Config::default();
        for surface in [Surface::Scratchpad, Surface::Notepad] {
            for tool in surface_tools(surface, &config) {
                let schema: Value = serde_json::from_str(&tool.parameters).unwrap();
                assert_eq!(schema["type"], "object", "{}", tool.name);
                assert!(!tool.description.is_empty());
            }
        }
    }

    #[test]
    fn descriptions_carry_the_configured_budgets() {
        let config = Config::from_json(
            r#"{"notesMaxChars": 1234, "planMaxChars": 567, "refsMaxItems": 8, "tokenBudget": true, "maxTokens": 99}"#,
        )
        .unwrap();
        let tool = &surface_tools(Surface::Scratchpad, &config)[0];
        for figure in ["1234 chars (~99 tokens)", "567 chars", "8 items"] {
            assert!(tool.description.contains(figure), "{figure} missing: {}", tool.description);
        }
        let write = &surface_tools(Surface::Notepad, &config)[1];
        assert!(write.description.contains("1234 chars (~99 tokens)"));
    }
}
