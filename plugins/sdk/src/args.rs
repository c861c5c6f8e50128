//! Reading a tool call's JSON arguments, with errors that name the field: the parsing every
//! first-party plugin shares, for third-party plugins too.
//!
//! Unknown fields are ignored (runtimes and models sometimes add some); missing or mistyped
//! fields the call needs are `invalid-arguments` errors naming the field and its type.

use crate::ToolError;
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

    #[test]
    fn integers_are_checked_against_their_minimum_and_named() {
        let args = Args::parse(r#"{"n": 5, "neg": -2, "frac": 1.5, "text": "7"}"#).unwrap();
        assert_eq!(args.integer("n", 1).unwrap(), Some(5));
        assert_eq!(args.integer("absent", 1).unwrap(), None);
        assert_eq!(message(args.integer("n", 6).unwrap_err()), "`n` must be at least 6, got 5");
        assert_eq!(message(args.integer("neg", 0).unwrap_err()), "`neg` must not be negative, got -2");
        assert!(message(args.integer("frac", 0).unwrap_err()).contains("`frac` must be an integer"));
        assert!(message(args.integer("text", 0).unwrap_err()).contains("`text` must be an integer, got a string"));
        assert!(message(args.required_integer("absent", 0, "for mode range").unwrap_err()).contains("required"));
    }
}
