//! The first-party components embedded in the host, so the `scratchpad` binary works with no
//! files around it. Their bytes come prebuilt from the crate `scratchpad-components` (so this
//! crate builds with no wasm target); what the host adds is which of them load by default and
//! the powers each holds.

use crate::grants::{Grants, Power};

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
        "scratchpad" => {
            Grants::of(&[Guidance, Inject, CompactionWarnings, Storage, Checkpoints, Index, Tokens, Log, Config])
        }
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
    scratchpad_components::get(name).map(|component| component.wasm)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_prebuilt_component_is_embedded_and_holds_powers() {
        let prebuilt: Vec<&str> = scratchpad_components::ALL.iter().map(|c| c.name).collect();
        assert_eq!(prebuilt, super::EMBEDDED);
        for name in super::EMBEDDED {
            assert!(super::component(name).is_some(), "{name}");
            assert!(!super::grants(name).names().is_empty(), "{name} holds no power");
        }
    }
}
