//! Codex CLI's hook dialect (0.169.0): Claude Code's events, fields and answers but for two
//! shapes; Codex fills `turn_id` on every event but `SessionStart`, which becomes the host's
//! turn id. Codex's compact hooks accept only the common fields, so `PreCompact` and
//! `PostCompact` are never answered with context (they are not in `specific`).
//!
//! - A rewrite (`updatedInput`) is taken only with `permissionDecision: "allow"` beside it;
//!   without it Codex reports the hook failed and runs the original. The hook gives it only
//!   where Codex asks the user nothing (`bypassPermissions`).
//! - `{"decision": "block", "reason": TEXT}` from `PostToolUse` replaces what the model reads
//!   of a tool's result with TEXT.
//! - Its shell tool (`exec_command`, `Bash` to hooks) reaches `PostToolUse` cut to about
//!   10,000 characters and the rollout keeps at most 64 KiB of it: the hook rewrites the
//!   command to copy its whole output (`shell.rs`).

use super::{Dialect, FIELDS, Output, ReplaceBuiltin, RewriteDecision, Shell};

pub(super) const DIALECT: Dialect = Dialect {
    events: super::claude::DIALECT.events,
    // A sub-agent's events (`[features] multi_agent`, the `spawn_agent` tool) carry the parent's
    // session id, the sub-agent's `agent_id` (its thread) and its own `turn_id`, as Claude
    // Code's do; its MCP calls name the parent's session and the sub-agent's turn, which
    // `scratchpad mcp --codex-turns` follows to the sub-agent's session (no argument needed).
    fields: FIELDS,
    output: Output {
        replace_builtin: ReplaceBuiltin::Block { decision: "decision", value: "block", reason: "reason" },
        // `codex exec` (approval `never`) reports `bypassPermissions`; in a mode that asks the
        // user, whether `allow` would skip the approval is not measured, so no rewrite is
        // allowed there.
        rewrite_decision: Some(RewriteDecision {
            key: "permissionDecision",
            value: "allow",
            modes: &["bypassPermissions"],
        }),
        ..super::claude::OUTPUT
    },
    failures_exit_zero: false,
    context_on_resume: true,
    session_argument: None,
    shell: Some(Shell { tool: "Bash", command: "command" }),
    persisted: None,
    agent_argument: None,
};
