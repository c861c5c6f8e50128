//! One hook event as a coding agent sends it on stdin, parsed through its runtime's table
//! (`dialect/`) into one shape whatever the runtime, so the mapping onto the host is written
//! once.

use serde_json::{Map, Value};

use super::dialect::On;
pub(crate) use super::dialect::Runtime;

/// The most stdin a hook reads: a `PostToolUse` carries the tool's whole result.
pub(crate) const MAX_INPUT_BYTES: u64 = 64 << 20;

/// A parsed hook event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) runtime: Runtime,
    /// The event's name as the runtime sent it (what its answer names, `hookEventName`).
    pub(crate) name: String,
    /// The agent's session id: the host's session id.
    pub(crate) session_id: String,
    /// The agent's own turn id, when it sends one (Codex).
    pub(crate) turn_id: Option<String>,
    /// The conversation transcript (JSONL), when given.
    pub(crate) transcript_path: Option<String>,
    /// `permission_mode`, when given (`default`, `bypassPermissions`, …).
    pub(crate) permission_mode: Option<String>,
    /// The agent's working directory (`cwd`), when given: it names the session's project.
    pub(crate) cwd: Option<String>,
    /// The sub-agent the event is of (its own events and its tools'), when the runtime says.
    pub(crate) agent_id: Option<String>,
    /// The sub-agent's kind, when the runtime says.
    pub(crate) agent_type: Option<String>,
    pub(crate) kind: Kind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// A session started: `startup`, `resume`, `clear` or `compact` (after a compaction).
    SessionStart { source: String },
    /// The user submitted `prompt`.
    UserPromptSubmit { prompt: String },
    /// A tool is about to run with `input` (a JSON object).
    PreToolUse { tool: String, input: Value, call_id: Option<String> },
    /// A tool ran and returned `response` (the part of it the model reads). A runtime that
    /// sends no call id gets one of the tool's name and arguments.
    PostToolUse { tool: String, input: Value, response: Value, call_id: Option<String> },
    /// The conversation is about to be compacted (`manual` or `auto`).
    PreCompact,
    /// The conversation was compacted.
    PostCompact,
    /// The agent finished its turn; its last message when the agent sends it.
    Stop { last_message: Option<String> },
    /// A sub-agent started ([`Event::agent_id`]).
    SubagentStart,
    /// A sub-agent finished, with its last message when the agent sends it.
    SubagentStop { last_message: Option<String> },
    /// An event this command does not act on (`Notification`, …): answered with nothing.
    Other { name: String },
}

impl Kind {
    /// The event's name in the hook protocol.
    pub(crate) fn name(&self) -> &str {
        match self {
            Kind::SessionStart { .. } => "SessionStart",
            Kind::UserPromptSubmit { .. } => "UserPromptSubmit",
            Kind::PreToolUse { .. } => "PreToolUse",
            Kind::PostToolUse { .. } => "PostToolUse",
            Kind::PreCompact => "PreCompact",
            Kind::PostCompact => "PostCompact",
            Kind::Stop { .. } => "Stop",
            Kind::SubagentStart => "SubagentStart",
            Kind::SubagentStop { .. } => "SubagentStop",
            Kind::Other { name } => name,
        }
    }
}

/// Parses `input` (one JSON object). `runtime` forces the runtime; without it, the payload
/// names it ([`Runtime::detect`]).
pub(crate) fn parse(input: &[u8], runtime: Option<Runtime>) -> Result<Event, String> {
    let value: Value = serde_json::from_slice(input).map_err(|e| format!("stdin is not one JSON object: {e}"))?;
    let Value::Object(fields) = value else {
        return Err("stdin is JSON but not an object".into());
    };
    from_fields(&fields, runtime)
}

/// The event a hook tool's arguments describe (`scratchpad mcp --hook-tool`): the hook input's
/// fields as Claude Code's `mcp_tool` hooks interpolate them (`"${tool_input}"`), every value a
/// string. An empty string is a field the event does not have (an empty `prompt` stays one);
/// `tool_input` is JSON text and `tool_response` JSON text or, for a tool that answered a
/// string, that string. A field sent with its JSON value instead is taken as it is.
pub(crate) fn from_hook_tool(arguments: Map<String, Value>) -> Result<Event, String> {
    let mut fields = Map::new();
    for (key, value) in arguments {
        let value = match (key.as_str(), value) {
            (key, Value::String(text)) if text.is_empty() && key != "prompt" => continue,
            ("tool_input", Value::String(text)) => {
                serde_json::from_str(&text).map_err(|e| format!("`tool_input` is not JSON text: {e}"))?
            }
            ("tool_response", Value::String(text)) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
            (_, value) => value,
        };
        fields.insert(key, value);
    }
    from_fields(&fields, None)
}

