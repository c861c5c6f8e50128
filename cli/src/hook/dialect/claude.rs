//! Claude Code's hook dialect (2.1.331): the protocol the others copied.

use super::{Deny, Dialect, FIELDS, On, Output};

pub(super) const DIALECT: Dialect = Dialect {
    events: &[
        ("SessionStart", On::SessionStart),
        ("UserPromptSubmit", On::Prompt),
        ("PreToolUse", On::BeforeTool),
        ("PostToolUse", On::AfterTool),
        ("PreCompact", On::BeforeCompaction),
        ("PostCompact", On::AfterCompaction),
        ("Stop", On::Stop),
        ("SubagentStart", On::SubagentStart),
        ("SubagentStop", On::SubagentStop),
    ],
    fields: FIELDS,
    output: OUTPUT,
    failures_exit_zero: false,
    context_on_resume: true,
    session_argument: None,
    agent_argument: Some("scratchpad_turn"),
};

/// Claude Code's answers, which Codex reads too.
pub(super) const OUTPUT: Output = Output {
    specific: &[On::SessionStart, On::Prompt, On::BeforeTool, On::AfterTool, On::SubagentStart],
    context: "additionalContext",
    rewrite: "updatedInput",
    deny: Deny { specific: true, decision: "permissionDecision", value: "deny", reason: "permissionDecisionReason" },
    // Built-in tools' results cannot be replaced (only in their own output shape): the
    // replacement goes beside the original, as context.
    replace_mcp: Some("updatedMCPToolOutput"),
    mcp_prefix: "mcp__",
    notice: "systemMessage",
};
