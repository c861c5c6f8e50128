//! The wit-bindgen glue: the WIT `observation` resource is a [`Source`], the `blobs` import is
//! [`Blobs`], and every export delegates to [`Observations`] with the configuration read from
//! the `config` import on each call (each call runs in a fresh instance).

use scratchpad_plugin_sdk::{
    BlobError, ContentKind, Entry, Level, Manifest, NewEntry, Observation, Plugin, Power, ToolCall, ToolError,
    ToolOutput, ToolSpec, Turn, blobs, export_plugin,
};

use crate::{Blobs, Config, Observations, Source};

impl Source for Observation {
    fn size(&self) -> u64 {
        Observation::size(self)
    }
    fn kind(&self) -> ContentKind {
        Observation::kind(self)
    }
    fn size_chars(&self) -> u64 {
        Observation::size_chars(self)
    }
    fn read(&self, offset: u64, len: u32) -> Vec<u8> {
        Observation::read(self, offset, len)
    }
    fn sha256(&self) -> String {
        Observation::sha256(self)
    }
    fn metadata(&self) -> String {
        Observation::metadata(self)
    }
}

/// [`Blobs`] through the host's `blobs` import.
struct HostBlobs;

impl Blobs for HostBlobs {
    type Content = Observation;

    fn store(&mut self, content: &Observation, entry: NewEntry) -> Result<String, BlobError> {
        blobs::store(content, &entry)
    }
    fn stat(&self, id: &str) -> Option<Entry> {
        blobs::stat(id)
    }
    fn list_turn(&self, turn_id: &str) -> Vec<Entry> {
        blobs::list_turn(turn_id)
    }
    fn read(&self, id: &str, offset: u64, len: u32) -> Result<Vec<u8>, BlobError> {
        blobs::read(id, offset, len)
    }
}

struct Component;

/// Runs `f` on the component over the host's blob store, or returns `fallback` when the
/// configuration is invalid (the host refuses to load the component then, so this is only a
/// safety net).
fn with<R>(fallback: R, f: impl FnOnce(&mut Observations<'_, HostBlobs>) -> R) -> R {
    match Config::from_json(&scratchpad_plugin_sdk::config()) {
        Ok(config) => f(&mut Observations::new(&mut HostBlobs, &config)),
        Err(message) => {
            scratchpad_plugin_sdk::log(Level::Error, &message);
            fallback
        }
    }
}

impl Plugin for Component {
    const POWERS: &'static [Power] = &[
        Power::ReadToolTraffic,
        Power::RewriteToolCalls,
        Power::BlockToolCalls,
        Power::ReplaceToolResults,
        Power::Blobs,
        Power::Log,
        Power::Config,
    ];

    fn load() -> Result<Manifest, String> {
        Config::from_json(&scratchpad_plugin_sdk::config()).map(|config| crate::manifest(&config))
    }

    fn after_tool_result(turn: Turn, call: ToolCall, observation: &Observation) -> Option<String> {
        with(None, |component| component.after_tool_result(&turn, &call, observation))
    }

    fn before_tool_call(turn: Turn, call: ToolCall) -> Result<Option<String>, ToolError> {
        with(Ok(None), |component| component.before_tool_call(&turn, &call))
    }

    fn tools(turn: Turn) -> Vec<ToolSpec> {
        with(Vec::new(), |component| component.list_tools(&turn))
    }

    fn call_tool(turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let fallback = Err(ToolError::Failed("the observations component's configuration is invalid".into()));
        with(fallback, |component| component.call_tool(&turn, &name, &arguments))
    }
}

export_plugin!(Component);
