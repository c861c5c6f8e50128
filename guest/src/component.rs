//! The wit-bindgen glue: every export delegates to [`Scratchpad`] over the host's storage,
//! tokenizer, index and checkpoints, with the configuration read from the `config` import on
//! each call (each call runs in a fresh instance). Recall's warnings go to the host's log.

use scratchpad_plugin_sdk::{
    HostCheckpoints, HostIndex, HostStorage, HostTokenizer, Injection, Level, Manifest, Plugin, Power, Section,
    SessionInfo, SessionSetup, ToolError, ToolOutput, ToolSpec, Turn, export_plugin,
};

use crate::{Config, Scratchpad, SystemClock};

struct Component;

/// Runs `f` on the scratchpad of the current session, or returns `fallback` when the
/// configuration is invalid (the host refuses to load the component then, so this is only a
/// safety net).
fn with<R>(fallback: R, f: impl FnOnce(&mut Scratchpad<'_, HostStorage, HostTokenizer>) -> R) -> R {
    let config = match Config::from_json(&scratchpad_plugin_sdk::config()) {
        Ok(config) => config,
        Err(message) => {
            scratchpad_plugin_sdk::log(Level::Error, &message);
            return fallback;
        }
    };
    let (mut storage, mut index) = (HostStorage, HostIndex);
    let mut pad =
        Scratchpad::new(&mut storage, &HostTokenizer, &config).with_recall(&mut index, &HostCheckpoints, &SystemClock);
    let result = f(&mut pad);
    for warning in pad.take_warnings() {
        scratchpad_plugin_sdk::log(Level::Warn, &warning);
    }
    result
}

impl Plugin for Component {
    const POWERS: &'static [Power] = &[
        Power::Guidance,
        Power::Inject,
        Power::CompactionWarnings,
        Power::Storage,
        Power::Tokens,
        Power::Log,
        Power::Config,
        Power::Index,
        Power::Checkpoints,
    ];

    fn load() -> Result<Manifest, String> {
        Config::from_json(&scratchpad_plugin_sdk::config()).map(|config| crate::manifest(&config))
    }

    fn before_session_create(session: SessionInfo) -> SessionSetup {
        let fallback = SessionSetup { injections: Vec::new(), inherit_parent_state: false };
        with(fallback, |pad| pad.before_session_create(&session))
    }

    fn before_query(turn: Turn, message: String) -> Vec<Injection> {
        with(Vec::new(), |pad| pad.before_query(&turn, &message))
    }

    fn after_response(turn: Turn, text: String) {
        with((), |pad| pad.after_response(&turn, &text))
    }

    fn before_compaction(turn: Turn) -> Option<String> {
        with(None, |pad| pad.before_compaction(&turn))
    }

    fn after_compaction(turn: Turn) {
        with((), |pad| pad.after_compaction(&turn))
    }

    fn tools(turn: Turn) -> Vec<ToolSpec> {
        with(Vec::new(), |pad| pad.list_tools(&turn))
    }

    fn call_tool(turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let fallback = Err(ToolError::Failed("the scratchpad's configuration is invalid".into()));
        with(fallback, |pad| pad.call_tool(&turn, &name, &arguments))
    }

    fn describe() -> Vec<Section> {
        with(Vec::new(), |pad| pad.describe())
    }
}

export_plugin!(Component);
