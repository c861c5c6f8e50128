//! The hook dialects: what each coding agent calls its events, which fields its payloads carry
//! and how it reads an answer, one table per runtime (`claude.rs`, `codex.rs`, `gemini.rs`).
//! `event.rs` parses a payload through its runtime's table and `answer.rs` writes the answer
//! through it; what the hook does with an event (`mod.rs`) is written once, over [`On`]. The
//! next runtime that speaks JSON on stdin and `hookSpecificOutput` on stdout is one more table.

mod claude;
mod codex;
mod gemini;

use serde_json::{Map, Value};

/// Which agent sent the event; its [`Dialect`] reads the payload and writes the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Runtime {
    /// Claude Code and the Claude Agent SDK.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
}

impl Runtime {
    /// The runtime's table.
    pub(crate) fn dialect(self) -> &'static Dialect {
        match self {
            Runtime::ClaudeCode => &claude::DIALECT,
            Runtime::Codex => &codex::DIALECT,
            Runtime::Gemini => &gemini::DIALECT,
        }
    }

    /// The runtime of a payload when `--runtime` does not say: Codex's events carry a turn id,
    /// Gemini CLI's are named as no other runtime names them (`BeforeAgent`, `AfterTool`, …),
    /// any other is Claude Code's.
    pub(crate) fn detect(fields: &Map<String, Value>) -> Runtime {
        let name = fields.get(FIELDS.event).and_then(Value::as_str).unwrap_or_default();
        let turn = codex::DIALECT.fields.turn_id.and_then(|key| fields.get(key));
        if turn.is_some_and(|id| !id.is_null()) {
            Runtime::Codex
        } else if gemini::DIALECT.on(name).is_some() && claude::DIALECT.on(name).is_none() {
            Runtime::Gemini
        } else {
            Runtime::ClaudeCode
        }
    }
}

/// What an event is to the hook, whatever the runtime calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum On {
    /// A session started, resumed, was cleared or compacted (its `source` says which).
    SessionStart,
    /// The user submitted a prompt: a turn begins.
    Prompt,
    /// A tool is about to run.
    BeforeTool,
    /// A tool ran.
    AfterTool,
    /// The conversation is about to be compacted.
    BeforeCompaction,
    /// The conversation was compacted.
    AfterCompaction,
    /// The agent finished its turn.
    Stop,
    /// A sub-agent started (`subagent.rs`).
    SubagentStart,
    /// A sub-agent finished.
    SubagentStop,
}

/// One runtime's hook dialect.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// The runtime's event names and what each is; a name not listed is answered with nothing.
    pub(crate) events: &'static [(&'static str, On)],
    /// The payload's field names.
    pub(crate) fields: Fields,
    /// How answers are written.
    pub(crate) output: Output,
    /// A hook that failed exits 0 (a line on stderr says why), for a runtime that takes other
    /// statuses as a refusal (Gemini CLI: any but 0 and 1 is a deny); else the CLI's own
    /// status (1, or 3 for a plugin), which Claude Code and Codex report and go on.
    pub(crate) failures_exit_zero: bool,
    /// `SessionStart` with source `resume` hands the scratchpad back, for a runtime that may
    /// send it apart from the prompt's event; Gemini CLI adds both to the same request, where
    /// the prompt's event brings the scratchpad anyway.
    pub(crate) context_on_resume: bool,
    /// The argument a call of the scratchpad's own MCP tools gets at `BeforeTool`, naming the
    /// hook's session and turn (`{"session_id", "turn_id"}`), for a runtime that tells its MCP
    /// servers nothing about the session (`scratchpad mcp --session-argument` reads it).
    pub(crate) session_argument: Option<&'static str>,
    /// The runtime's shell tool, whose command the hook rewrites so the whole output reaches
    /// it (`shell.rs`), for a runtime that cuts a command's output before its hooks see it and
    /// keeps no whole copy.
    pub(crate) shell: Option<Shell>,
    /// Where a built-in tool's result names the file holding its whole output, for a runtime
    /// that persists large outputs and hands its hooks and model a cut copy.
    pub(crate) persisted: Option<Persisted>,
    /// The argument a sub-agent's call of the scratchpad's own MCP tools gets at `BeforeTool`,
    /// naming the sub-agent's session and turn, for a runtime that tells its MCP server only
    /// the parent's session (`scratchpad mcp --agent-argument` reads it).
    pub(crate) agent_argument: Option<&'static str>,
}

