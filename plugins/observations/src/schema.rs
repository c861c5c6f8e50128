//! The spec of `scratchpad_read`: the large-observation store's schema, extended with the `lines` and `grep`
//! modes, with descriptions that carry the configured figures.

use scratchpad_plugin_sdk::ToolSpec;
use serde_json::json;

use crate::config::Config;

/// The tool's name (the large-observation store).
pub const READ_TOOL: &str = "scratchpad_read";

/// The modes of `scratchpad_read`: the large-observation store's four, then the line modes of its v1.1 limits.
pub const MODES: &[&str] = &["full", "head", "tail", "range", "lines", "grep"];

/// The spec of `scratchpad_read` for `config`.
pub fn read_tool(config: &Config) -> ToolSpec {
    let description = format!(
        "Reads from the scratchpad an observation previously saved because it was large (its \
         observation showed a scratchpad_id, a summary and a _note). Text is indexed by \
         characters, binary content by bytes (returned as content_base64). Modes: head/tail \
         (first/last n characters, default {n}), range (start..end, end exclusive), lines \
         (start_line..end_line, 1-based, inclusive), grep (lines matching a regular expression, \
         with line numbers), full (everything; discouraged for large entries). One read returns \
         at most {max} bytes; longer results are cut with a note saying where to continue. Only \
         the current turn's entries can be read.",
        n = config.default_read_chars,
        max = config.max_read_bytes,
    );
    let parameters = json!({
        "type": "object",
        "required": ["scratchpad_id"],
        "properties": {
            "scratchpad_id": {
                "type": "string",
                "description": "Id obtained from the 'scratchpad_id' field of a previous observation."
            },
            "mode": { "type": "string", "enum": MODES, "default": "head" },
            "n": {
                "type": "integer",
                "minimum": 1,
                "description": format!(
                    "For mode head/tail: number of characters (bytes for binary) to read. Default {}.",
                    config.default_read_chars
                )
            },
            "start": {
                "type": "integer",
                "minimum": 0,
                "description": "For mode range: start index (characters; bytes for binary)."
            },
            "end": {
                "type": "integer",
                "minimum": 0,
                "description": "For mode range: end index (exclusive). Past the end: clamped, with a note."
            },
            "start_line": { "type": "integer", "minimum": 1, "description": "For mode lines: first line (1-based)." },
            "end_line": {
                "type": "integer",
                "minimum": 1,
                "description": "For mode lines: last line (inclusive). Past the last line: clamped, with a note."
            },
            "pattern": {
                "type": "string",
                "description": "For mode grep: a regular expression (Rust regex syntax; (?i) for case-insensitive) \
                                matched against each line."
            },
            "max_matches": {
                "type": "integer",
                "minimum": 1,
                "description": format!("For mode grep: most matching lines returned. Default {}.", config.grep_max_matches)
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": crate::grep::MAX_CONTEXT,
                "description": "For mode grep: lines of context before and after each match. Default 0."
            }
        }
    });
    ToolSpec { name: READ_TOOL.into(), description, parameters: parameters.to_string() }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_schema_has_the_four_modes_then_the_line_modes_and_configured_figures() {
        let config = Config::from_json(r#"{"defaultReadChars": 1234, "grepMaxMatches": 7}"#).unwrap();
        let spec = read_tool(&config);
        assert_eq!(spec.name, "scratchpad_read");
        let schema: Value = serde_json::from_str(&spec.parameters).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["scratchpad_id"]));
        assert_eq!(schema["properties"]["mode"]["enum"], json!(["full", "head", "tail", "range", "lines", "grep"]));
        assert_eq!(schema["properties"]["mode"]["default"], "head");
        assert!(schema["properties"]["n"]["description"].as_str().unwrap().contains("1234"));
        assert!(schema["properties"]["max_matches"]["description"].as_str().unwrap().contains('7'));
        assert!(spec.description.contains("default 1234"), "{}", spec.description);
    }
}
