//! The hook's answer in the shape the agent reads (JSON on stdout), per runtime. What each
//! shape does in the pinned agent versions is in docs/claude-code.md and docs/codex.md.

use serde_json::{Value, json};

use super::event::{Event, Kind, Runtime};

/// What the hook tells the agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Nothing to say: no output.
    Nothing,
    /// Context for the model (`additionalContext`); nothing when empty.
    Context(String),
    /// Run the tool with these arguments instead.
    Rewrite(Value),
    /// Do not run the tool; the model reads why.
    Deny(String),
    /// The model reads `text` instead of the tool's result (`mcp`: the tool is an MCP tool).
    Replace { text: String, mcp: bool },
}

impl Answer {
    /// The JSON to print for `event`, if any, with `notice` as a message the user sees
    /// (`systemMessage`).
    pub(crate) fn render(&self, runtime: Runtime, event: &Event, notice: Option<&str>) -> Option<String> {
        let mut output = self.specific(runtime, event).unwrap_or_else(|| json!({}));
        if let Some(notice) = notice {
            output["systemMessage"] = json!(notice);
        }
        (output != json!({})).then(|| output.to_string())
    }

    /// The event's `hookSpecificOutput`, if this answer has one.
    fn specific(&self, runtime: Runtime, event: &Event) -> Option<Value> {
        let name = match &event.kind {
            Kind::SessionStart { .. }
            | Kind::UserPromptSubmit { .. }
            | Kind::PreToolUse { .. }
            | Kind::PostToolUse { .. } => event.kind.name(),
            _ => return None,
        };
        let specific = match self {
            Answer::Nothing => return None,
            Answer::Context(text) if text.is_empty() => return None,
            Answer::Context(text) => json!({ "additionalContext": text }),
            Answer::Rewrite(arguments) => json!({ "updatedInput": arguments }),
            Answer::Deny(reason) => json!({ "permissionDecision": "deny", "permissionDecisionReason": reason }),
            Answer::Replace { text, mcp: true } => {
                json!({ "updatedMCPToolOutput": [{ "type": "text", "text": text }] })
            }
            // Built-in tools' results cannot be replaced: the model gets the replacement beside
            // the original, as context.
            Answer::Replace { text, mcp: false } => json!({ "additionalContext": text }),
        };
        let _ = runtime;
        let mut output = json!({ "hookSpecificOutput": { "hookEventName": name } });
        if let (Value::Object(target), Value::Object(fields)) = (&mut output["hookSpecificOutput"], specific) {
            target.extend(fields);
        }
        Some(output)
    }
}
