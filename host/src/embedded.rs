//! The first-party components built into the host by `build.rs`, so the `scratchpad` binary
//! works with no files around it.

use crate::grants::{Grants, Power};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/components.rs"));
}

/// The embedded components loaded when a configuration names no plugins, in call order.
pub const DEFAULT_PLUGINS: &[&str] = &["scratchpad", "observations"];

/// Every embedded component: the defaults, and the ones a configuration loads by name
/// (`[[plugin]] name = "context-guard"` with no `path`).
pub const EMBEDDED: &[&str] = &["scratchpad", "observations", "context-guard"];

/// The powers each embedded component holds by default: exactly what it asks for, reviewed
/// with its code (a first-party component asking for more is refused at load, so a change to
/// either shows up here). Any other name gets none. `docs/security.md` has the table.
pub fn grants(name: &str) -> Grants {
    use Power::*;
    match name {
        "scratchpad" => Grants::of(&[Guidance, Inject, CompactionWarnings, Storage, Tokens, Log, Config]),
        "observations" => {
            Grants::of(&[ReadToolTraffic, RewriteToolCalls, BlockToolCalls, ReplaceToolResults, Blobs, Log, Config])
        }
        "context-guard" => Grants::of(&[
            Inject,
            CompactionWarnings,
            ReadToolTraffic,
            Storage,
            Metadata,
            Checkpoints,
            Tokens,
            Log,
            Config,
        ]),
        _ => Grants::NONE,
    }
}

/// The bytes of the embedded component `name`, if there is one.
pub fn component(name: &str) -> Option<&'static [u8]> {
    match name {
        "scratchpad" => Some(generated::SCRATCHPAD_WASM),
        "observations" => Some(generated::OBSERVATIONS_WASM),
        "context-guard" => Some(generated::CONTEXT_GUARD_WASM),
        _ => None,
    }
}

/// The path of the embedded component `name` as built on this machine (for tests and tools
/// that want a file).
pub fn component_path(name: &str) -> Option<&'static str> {
    match name {
        "scratchpad" => Some(generated::SCRATCHPAD_PATH),
        "observations" => Some(generated::OBSERVATIONS_PATH),
        "context-guard" => Some(generated::CONTEXT_GUARD_PATH),
        _ => None,
    }
}
