//! The hook's answer in the shape the agent reads (JSON on stdout), written through its
//! runtime's table (`dialect/`). What each shape does in the pinned agent versions is in
//! docs/claude-code.md, docs/codex.md and docs/gemini.md.

use serde_json::{Map, Value, json};

use super::dialect::{On, ReplaceBuiltin};
use super::event::{Event, Kind};

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
    /// A built-in tool's result replaced as the runtime's table says: the result object in the
    /// tool's shape, or the text the model reads.
    Output(Value),
}

impl Answer {
    /// The JSON to print for `event`, if any, with `notice` as a message the user sees
    /// (`systemMessage`).
    pub(crate) fn render(&self, event: &Event, notice: Option<&str>) -> Option<String> {
        let output = &event.runtime.dialect().output;
        let mut top = Map::new();
        let on = match &event.kind {
            Kind::SessionStart { .. } => Some(On::SessionStart),
            Kind::UserPromptSubmit { .. } => Some(On::Prompt),
            Kind::PreToolUse { .. } => Some(On::BeforeTool),
            Kind::PostToolUse { .. } => Some(On::AfterTool),
            Kind::SubagentStart => Some(On::SubagentStart),
            _ => None,
        };
        if on.is_some_and(|on| output.specific.contains(&on)) {
            let mut specific = Map::new();
            match self {
                Answer::Nothing => {}
                Answer::Context(text) if text.is_empty() => {}
                Answer::Context(text) => {
                    specific.insert(output.context.into(), json!(text));
                }
                Answer::Rewrite(arguments) => {
                    specific.insert(output.rewrite.into(), arguments.clone());
                    if let Some(decision) = &output.rewrite_decision
                        && output.rewrites_in(event.permission_mode.as_deref())
                    {
                        specific.insert(decision.key.into(), json!(decision.value));
                    }
                }
                Answer::Deny(reason) => {
                    let deny = &output.deny;
                    let target = if deny.specific { &mut specific } else { &mut top };
                    target.insert(deny.decision.into(), json!(deny.value));
                    target.insert(deny.reason.into(), json!(reason));
                }
                Answer::Replace { text, mcp } => match output.replace_mcp.filter(|_| *mcp) {
                    Some(key) => {
                        specific.insert(key.into(), json!([{ "type": "text", "text": text }]));
                    }
                    None => {
                        specific.insert(output.context.into(), json!(text));
                    }
                },
                Answer::Output(value) => match &output.replace_builtin {
                    ReplaceBuiltin::InShape(key) => {
                        specific.insert((*key).into(), value.clone());
                    }
                    ReplaceBuiltin::Block { decision, value: block, reason } => {
                        top.insert((*decision).into(), json!(block));
                        top.insert((*reason).into(), value.clone());
                    }
                    ReplaceBuiltin::Context => {
                        let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                        specific.insert(output.context.into(), json!(text));
                    }
                },
            }
            if !specific.is_empty() {
                specific.insert("hookEventName".into(), json!(event.name));
                top.insert("hookSpecificOutput".into(), Value::Object(specific));
            }
        }
        if let Some(notice) = notice {
            top.insert(output.notice.into(), json!(notice));
        }
        (!top.is_empty()).then(|| Value::Object(top).to_string())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hook::event::{Runtime, parse};

    fn event(runtime: Runtime, name: &str, fields: &str) -> Event {
        let text = format!(r#"{{"session_id":"s","hook_event_name":"{name}",{fields}}}"#);
        parse(text.as_bytes(), Some(runtime)).unwrap()
    }

    fn rendered(answer: Answer, event: &Event) -> Value {
        serde_json::from_str(&answer.render(event, None).unwrap()).unwrap()
    }

    #[test]
    fn each_runtime_reads_its_own_shapes() {
        let tool = r#""tool_name":"mcp__x__t","tool_input":{}"#;
        let claude = event(Runtime::ClaudeCode, "PreToolUse", tool);
        let gemini = event(Runtime::Gemini, "BeforeTool", r#""tool_name":"mcp_x_t","tool_input":{}"#);
        assert_eq!(
            rendered(Answer::Deny("no".into()), &claude),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        assert_eq!(rendered(Answer::Deny("no".into()), &gemini), json!({"decision": "deny", "reason": "no"}));
        assert_eq!(
            rendered(Answer::Rewrite(json!({"a": 1})), &gemini),
            json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"a": 1}}})
        );
        let response = r#""tool_response":{"llmContent":"x"}"#;
        let after =
            event(Runtime::Gemini, "AfterTool", &format!(r#""tool_name":"mcp_x_t","tool_input":{{}},{response}"#));
        assert_eq!(
            rendered(Answer::Replace { text: "short".into(), mcp: true }, &after),
            json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "short"}}),
            "Gemini CLI cannot replace a result: it gets the replacement as context"
        );
        let post = event(Runtime::Codex, "PostToolUse", &format!(r#"{tool},"tool_response":"x""#));
        assert_eq!(
            rendered(Answer::Replace { text: "short".into(), mcp: true }, &post),
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": [{"type": "text", "text": "short"}]}})
        );
        // Codex takes a rewrite only when allowed, and replaces a built-in tool's result by a
        // block; Claude Code in the tool's own shape.
        let ls = r#""tool_name":"Bash","tool_input":{"command":"ls"}"#;
        let codex = event(Runtime::Codex, "PreToolUse", &format!(r#""permission_mode":"bypassPermissions",{ls}"#));
        assert_eq!(
            rendered(Answer::Rewrite(json!({"command": "ls -a"})), &codex),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -a"}, "permissionDecision": "allow"}})
        );
        let asking = event(Runtime::Codex, "PreToolUse", &format!(r#""permission_mode":"default",{ls}"#));
        assert_eq!(
            rendered(Answer::Rewrite(json!({"command": "ls -a"})), &asking),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -a"}}}),
            "never an allow where Codex would ask the user"
        );
        let bash = r#""tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"x""#;
        assert_eq!(
            rendered(Answer::Output(json!("short")), &event(Runtime::Codex, "PostToolUse", bash)),
            json!({"decision": "block", "reason": "short"})
        );
        assert_eq!(
            rendered(Answer::Output(json!({"stdout": "short"})), &event(Runtime::ClaudeCode, "PostToolUse", bash)),
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"stdout": "short"}}})
        );
        // Events without a specific output: only a notice, or nothing.
        let stop = event(Runtime::Gemini, "AfterAgent", r#""prompt_response":"done""#);
        assert_eq!(Answer::Context("x".into()).render(&stop, None), None);
        assert_eq!(Answer::Nothing.render(&stop, Some("locked")).as_deref(), Some(r#"{"systemMessage":"locked"}"#));
    }
}