/// About how many bytes `value` takes as JSON: its strings' and keys' lengths, 8 for anything
/// else (a bound on an event that did not come as text).
pub(crate) fn size(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(size).sum(),
        Value::Object(fields) => fields.iter().map(|(key, value)| key.len() + size(value)).sum(),
        _ => 8,
    }
}

/// The event of a hook input's `fields`, read through its runtime's table.
fn from_fields(fields: &Map<String, Value>, runtime: Option<Runtime>) -> Result<Event, String> {
    let runtime = runtime.unwrap_or_else(|| Runtime::detect(fields));
    let dialect = runtime.dialect();
    let keys = &dialect.fields;
    let name = text(fields, keys.event)?;
    let session_id = text(fields, keys.session_id)?;
    if session_id.is_empty() {
        return Err(format!("`{}` is empty", keys.session_id));
    }
    let optional = |key: Option<&str>| key.map_or(Ok(None), |key| optional_text(fields, key));
    let tool = || text(fields, keys.tool_name);
    // The arguments the hook adds to its own tools' calls are never part of the event.
    let input = || {
        let mut input = object(fields, keys.tool_input)?;
        if let Value::Object(arguments) = &mut input {
            for argument in [dialect.session_argument, dialect.agent_argument].into_iter().flatten() {
                arguments.remove(argument);
            }
        }
        Ok::<_, String>(input)
    };
    let call_id = |tool: &str, input: &Value| match keys.call_id {
        Some(key) => optional_text(fields, key),
        None => Ok(Some(format!("{tool} {}", super::ledger::fnv1a_hex(&input.to_string())))),
    };
    let kind = match dialect.on(&name) {
        Some(On::SessionStart) => {
            Kind::SessionStart { source: optional_text(fields, keys.source)?.unwrap_or_else(|| "startup".into()) }
        }
        Some(On::Prompt) => Kind::UserPromptSubmit { prompt: text(fields, keys.prompt)? },
        Some(On::BeforeTool) => {
            let (tool, input) = (tool()?, input()?);
            let call_id = call_id(&tool, &input)?;
            Kind::PreToolUse { tool, input, call_id }
        }
        Some(On::AfterTool) => {
            let (tool, input) = (tool()?, input()?);
            let response = fields.get(keys.tool_response).ok_or(format!("`{}` is missing", keys.tool_response))?;
            let response = match (keys.response_text, response) {
                (Some(key), Value::Object(parts)) => {
                    parts.get(key).cloned().ok_or(format!("`{}.{key}` is missing", keys.tool_response))?
                }
                (Some(key), other) => {
                    return Err(format!("`{}` must be an object with `{key}`, not {other}", keys.tool_response));
                }
                (None, response) => response.clone(),
            };
            let call_id = call_id(&tool, &input)?;
            Kind::PostToolUse { tool, input, response, call_id }
        }
        Some(On::BeforeCompaction) => Kind::PreCompact,
        Some(On::AfterCompaction) => Kind::PostCompact,
        Some(On::Stop) => Kind::Stop { last_message: optional_text(fields, keys.last_message)? },
        Some(On::SubagentStart) => Kind::SubagentStart,
        Some(On::SubagentStop) => Kind::SubagentStop { last_message: optional_text(fields, keys.last_message)? },
        None => Kind::Other { name: name.clone() },
    };
    Ok(Event {
        runtime,
        name,
        session_id,
        turn_id: optional(keys.turn_id)?,
        transcript_path: optional_text(fields, keys.transcript_path)?,
        permission_mode: optional(keys.permission_mode)?,
        cwd: optional_text(fields, keys.cwd)?,
        agent_id: optional(keys.agent_id)?,
        agent_type: optional(keys.agent_type)?,
        kind,
    })
}

fn text(fields: &Map<String, Value>, key: &str) -> Result<String, String> {
    optional_text(fields, key)?.ok_or_else(|| format!("`{key}` is missing"))
}

