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

    struct Frozen;

    const ECHO: &str = "frozen.echo";

    fn echo_spec() -> ToolSpec {
        ToolSpec { name: ECHO.into(), description: "Answers its arguments.".into(), parameters: "{}".into() }
    }

    impl Permissions for Frozen {
        fn requested() -> Vec<String> {
            vec!["inject".into(), "storage".into()]
        }
    }

    impl Lifecycle for Frozen {
        fn load() -> Result<Manifest, String> {
            Ok(Manifest { tools: vec![echo_spec()] })
        }
    }

    impl Hooks for Frozen {
        fn before_session_create(_session: SessionInfo) -> SessionSetup {
            SessionSetup { injections: Vec::new(), inherit_parent_state: false }
        }
        fn before_query(_turn: Turn, _message: String) -> Vec<Injection> {
            let seen = storage::get("turns").map_or(0, |v| v.first().copied().unwrap_or(0)) + 1;
            let _ = storage::set("turns", &[seen]);
            vec![Injection { placement: Placement::PrependContext, text: format!("[frozen] turn {seen}") }]
        }
        fn after_response(_turn: Turn, _text: String) {}
        fn before_tool_call(_turn: Turn, _call: ToolCall) -> Result<Option<String>, ToolError> {
            Ok(None)
        }
        fn after_tool_result(_turn: Turn, _call: ToolCall, _observation: &Observation) -> Option<String> {
            None
        }
        fn before_compaction(_turn: Turn) -> Option<String> {
            None
        }
        fn after_compaction(_turn: Turn) {}
    }

    impl Tools for Frozen {
        fn list_tools(_turn: Turn) -> Vec<ToolSpec> {
            vec![echo_spec()]
        }
        fn call_tool(_turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
            match name.as_str() {
                ECHO => Ok(ToolOutput { content: arguments }),
                _ => Err(ToolError::UnknownTool(name)),
            }
        }
    }

    export!(Frozen);
}