/// A runtime's shell tool, as its hooks name it.
#[derive(Debug)]
pub(crate) struct Shell {
    /// The tool's name in hook payloads.
    pub(crate) tool: &'static str,
    /// The argument holding the command line (a string).
    pub(crate) command: &'static str,
}

/// Where a built-in tool's result object points at its whole output.
#[derive(Debug)]
pub(crate) struct Persisted {
    /// The key of the whole output's file path.
    pub(crate) path: &'static str,
    /// The key of the (cut) text the model would read.
    pub(crate) text: &'static str,
    /// The keys a replacement drops: with them the runtime would show its stub again.
    pub(crate) drop: &'static [&'static str],
}

impl Dialect {
    /// What the runtime's event `name` is, if the hook acts on it.
    pub(crate) fn on(&self, name: &str) -> Option<On> {
        self.events.iter().find(|(event, _)| *event == name).map(|(_, on)| *on)
    }

    /// Whether `tool` names an MCP server's tool in this runtime.
    pub(crate) fn is_mcp(&self, tool: &str) -> bool {
        tool.starts_with(self.output.mcp_prefix)
    }
}

/// The names of a payload's fields.
#[derive(Debug)]
pub(crate) struct Fields {
    /// The event's name.
    pub(crate) event: &'static str,
    /// The agent's session id (the host's session id).
    pub(crate) session_id: &'static str,
    /// The agent's own turn id, if it sends one.
    pub(crate) turn_id: Option<&'static str>,
    /// The transcript file.
    pub(crate) transcript_path: &'static str,
    /// The permission mode, if it sends one.
    pub(crate) permission_mode: Option<&'static str>,
    /// The working directory.
    pub(crate) cwd: &'static str,
    /// `SessionStart`'s reason (`startup`, `resume`, `clear`, `compact`).
    pub(crate) source: &'static str,
    /// The user's prompt.
    pub(crate) prompt: &'static str,
    /// The tool's name, arguments (an object) and result.
    pub(crate) tool_name: &'static str,
    pub(crate) tool_input: &'static str,
    pub(crate) tool_response: &'static str,
    /// Where the text the model reads is in a tool's result object, when it is not the result
    /// itself (Gemini CLI's `{llmContent, returnDisplay}`).
    pub(crate) response_text: Option<&'static str>,
    /// The tool call's id, if it sends one; without one a call is known by its tool and arguments.
    pub(crate) call_id: Option<&'static str>,
    /// The agent's last message at the end of its turn.
    pub(crate) last_message: &'static str,
    /// A sub-agent's id, on its own events and its tools' (the session id stays its parent's).
    pub(crate) agent_id: Option<&'static str>,
    /// A sub-agent's kind (`general-purpose`, `Explore`, …).
    pub(crate) agent_type: Option<&'static str>,
}

/// The fields Claude Code named and the others kept.
const FIELDS: Fields = Fields {
    event: "hook_event_name",
    session_id: "session_id",
    turn_id: Some("turn_id"),
    transcript_path: "transcript_path",
    permission_mode: Some("permission_mode"),
    cwd: "cwd",
    source: "source",
    prompt: "prompt",
    tool_name: "tool_name",
    tool_input: "tool_input",
    tool_response: "tool_response",
    response_text: None,
    call_id: Some("tool_use_id"),
    last_message: "last_assistant_message",
    agent_id: Some("agent_id"),
    agent_type: Some("agent_type"),
};

