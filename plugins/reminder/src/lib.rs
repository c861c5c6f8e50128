//! A complete third-party plugin in ~30 lines: a `reminder.set` tool and a `before-query` hook
//! that shows the reminder before every message. It is the README's plugin-authoring example.

use scratchpad_plugin_sdk::{
    HostStorage, Injection, Manifest, Placement, Plugin, Power, Storage, ToolError, ToolOutput, ToolSpec, Turn,
    export_plugin,
};

struct Reminder;

impl Plugin for Reminder {
    const POWERS: &'static [Power] = &[Power::Inject, Power::Storage];

    fn load() -> Result<Manifest, String> {
        let parameters = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
        let description = "Set a reminder shown before every message.";
        Ok(Manifest {
            tools: vec![ToolSpec {
                name: "reminder.set".into(),
                description: description.into(),
                parameters: parameters.into(),
            }],
        })
    }

    fn call_tool(_turn: Turn, _name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let args: serde_json::Value =
            serde_json::from_str(&arguments).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let text = args["text"].as_str().ok_or(ToolError::InvalidArguments("`text` must be a string".into()))?;
        HostStorage.set("reminder", text.as_bytes()).map_err(|e| ToolError::Failed(format!("{e:?}")))?;
        Ok(ToolOutput { content: "Reminder set.".into() })
    }

    fn before_query(_turn: Turn, _message: String) -> Vec<Injection> {
        let reminder = HostStorage.get("reminder");
        let text = |r: Vec<u8>| format!("[Reminder] {}", String::from_utf8_lossy(&r));
        reminder.map(|r| Injection { placement: Placement::PrependContext, text: text(r) }).into_iter().collect()
    }
}

export_plugin!(Reminder);