fn optional_text(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

fn object(fields: &Map<String, Value>, key: &str) -> Result<Value, String> {
    match fields.get(key) {
        Some(value @ Value::Object(_)) => Ok(value.clone()),
        Some(other) => Err(format!("`{key}` must be an object, not {other}")),
        None => Err(format!("`{key}` is missing")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_events_parse_and_codexs_are_told_by_their_turn_id() {
        let event = parse(
            br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/","hook_event_name":"PreToolUse",
                "tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}"#,
            None,
        )
        .unwrap();
        assert_eq!(event.runtime, Runtime::ClaudeCode);
        assert_eq!(
            event.kind,
            Kind::PreToolUse {
                tool: "Bash".into(),
                input: serde_json::json!({"command":"ls"}),
                call_id: Some("toolu_1".into())
            }
        );
        let codex =
            parse(br#"{"session_id":"s","turn_id":"t1","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#, None)
                .unwrap();
        assert_eq!((codex.runtime, codex.turn_id.as_deref()), (Runtime::Codex, Some("t1")));
    }

    #[test]
    fn bad_input_names_what_is_wrong() {
        let cases: [(&[u8], &str); 6] = [
            (b"{\"session_id\":", "not one JSON object"),
            (b"[1]", "not an object"),
            (br#"{"hook_event_name":"Stop"}"#, "`session_id` is missing"),
            (br#"{"session_id":"s","hook_event_name":"UserPromptSubmit"}"#, "`prompt` is missing"),
            (
                br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"x","tool_input":"ls"}"#,
                "`tool_input` must be an object",
            ),
            (br#"{"session_id":7,"hook_event_name":"Stop"}"#, "`session_id` must be a string"),
        ];
        for (input, expected) in cases {
            let error = parse(input, None).unwrap_err();
            assert!(error.contains(expected), "{error} vs {expected}");
        }
    }

    #[test]
    fn gemini_clis_events_parse_through_its_table() {
        use serde_json::json;
        let common = r#""session_id":"g","transcript_path":"/t.json","cwd":"/w","timestamp":"2026-11-28T08:00:00Z""#;
        let parse_gemini = |rest: &str| parse(format!("{{{common},{rest}}}").as_bytes(), None).unwrap();
        let prompt = parse_gemini(r#""hook_event_name":"BeforeAgent","prompt":"hi""#);
        assert_eq!((prompt.runtime, prompt.name.as_str()), (Runtime::Gemini, "BeforeAgent"));
        assert_eq!(prompt.kind, Kind::UserPromptSubmit { prompt: "hi".into() });
        assert_eq!(prompt.cwd.as_deref(), Some("/w"));
        // The hook's own argument is never part of the event, and a call is known by its tool
        // and arguments, before and after it runs.
        let before = parse_gemini(
            r#""hook_event_name":"BeforeTool","tool_name":"mcp_scratchpad_session_scratchpad",
               "tool_input":{"action":"set_plan","scratchpad_turn":{"session_id":"x","turn_id":"y"}}"#,
        );
        let after = parse_gemini(
            r#""hook_event_name":"AfterTool","tool_name":"mcp_scratchpad_session_scratchpad",
               "tool_input":{"action":"set_plan","scratchpad_turn":{"session_id":"g","turn_id":"t"}},
               "tool_response":{"llmContent":[{"text":"Plan set."}],"returnDisplay":"Plan set."}"#,
        );
        let (Kind::PreToolUse { input, call_id: before_id, .. }, Kind::PostToolUse { response, call_id, .. }) =
            (before.kind, after.kind)
        else {
            panic!("a tool call's two events")
        };
        assert_eq!(input, json!({"action": "set_plan"}));
        assert_eq!(response, json!([{"text": "Plan set."}]), "the part the model reads");
        assert!(before_id.is_some() && before_id == call_id, "{before_id:?} {call_id:?}");
        let stop = parse_gemini(r#""hook_event_name":"AfterAgent","prompt":"hi","prompt_response":"Done.""#);
        assert_eq!(stop.kind, Kind::Stop { last_message: Some("Done.".into()) });
        // Not acted on: 0.61.0 fires it on every turn, before deciding whether to compress.
        let compress = parse_gemini(r#""hook_event_name":"PreCompress","trigger":"auto""#);
        assert_eq!(compress.kind, Kind::Other { name: "PreCompress".into() });
        // Claude Code's names mean nothing to Gemini CLI's table.
        let forced =
            parse(br#"{"session_id":"g","hook_event_name":"UserPromptSubmit","prompt":"x"}"#, Some(Runtime::Gemini));
        assert_eq!(forced.unwrap().kind, Kind::Other { name: "UserPromptSubmit".into() });
    }

    #[test]
    fn a_sub_agents_events_carry_its_id_and_its_calls_lose_the_agent_argument() {
        let start = parse(
            br#"{"session_id":"p","hook_event_name":"SubagentStart","agent_id":"a1","agent_type":"Explore"}"#,
            None,
        )
        .unwrap();
        assert_eq!(
            (start.kind, start.agent_id.as_deref(), start.agent_type.as_deref()),
            (Kind::SubagentStart, Some("a1"), Some("Explore"))
        );
        let stop = parse(
            br#"{"session_id":"p","hook_event_name":"SubagentStop","agent_id":"a1","last_assistant_message":"done"}"#,
            None,
        )
        .unwrap();
        assert_eq!(stop.kind, Kind::SubagentStop { last_message: Some("done".into()) });
        let call = parse(
            br#"{"session_id":"p","hook_event_name":"PreToolUse","agent_id":"a1","tool_name":"t",
                "tool_input":{"action":"x","scratchpad_turn":{"session_id":"other","turn_id":"t"}}}"#,
            None,
        )
        .unwrap();
        assert!(
            matches!(call.kind, Kind::PreToolUse { ref input, .. } if input == &serde_json::json!({"action": "x"}))
        );
        // Codex's sub-agents name themselves the same way, beside their own turn id.
        let codex = parse(
            br#"{"session_id":"p","turn_id":"t","hook_event_name":"UserPromptSubmit","prompt":"x","agent_id":"a1"}"#,
            None,
        )
        .unwrap();
        assert_eq!((codex.runtime, codex.agent_id.as_deref()), (Runtime::Codex, Some("a1")));
    }

    #[test]
    fn an_unknown_event_is_kept_by_name() {
        let event = parse(br#"{"session_id":"s","hook_event_name":"Notification","message":"m"}"#, None).unwrap();
        assert_eq!(event.kind, Kind::Other { name: "Notification".into() });
    }

    /// What Claude Code 2.1.331's `mcp_tool` hooks send for `"${field}"`, measured: strings,
    /// objects as JSON text, an absent field as "".
    fn interpolated(fields: Value) -> Map<String, Value> {
        let Value::Object(fields) = fields else { unreachable!() };
        fields
    }

    #[test]
    fn a_hook_tools_interpolated_fields_are_the_event() {
        use serde_json::json;
        let post = from_hook_tool(interpolated(json!({
            "hook_event_name": "PostToolUse", "session_id": "s", "transcript_path": "/t.jsonl",
            "tool_name": "mcp__logs__fetch_log", "tool_input": "{\"q\":{\"nested\":[1,\"two\"]}}",
            "tool_use_id": "toolu_1", "tool_response": "[{\"type\":\"text\",\"text\":\"log\"}]",
            "prompt": "", "source": "",
        })))
        .unwrap();
        assert_eq!(post.runtime, Runtime::ClaudeCode);
        assert_eq!(post.transcript_path.as_deref(), Some("/t.jsonl"));
        assert_eq!(
            post.kind,
            Kind::PostToolUse {
                tool: "mcp__logs__fetch_log".into(),
                input: json!({"q": {"nested": [1, "two"]}}),
                response: json!([{"type": "text", "text": "log"}]),
                call_id: Some("toolu_1".into()),
            }
        );
        // A tool that answered plain text: the text itself.
        let plain = from_hook_tool(interpolated(json!({
            "hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "T", "tool_input": "{}",
            "tool_response": "plain words",
        })))
        .unwrap();
        assert!(matches!(plain.kind, Kind::PostToolUse { response: Value::String(ref t), .. } if t == "plain words"));
        let stop = from_hook_tool(interpolated(json!({
            "hook_event_name": "Stop", "session_id": "s", "last_assistant_message": "", "transcript_path": "",
        })))
        .unwrap();
        assert_eq!((stop.kind, stop.transcript_path), (Kind::Stop { last_message: None }, None));
        let empty = from_hook_tool(interpolated(json!({
            "hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "",
        })))
        .unwrap();
        assert_eq!(empty.kind, Kind::UserPromptSubmit { prompt: String::new() });
        // Values sent as JSON values are taken as they are.
        let typed = from_hook_tool(interpolated(json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"},
        })))
        .unwrap();
        assert!(matches!(typed.kind, Kind::PreToolUse { ref input, .. } if input == &json!({"command": "ls"})));
    }

    #[test]
    fn a_hook_tools_bad_fields_name_what_is_wrong() {
        use serde_json::json;
        let cases = [
            (json!({"hook_event_name": "Stop", "session_id": ""}), "`session_id` is missing"),
            (
                json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "T", "tool_input": "{"}),
                "not JSON text",
            ),
            (
                json!({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "T", "tool_input": "[1]"}),
                "must be an object",
            ),
            (json!({"session_id": "s"}), "`hook_event_name` is missing"),
        ];
        for (fields, expected) in cases {
            let error = from_hook_tool(interpolated(fields)).unwrap_err();
            assert!(error.contains(expected), "{error} vs {expected}");
        }
    }
}