/// How an answer is written: every shape is `{"hookSpecificOutput": {"hookEventName": E, …}}`
/// plus, for some, fields beside it.
#[derive(Debug)]
pub(crate) struct Output {
    /// The events whose answer may carry `hookSpecificOutput`.
    pub(crate) specific: &'static [On],
    /// The key of context for the model, in `hookSpecificOutput`.
    pub(crate) context: &'static str,
    /// The key of a tool's rewritten arguments, in `hookSpecificOutput`.
    pub(crate) rewrite: &'static str,
    /// How a tool call is refused.
    pub(crate) deny: Deny,
    /// The key in `hookSpecificOutput` of an MCP tool's replaced result (content blocks); `None`:
    /// the runtime cannot replace one, the replacement is added as context.
    pub(crate) replace_mcp: Option<&'static str>,
    /// How a built-in tool's result is replaced.
    pub(crate) replace_builtin: ReplaceBuiltin,
    /// The decision a rewrite must carry to be taken, for a runtime that otherwise runs the
    /// original; `None`: a rewrite needs none.
    pub(crate) rewrite_decision: Option<RewriteDecision>,
    /// How the runtime's tool names start for an MCP server's tools.
    pub(crate) mcp_prefix: &'static str,
    /// The top-level key of a message for the user.
    pub(crate) notice: &'static str,
}

/// `hookSpecificOutput[key] = value` beside a rewrite, given only in the permission modes
/// where the runtime asks the user nothing: there it can neither skip an approval nor add one.
/// In another mode the rewrite goes without it (and the runtime runs the original).
#[derive(Debug)]
pub(crate) struct RewriteDecision {
    pub(crate) key: &'static str,
    pub(crate) value: &'static str,
    pub(crate) modes: &'static [&'static str],
}

impl Output {
    /// Whether a rewrite is taken in `permission_mode`.
    pub(crate) fn rewrites_in(&self, permission_mode: Option<&str>) -> bool {
        self.rewrite_decision.as_ref().is_none_or(|d| permission_mode.is_some_and(|m| d.modes.contains(&m)))
    }
}

/// How a built-in tool's result is replaced by what the hook answers.
#[derive(Debug)]
pub(crate) enum ReplaceBuiltin {
    /// It cannot be: the replacement goes beside the result, as context.
    Context,
    /// `hookSpecificOutput[key]` holds the result object in the tool's own output shape.
    InShape(&'static str),
    /// `{decision: value, reason: TEXT}` at the top level: the model reads TEXT instead.
    Block { decision: &'static str, value: &'static str, reason: &'static str },
}

/// How a tool call is refused: `decision` set to `value` and the reason in `reason`, in
/// `hookSpecificOutput` or at the top level.
#[derive(Debug)]
pub(crate) struct Deny {
    pub(crate) specific: bool,
    pub(crate) decision: &'static str,
    pub(crate) value: &'static str,
    pub(crate) reason: &'static str,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(value: Value) -> Map<String, Value> {
        let Value::Object(fields) = value else { unreachable!() };
        fields
    }

    #[test]
    fn a_payload_names_its_runtime() {
        let detect = |value| Runtime::detect(&fields(value));
        assert_eq!(detect(json!({"hook_event_name": "UserPromptSubmit", "session_id": "s"})), Runtime::ClaudeCode);
        assert_eq!(detect(json!({"hook_event_name": "Stop", "turn_id": "t"})), Runtime::Codex);
        assert_eq!(detect(json!({"hook_event_name": "BeforeAgent"})), Runtime::Gemini);
        assert_eq!(detect(json!({"hook_event_name": "AfterTool"})), Runtime::Gemini);
        // Both name it: Claude Code's, as before Gemini CLI was a runtime.
        assert_eq!(detect(json!({"hook_event_name": "SessionStart"})), Runtime::ClaudeCode);
    }

    #[test]
    fn every_table_names_each_event_once() {
        for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::Gemini] {
            let names: Vec<&str> = runtime.dialect().events.iter().map(|(name, _)| *name).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{runtime:?}: {names:?}");
        }
    }
}
