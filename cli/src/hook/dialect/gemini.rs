//! Gemini CLI's hook dialect (0.61.0, measured against the real CLI; docs/gemini.md): its own
//! event names, Claude Code's common fields, and `hookSpecificOutput.additionalContext`, which
//! reaches the model as `<hook_context>…</hook_context>` (with `<` and `>` escaped).
//!
//! - `PreCompress` is not acted on: 0.61.0 fires it before deciding whether to compress, on
//!   every turn with history, and sends nothing after a compression. The scratchpad is in every
//!   `BeforeAgent`'s context, so a compression loses nothing the next request needs.
//! - `SessionEnd`, `BeforeModel`, `AfterModel`, `BeforeToolSelection` and `Notification` are
//!   answered with nothing.
//! - `SessionStart` (`resume`) adds nothing: its context and `BeforeAgent`'s reach the model in
//!   the same request, and `BeforeAgent` brings the scratchpad.
//! - Gemini CLI takes any exit status but 0 and 1 as a deny (the turn blocked at `BeforeAgent`,
//!   the text fed back to the model at `AfterAgent`): the hook always exits 0.
//! - It tells its MCP servers nothing about the session: `BeforeTool` adds the session and turn
//!   to each call of the scratchpad's own tools, in `scratchpad_turn`.

use super::{Deny, Dialect, FIELDS, Fields, On, Output, ReplaceBuiltin};

pub(super) const DIALECT: Dialect = Dialect {
    events: &[
        ("SessionStart", On::SessionStart),
        ("BeforeAgent", On::Prompt),
        ("BeforeTool", On::BeforeTool),
        ("AfterTool", On::AfterTool),
        ("AfterAgent", On::Stop),
    ],
    fields: Fields {
        turn_id: None,
        permission_mode: None,
        response_text: Some("llmContent"),
        call_id: None,
        last_message: "prompt_response",
        agent_id: None,
        agent_type: None,
        ..FIELDS
    },
    output: Output {
        specific: &[On::SessionStart, On::Prompt, On::BeforeTool, On::AfterTool],
        context: "additionalContext",
        // The whole new arguments (0.61.0 validates them against the tool's schema).
        rewrite: "tool_input",
        deny: Deny { specific: false, decision: "decision", value: "deny", reason: "reason" },
        // An MCP tool's result cannot be replaced (`decision: block` prefixes "Tool result
        // blocked"): the replacement is added to it as context.
        replace_mcp: None,
        replace_builtin: ReplaceBuiltin::Context,
        rewrite_decision: None,
        mcp_prefix: "mcp_",
        notice: "systemMessage",
    },
    failures_exit_zero: true,
    context_on_resume: false,
    session_argument: Some("scratchpad_turn"),
    shell: None,
    persisted: None,
    agent_argument: None,
};
