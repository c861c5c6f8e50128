//! A plugin built against the frozen 0.1.2 contract (`wit/since_v0.1.2`), before the project's
//! search index: it exports a view and imports no `index`. It asks for `inject` and `storage`;
//! its `before-query` stores a counter and injects `[viewed] turn N`; its tool `viewed.echo`
//! answers its arguments; its view is one section `turns` holding the counter.
//! Only the wasm build has content; the native build (for `cargo clippy --workspace`) is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        path: "../../../wit/since_v0.1.2",
        world: "scratchpad:plugin/plugin@0.1.2",
    });

    use exports::scratchpad::plugin::hooks::Guest as Hooks;
    use exports::scratchpad::plugin::lifecycle::{Guest as Lifecycle, Manifest};
    use exports::scratchpad::plugin::permissions::Guest as Permissions;
    use exports::scratchpad::plugin::tools::Guest as Tools;
    use exports::scratchpad::plugin::view::{Content, Guest as View, Section};
    use scratchpad::plugin::observation::Observation;
    use scratchpad::plugin::storage;
    use scratchpad::plugin::types::{
        Injection, Placement, SessionInfo, SessionSetup, ToolCall, ToolError, ToolOutput, ToolSpec, Turn,
    };

    include!("../../old_contract_plugin.rs");
    old_contract_plugin!(Viewed, "viewed");

    impl Permissions for Viewed {
        fn requested() -> Vec<String> {
            vec!["inject".into(), "storage".into()]
        }
    }

    impl View for Viewed {
        fn describe() -> Vec<Section> {
            let turns = storage::get("turns").map_or(0, |v| v.first().copied().unwrap_or(0)).to_string();
            vec![Section { title: "Turns".into(), key: "turns".into(), content: Content::Text(turns), usage: None }]
        }
    }
}
