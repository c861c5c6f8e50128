//! Codex CLI's hook dialect (0.169.0): Claude Code's events, fields and answers; Codex fills
//! `turn_id` on every event but `SessionStart`, which becomes the host's turn id. Codex's compact hooks
//! accept only the common fields, so `PreCompact` and `PostCompact` are never answered with
//! context (they are not in `specific`).

use super::{Dialect, FIELDS, Fields};

pub(super) const DIALECT: Dialect = Dialect {
    events: super::claude::DIALECT.events,
    // Its payloads' schema names `agent_id` and `agent_type` as Claude Code's do, but its
    // sub-agents were not measured: their events act in the parent's session, as before.
    fields: Fields { agent_id: None, agent_type: None, ..FIELDS },
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
