//! Codex CLI's hook dialect (0.169.0): Claude Code's events, fields and answers; Codex fills
//! `turn_id` on every event but `SessionStart`, which becomes the host's turn id. Codex's compact hooks
//! accept only the common fields, so `PreCompact` and `PostCompact` are never answered with
//! context (they are not in `specific`).

use super::{Dialect, FIELDS};

pub(super) const DIALECT: Dialect = Dialect {
    events: super::claude::DIALECT.events,
    // A sub-agent's events (`[features] multi_agent`, the `spawn_agent` tool) carry the parent's
    // session id, the sub-agent's `agent_id` (its thread) and its own `turn_id`, as Claude
    // Code's do; its MCP calls name the parent's session and the sub-agent's turn, which
    // `scratchpad mcp --codex-turns` follows to the sub-agent's session (no argument needed).
    fields: FIELDS,
    output: super::claude::OUTPUT,
    failures_exit_zero: false,
    context_on_resume: true,
    session_argument: None,
    agent_argument: None,
};

#[cfg(test)]
mod tests {
    #[test]
    fn codex_answers_as_claude_code_does() {
        let (codex, claude) = (&super::DIALECT.output, &super::super::claude::DIALECT.output);
        assert_eq!(format!("{codex:?}"), format!("{claude:?}"));
    }
}
