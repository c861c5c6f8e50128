//! The session notepad's sandbox API: code that runs outside the model (agent-authored tools,
//! `run_sandbox_code`) reads, writes and appends a session's notepad through the host.
//!
//! ```no_run
//! # async fn demo(host: scratchpad_host::Host) -> scratchpad_host::Result<()> {
//! let notepad = host.notepad("s1");
//! notepad.append("- sheet 3 analysed: 2 anomalies").await?;
//! let text = notepad.read().await?;
//! # Ok(()) }
//! ```
//!
//! Every call goes through the scratchpad component's notepad tools (`read_notepad`,
//! `write_notepad`, `update_notepad` with `append`) with [`Host::call_tool`], so the same
//! budgets, truncation and refusals hold as for the model, the call is atomic, and a refusal
//! is an [`Error::Tool`] that changed nothing. The tools serve this API even when the
//! component does not offer them to the model (its `surfaces` config).
//!
//! **Which turn a call belongs to.** Agent-authored tools run inside a model turn, so by
//! default a call is attributed to the session's current turn (the turn the runtime last
//! started): it does not count as a turn of its own and leaves the component's turn-based
//! nudges alone. [`Notepad::in_turn`] names the turn explicitly, for runtimes that hold the
//! [`TurnContext`]. A session in which no turn has started yet gets a turn of its own, with
//! id [`SANDBOX_TURN_ID`]. The current turn is read just before the call: a runtime that may
//! start the session's next turn while an agent-authored tool still runs should use
//! [`Notepad::in_turn`], or the late call would count as a new turn.

use serde_json::{Value, json};

use crate::error::{Error, PluginFailure, Result};
use crate::host::Host;
use crate::types::TurnContext;

/// Turn id of a notepad call made before the session's first turn.
pub const SANDBOX_TURN_ID: &str = "sandbox-api";

const READ: &str = "read_notepad";
const WRITE: &str = "write_notepad";
const UPDATE: &str = "update_notepad";

/// One session's notepad, as code outside the model sees it. Made by [`Host::notepad`].
#[derive(Clone)]
pub struct Notepad<'h> {
    host: &'h Host,
    session: String,
    turn: Option<TurnContext>,
}

/// What a successful [`Notepad::write`] or [`Notepad::append`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotepadUsage {
    /// The notepad's size against its budget after the call, e.g. `notepad 812/4000 chars`.
    pub usage: String,
    /// Set when a write was longer than the budget and was truncated, e.g.
    /// `Notepad truncated to 4000 chars (original: 5210). Consider summarizing.`
    pub warning: Option<String>,
}

impl Host {
    /// The notepad of `session` for code outside the model (the session notepad's sandbox API). See
    /// [`Notepad`] for the turn its calls belong to.
    pub fn notepad(&self, session: &str) -> Notepad<'_> {
        Notepad { host: self, session: session.to_owned(), turn: None }
    }
}

impl Notepad<'_> {
    /// The same notepad with every call attributed to `turn` (whose session it then uses).
    pub fn in_turn(mut self, turn: &TurnContext) -> Self {
        self.session = turn.session_id.clone();
        self.turn = Some(turn.clone());
        self
    }

    /// The notepad's content; empty when nothing was written yet.
    pub async fn read(&self) -> Result<String> {
        let (plugin, output) = self.call(READ, json!({})).await?;
        match output.get("content") {
            Some(Value::String(content)) => Ok(content.clone()),
            _ => Err(contract(plugin, READ, "its output has no string `content`")),
        }
    }

    /// Replaces the whole notepad with `content` (`""` clears it). Content over the budget is
    /// truncated, as for the model, and [`NotepadUsage::warning`] says so.
    pub async fn write(&self, content: &str) -> Result<NotepadUsage> {
        let (plugin, output) = self.call(WRITE, json!({ "content": content })).await?;
        usage(plugin, WRITE, &output)
    }

    /// Adds `text` as a new line at the end of the notepad. An append that would take the
    /// notepad past its budget is refused with [`Error::Tool`] (kind `rejected`, the message
    /// gives the limit and the sizes) and changes nothing.
    pub async fn append(&self, text: &str) -> Result<NotepadUsage> {
        let (plugin, output) = self.call(UPDATE, json!({ "operation": "append", "content": text })).await?;
        usage(plugin, UPDATE, &output)
    }

    /// Runs one notepad tool; returns the plugin that ran it and its parsed JSON output.
    async fn call(&self, tool: &str, arguments: Value) -> Result<(String, Value)> {
        let turn = match &self.turn {
            Some(turn) => turn.clone(),
            None => {
                let record = self.host.session(&self.session).await?;
                let id = record.turn_id.unwrap_or_else(|| SANDBOX_TURN_ID.to_owned());
                TurnContext::new(self.session.clone(), id)
            }
        };
        let output = self.host.call_tool(&turn, tool, &arguments.to_string()).await?;
        match serde_json::from_str(&output.content) {
            Ok(value) => Ok((output.plugin, value)),
            Err(e) => Err(contract(output.plugin, tool, &format!("its output is not JSON ({e}): {}", output.content))),
        }
    }
}

/// The usage report of a write or append output.
fn usage(plugin: String, tool: &str, output: &Value) -> Result<NotepadUsage> {
    let Some(usage) = output.get("usage").and_then(Value::as_str) else {
        return Err(contract(plugin, tool, "its output has no string `usage`"));
    };
    let warning = output.get("warning").and_then(Value::as_str).map(str::to_owned);
    Ok(NotepadUsage { usage: usage.to_owned(), warning })
}

/// A notepad tool answered outside the shape the API relies on.
fn contract(plugin: String, tool: &str, message: &str) -> Error {
    Error::Plugin { plugin, hook: format!("tool {tool}"), failure: PluginFailure::Contract(message.to_owned()) }
}
