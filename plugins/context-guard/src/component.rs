//! The wit-bindgen glue: every export runs [`Guard`] over the host's imports, with the
//! configuration read from the `config` import on each call (each call is a fresh instance).

use scratchpad_plugin_sdk::{
    HostCheckpoints, HostMetadata, HostStorage, HostTokenizer, Injection, Level, Manifest, Plugin, Power, ToolCall,
    ToolError, Turn, export_plugin,
};

use crate::{Config, Guard, guard};

struct Component;

type HostGuard<'a> = Guard<'a, HostStorage, HostTokenizer, HostMetadata, HostCheckpoints>;

/// Runs `f` on the policy, logs what it reports, or returns `fallback` when the configuration
/// is invalid (the host refuses to load the component then, so this is only a safety net).
fn with<R>(fallback: R, f: impl FnOnce(&mut HostGuard<'_>) -> R) -> R {
    let config = match Config::from_json(&scratchpad_plugin_sdk::config()) {
        Ok(config) => config,
        Err(message) => {
            scratchpad_plugin_sdk::log(Level::Error, &message);
            return fallback;
        }
    };
    let (mut storage, mut metadata, mut checkpoints) = (HostStorage, HostMetadata, HostCheckpoints);
    let mut guard = Guard::new(&mut storage, &HostTokenizer, &mut metadata, &mut checkpoints, &config);
    let out = f(&mut guard);
    for warning in &guard.warnings {
        scratchpad_plugin_sdk::log(Level::Warn, warning);
    }
    out
}

impl Plugin for Component {
    const POWERS: &'static [Power] = &[
        Power::Inject,
        Power::CompactionWarnings,
        Power::ReadToolTraffic,
        Power::Storage,
        Power::Metadata,
        Power::Checkpoints,
        Power::Tokens,
        Power::Log,
        Power::Config,
    ];

    fn load() -> Result<Manifest, String> {
        guard::load(&Config::from_json(&scratchpad_plugin_sdk::config())?, &HostCheckpoints)
    }

    fn before_query(turn: Turn, message: String) -> Vec<Injection> {
        with(Vec::new(), |g| g.before_query(&turn, &message))
    }

    fn after_response(turn: Turn, text: String) {
        with((), |g| g.after_response(&turn, &text))
    }

    fn before_tool_call(turn: Turn, call: ToolCall) -> Result<Option<String>, ToolError> {
        with((), |g| g.before_tool_call(&turn, &call));
        Ok(None)
    }

    fn before_compaction(turn: Turn) -> Option<String> {
        with(None, |g| g.before_compaction(&turn))
    }

    fn after_compaction(turn: Turn) {
        with((), |g| g.after_compaction(&turn))
    }
}

export_plugin!(Component);
