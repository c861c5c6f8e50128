//! Claude Code's hook dialect (2.1.331): the protocol the others copied.

use super::{Deny, Dialect, FIELDS, On, Output, Persisted, ReplaceBuiltin};

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
    shell: None,
    // Bash's result (2.1.331, measured): the first 30,000 characters in `stdout`, the whole
    // output in the file at `persistedOutputPath`; the model gets a stub naming that file.
    persisted: Some(Persisted {
        path: "persistedOutputPath",
        text: "stdout",
        drop: &["persistedOutputPath", "persistedOutputSize", "stdoutHoldsOutputEnd"],
    }),
    agent_argument: Some("scratchpad_turn"),
};

/// Claude Code's answers, which Codex reads too.
pub(super) const OUTPUT: Output = Output {
    specific: &[On::SessionStart, On::Prompt, On::BeforeTool, On::AfterTool, On::SubagentStart],
    context: "additionalContext",
    rewrite: "updatedInput",
    deny: Deny { specific: true, decision: "permissionDecision", value: "deny", reason: "permissionDecisionReason" },
    replace_mcp: Some("updatedMCPToolOutput"),
    // Only as an object in the tool's own output shape (a string is refused); an object
    // without the `persisted*` keys reaches the model as given.
    replace_builtin: ReplaceBuiltin::InShape("updatedToolOutput"),
    rewrite_decision: None,
    mcp_prefix: "mcp__",
    notice: "systemMessage",
};
