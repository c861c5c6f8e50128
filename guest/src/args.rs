//! Reading a tool call's JSON arguments, with errors that name the field.
//!
//! Unknown fields are ignored (runtimes and models sometimes add some); missing or mistyped
//! fields the call needs are `invalid-arguments` errors naming the field and its type.

use scratchpad_plugin_sdk::ToolError;
use serde_json::{Map, Value};

/// A tool call's arguments object.
#[derive(Debug)]
pub struct Args(Map<String, Value>);

impl Args {
    /// Parses the arguments text. Blank text counts as `{}` (a call without arguments).
    pub fn parse(text: &str) -> Result<Args, ToolError> {
        if text.trim().is_empty() {
            return Ok(Args(Map::new()));
        }
        match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Ok(Args(map)),
            Ok(other) => Err(invalid(format!("arguments must be a JSON object, got {}", kind(&other)))),
            Err(e) => Err(invalid(format!("arguments are not valid JSON: {e}"))),
        }
    }

    /// Whether `field` is present (with any value).
    pub fn has(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// The raw value of `field`.
    pub fn value(&self, field: &str) -> Option<&Value> {
        self.0.get(field)
    }

    /// A required string field.
    pub fn string(&self, field: &str) -> Result<&str, ToolError> {
        match self.0.get(field) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(invalid(format!("`{field}` must be a string, got {}", kind(other)))),
            None => Err(invalid(format!("`{field}` is required (a string)"))),
        }
    }

    /// A required string field that must not be empty (or only whitespace).
    pub fn non_empty_string(&self, field: &str) -> Result<&str, ToolError> {
        let s = self.string(field)?;
        if s.trim().is_empty() {
            return Err(invalid(format!("`{field}` must be a non-empty string")));
        }
        Ok(s)
    }

    /// An optional string field.
    pub fn optional_string(&self, field: &str) -> Result<Option<&str>, ToolError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(field).map(Some),
        }
    }

    /// An optional boolean field with a default.
    pub fn bool_or(&self, field: &str, default: bool) -> Result<bool, ToolError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(invalid(format!("`{field}` must be true or false, got {}", kind(other)))),
        }
    }
}

/// An `invalid-arguments` error.
pub fn invalid(message: String) -> ToolError {
    ToolError::InvalidArguments(message)
}

/// The JSON type of a value, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(error: ToolError) -> String {
        match error {
            ToolError::InvalidArguments(m) => m,
            other => panic!("expected invalid-arguments, got {other:?}"),
        }
    }

    #[test]
    fn blank_arguments_are_an_empty_object() {
        assert!(!Args::parse("  ").unwrap().has("content"));
    }

    #[test]
    fn non_json_and_non_objects_are_invalid() {
        assert!(message(Args::parse("{oops").unwrap_err()).contains("not valid JSON"));
        assert!(message(Args::parse("[1]").unwrap_err()).contains("JSON object, got an array"));
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let args = Args::parse(r#"{"content": 3, "replace_all": "yes", "ref": " "}"#).unwrap();
        assert_eq!(message(args.string("content").unwrap_err()), "`content` must be a string, got a number");
        assert_eq!(message(args.string("find").unwrap_err()), "`find` is required (a string)");
        assert!(message(args.bool_or("replace_all", false).unwrap_err()).contains("`replace_all`"));
        assert!(message(args.non_empty_string("ref").unwrap_err()).contains("`ref` must be a non-empty"));
        assert_eq!(args.optional_string("mode").unwrap(), None);
        assert!(!args.bool_or("missing", false).unwrap());
    }
}
