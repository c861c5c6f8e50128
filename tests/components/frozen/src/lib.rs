//! A plugin built against the frozen 0.1.1 contract (`wit/since_v0.1.1`), before plugins could
//! describe their state: it has no `view` export, so a host shows no view of it. It asks for
//! `inject` and `storage`; its `before-query` stores a counter and injects `[frozen] turn N`;
//! its tool `frozen.echo` answers its arguments.
//! Only the wasm build has content; the native build (for `cargo clippy --workspace`) is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        path: "../../../wit/since_v0.1.1",
        world: "scratchpad:plugin/plugin@0.1.1",
    });

    use exports::scratchpad::plugin::hooks::Guest as Hooks;
    use exports::scratchpad::plugin::lifecycle::{Guest as Lifecycle, Manifest};
    use exports::scratchpad::plugin::permissions::Guest as Permissions;
    use exports::scratchpad::plugin::tools::Guest as Tools;
    use scratchpad::plugin::observation::Observation;
    use scratchpad::plugin::storage;
    use scratchpad::plugin::types::{
        Injection, Placement, SessionInfo, SessionSetup, ToolCall, ToolError, ToolOutput, ToolSpec, Turn,
    };

    include!("../../old_contract_plugin.rs");
    old_contract_plugin!(Frozen, "frozen");

    impl Permissions for Frozen {
        fn requested() -> Vec<String> {
            vec!["inject".into(), "storage".into()]
        }
    }
}
