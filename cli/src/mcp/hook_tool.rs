//! The hook tool of `scratchpad mcp --hook-tool`: a coding agent's hook event answered by the
//! server that is already running for the session, in-process, instead of by a `scratchpad
//! hook` process per event. Claude Code's `mcp_tool` hooks call it with the event's fields as
//! its arguments (`"${tool_input}"`: strings, see `hook::event::from_hook_tool`), and read its
//! result's text as a hook's JSON output: what `scratchpad hook` prints for the same event.
//!
//! It is not in `tools/list`, so the model is never offered it. It is served on stdio only,
//! where the client is the agent that started the server and may act on any of its sessions,
//! as its hook commands may.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::hook::{self, Answering, DEFAULT_CONTEXT_WINDOW, event};
use scratchpad_host::{Host, Subagents, ToolNames};

/// The tool's name (`"tool": "hook"` in a hook's configuration).
pub(crate) const NAME: &str = "hook";

/// How the tool answers: under the names the client shows the tools, and without the session
/// guidance, which is this server's instructions (the agent has it already).
pub(crate) fn answering(names: ToolNames, subagents: Subagents) -> Answering {
    Answering { names, context_window: DEFAULT_CONTEXT_WINDOW, guidance: false, subagents }
}

/// Answers the event `arguments` describe with `host`, the server's. A bad event or a failure
/// is an error result (the agent reports it and goes on), never a protocol error; nothing is
/// stored for a bad event.
pub(crate) async fn call(host: &Host, answering: &Answering, arguments: Map<String, Value>) -> CallToolResult {
    let size: usize = arguments.iter().map(|(key, value)| key.len() + event::size(value)).sum();
    if size as u64 > event::MAX_INPUT_BYTES {
        return failed(format!("bad hook event: over {} MiB", event::MAX_INPUT_BYTES >> 20));
    }
    let event = match event::from_hook_tool(arguments) {
        Ok(event) => event,
        Err(error) => return failed(format!("bad hook event: {error}")),
    };
    let (name, session) = (event.kind.name().to_owned(), event.session_id.clone());
    let fallback = event.clone();
    // The agent's user waits on the hook: it waits for another process's write lock at most
    // the turn's bound, then the turn goes on without it.
    let answered =
        scratchpad_host::waiting_at_most(host.turn_wait(), hook::answer(host.clone(), answering, event, None)).await;
    match answered {
        Ok(Some(json)) => CallToolResult::success(vec![ContentBlock::text(json)]),
        Ok(None) => CallToolResult::success(Vec::new()),
        // A sub-agent the hook cannot place: nothing to say, as `scratchpad hook` exits 0.
        Err(error) if error.downcast_ref::<hook::Unplaced>().is_some() => {
            tracing::warn!(%session, "hook event {name}: {error:#}");
            CallToolResult::success(Vec::new())
        }
        Err(error) => {
            tracing::warn!(%session, "hook event {name}: {error:#}");
            match hook::storage_fault(&error, &fallback) {
                Some(json) => CallToolResult::success(vec![ContentBlock::text(json)]),
                None => failed(format!("{error:#}")),
            }
        }
    }
}

fn failed(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
