//! [`Observations`]: the component's hooks and tool as plain Rust over [`Blobs`].
//!
//! Each method mirrors one export of the WIT world; this file routes and applies `enabled`.
//! The work lives in `offload.rs`, `read_tool.rs` and `references.rs`.

use scratchpad_plugin_sdk::{Manifest, ToolCall, ToolError, ToolOutput, ToolSpec, Turn};

use crate::config::Config;
use crate::schema::{self, READ_TOOL};
use crate::store::{Blobs, live_entries};
use crate::{offload, read_tool, references};

/// The manifest for `config`: `scratchpad_read` whenever the component is enabled (it is
/// offered to the model only while the turn has entries, see [`Observations::list_tools`]).
pub fn manifest(config: &Config) -> Manifest {
    Manifest { tools: if config.enabled { vec![schema::read_tool(config)] } else { Vec::new() } }
}

/// The component over one session's blob store, with its configuration.
pub struct Observations<'a, B: Blobs + ?Sized> {
    blobs: &'a mut B,
    config: &'a Config,
}

impl<'a, B: Blobs + ?Sized> Observations<'a, B> {
    /// The component over `blobs` (scoped by the host to this plugin and one session).
    pub fn new(blobs: &'a mut B, config: &'a Config) -> Self {
        Observations { blobs, config }
    }

    /// `load`: the manifest (see [`manifest`]).
    pub fn load(&self) -> Manifest {
        manifest(self.config)
    }

    /// `after-tool-result`: offloads an observation larger than `thresholdBytes` and returns
    /// the synthetic observation the model sees instead; `None` passes it through. The results
    /// of `scratchpad_read` itself always pass through: the model asked for exactly that text.
    pub fn after_tool_result(&mut self, turn: &Turn, call: &ToolCall, observation: &B::Content) -> Option<String> {
        if !self.config.enabled || call.name == READ_TOOL {
            return None;
        }
        offload::offload(self.blobs, self.config, turn, call, observation)
    }

    /// `before-tool-call`: resolves `{{stepN.field}}` references in the call's arguments.
    pub fn before_tool_call(&self, turn: &Turn, call: &ToolCall) -> Result<Option<String>, ToolError> {
        if !self.config.enabled {
            return Ok(None);
        }
        references::resolve(self.blobs, self.config, turn, call)
    }

    /// `list-tools`: `scratchpad_read` while the turn has entries that have not expired.
    pub fn list_tools(&self, turn: &Turn) -> Vec<ToolSpec> {
        if !self.config.enabled || live_entries(self.blobs, &turn.turn_id).is_empty() {
            return Vec::new();
        }
        vec![schema::read_tool(self.config)]
    }

    /// `call-tool`: runs `scratchpad_read` (callable whenever the component is enabled; with no
    /// entry in the turn every id is `not-found`).
    pub fn call_tool(&self, turn: &Turn, name: &str, arguments: &str) -> Result<ToolOutput, ToolError> {
        if !self.config.enabled {
            return Err(ToolError::UnknownTool(format!(
                "the observations component is disabled; there is no tool `{name}`"
            )));
        }
        if name != READ_TOOL {
            return Err(ToolError::UnknownTool(format!("no tool named `{name}`; this plugin offers {READ_TOOL}")));
        }
        read_tool::read(self.blobs, self.config, turn, arguments)
    }
}

#[cfg(test)]
mod tests;
