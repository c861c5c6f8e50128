// The plugin the components of the frozen contracts share (`legacy`: 0.1.0, `frozen`: 0.1.1,
// `viewed`: 0.1.2),
// `include!`d in each one's `component` module after its own `wit_bindgen::generate!` and
// imports, so the same hooks and tool are compiled against each contract.
//
// `old_contract_plugin!(Type, "label")`: its `before-query` stores a counter (`storage`) and
// injects `[label] turn N` (`inject`); its tool `label.echo` answers its arguments.
macro_rules! old_contract_plugin {
    ($plugin:ident, $label:literal) => {
        struct $plugin;

        const ECHO: &str = concat!($label, ".echo");

        fn echo_spec() -> ToolSpec {
            ToolSpec { name: ECHO.into(), description: "Answers its arguments.".into(), parameters: "{}".into() }
        }

        impl Lifecycle for $plugin {
            fn load() -> Result<Manifest, String> {
                Ok(Manifest { tools: vec![echo_spec()] })
            }
        }

        impl Hooks for $plugin {
            fn before_session_create(_session: SessionInfo) -> SessionSetup {
                SessionSetup { injections: Vec::new(), inherit_parent_state: false }
            }
            fn before_query(_turn: Turn, _message: String) -> Vec<Injection> {
                let seen = storage::get("turns").map_or(0, |v| v.first().copied().unwrap_or(0)) + 1;
                let _ = storage::set("turns", &[seen]);
                let text = format!(concat!("[", $label, "] turn {}"), seen);
                vec![Injection { placement: Placement::PrependContext, text }]
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

        impl Tools for $plugin {
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

        export!($plugin);
    };
}
