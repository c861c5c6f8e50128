//! A plugin built against the frozen 0.1.0 contract (`wit/since_v0.1.0`), before plugins could
//! ask for powers: it has no `permissions` export, so a host holds it to exactly what its
//! configuration grants. Its `before-query` stores a counter (`storage`) and injects
//! `[legacy] turn N` (`inject`); its tool `legacy.echo` answers its arguments and needs nothing.
//! Only the wasm build has content; the native build (for `cargo clippy --workspace`) is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        path: "../../../wit/since_v0.1.0",
        world: "scratchpad:plugin/plugin@0.1.0",
    });

    use exports::scratchpad::plugin::hooks::Guest as Hooks;
    use exports::scratchpad::plugin::lifecycle::{Guest as Lifecycle, Manifest};
    use exports::scratchpad::plugin::tools::Guest as Tools;
    use scratchpad::plugin::observation::Observation;
    use scratchpad::plugin::storage;
    use scratchpad::plugin::types::{
        Injection, Placement, SessionInfo, SessionSetup, ToolCall, ToolError, ToolOutput, ToolSpec, Turn,
    };

    include!("../../old_contract_plugin.rs");
    old_contract_plugin!(Legacy, "legacy");
}
