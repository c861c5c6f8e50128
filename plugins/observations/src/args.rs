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

    /// A required, non-empty string field.
    pub fn string(&self, field: &str) -> Result<&str, ToolError> {
        match self.0.get(field) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            Some(Value::String(_)) => Err(invalid(format!("`{field}` must be a non-empty string"))),
            Some(other) => Err(invalid(format!("`{field}` must be a string, got {}", kind(other)))),
            None => Err(invalid(format!("`{field}` is required (a string)"))),
        }
    }

    /// An optional string field (`null` counts as absent).
    pub fn optional_string(&self, field: &str) -> Result<Option<&str>, ToolError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(invalid(format!("`{field}` must be a string, got {}", kind(other)))),
        }
    }

    /// An optional integer field of at least `min` (`null` counts as absent).
    pub fn integer(&self, field: &str, min: u64) -> Result<Option<u64>, ToolError> {
        let number = match self.0.get(field) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(number)) => number,
            Some(other) => return Err(invalid(format!("`{field}` must be an integer, got {}", kind(other)))),
        };
        match (number.as_u64(), number.as_i64()) {
            (Some(n), _) if n >= min => Ok(Some(n)),
            (Some(n), _) => Err(invalid(format!("`{field}` must be at least {min}, got {n}"))),
            (None, Some(n)) => Err(invalid(format!("`{field}` must not be negative, got {n}"))),
            (None, None) => Err(invalid(format!("`{field}` must be an integer, got {number}"))),
        }
    }

    /// A required integer field of at least `min`; `purpose` says when it is required.
    pub fn required_integer(&self, field: &str, min: u64, purpose: &str) -> Result<u64, ToolError> {
        self.integer(field, min)?.ok_or_else(|| invalid(format!("`{field}` is required {purpose} (an integer)")))
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
    use crate::testing::message;

    #[test]
    fn blank_arguments_are_an_empty_object() {
        assert!(Args::parse("  ").unwrap().optional_string("mode").unwrap().is_none());
    }

    #[test]
    fn non_json_and_non_objects_are_invalid() {
        assert!(message(&Args::parse("{oops").unwrap_err()).contains("not valid JSON"));
        assert!(message(&Args::parse("[1]").unwrap_err()).contains("JSON object, got an array"));
    }

    #[test]
    fn integers_are_checked_for_type_sign_and_minimum() {
        let args = Args::parse(r#"{"a": "5", "b": -3, "c": 2.5, "d": 0, "e": 7, "f": null}"#).unwrap();
        assert_eq!(message(&args.integer("a", 0).unwrap_err()), "`a` must be an integer, got a string");
        assert_eq!(message(&args.integer("b", 0).unwrap_err()), "`b` must not be negative, got -3");
        assert_eq!(message(&args.integer("c", 0).unwrap_err()), "`c` must be an integer, got 2.5");
        assert_eq!(message(&args.integer("d", 1).unwrap_err()), "`d` must be at least 1, got 0");
        assert_eq!(args.integer("e", 1).unwrap(), Some(7));
        assert_eq!(args.integer("f", 1).unwrap(), None);
        let missing = args.required_integer("start", 0, "for mode range").unwrap_err();
        assert_eq!(message(&missing), "`start` is required for mode range (an integer)");
    }

    #[test]
    fn strings_are_checked_for_presence_type_and_emptiness() {
        let args = Args::parse(r#"{"id": 3, "empty": "", "mode": 1}"#).unwrap();
        assert_eq!(message(&args.string("id").unwrap_err()), "`id` must be a string, got a number");
        assert_eq!(message(&args.string("empty").unwrap_err()), "`empty` must be a non-empty string");
        assert_eq!(message(&args.string("other").unwrap_err()), "`other` is required (a string)");
        assert_eq!(message(&args.optional_string("mode").unwrap_err()), "`mode` must be a string, got a number");
    }
}
