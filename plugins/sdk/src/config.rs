//! Checking a plugin's configuration: the JSON object, and its values one key at a time, with
//! errors that name the key, say what it must be and show what was given.

use serde_json::{Map, Value};

/// Largest integer a config value may be: JSON's safe integers, far beyond any useful size.
pub const MAX_INTEGER: u64 = (1 << 53) - 1;

/// Parses configuration text (see [`crate::config`]) into its JSON object, or says, naming
/// `plugin`, why it is not one — the first step of every plugin's config validation.
pub fn object(text: &str, plugin: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!("{plugin} config must be a JSON object")),
        Err(e) => Err(format!("{plugin} config is not valid JSON: {e}")),
    }
}

/// `value` of `key` as a boolean.
pub fn boolean(key: &str, value: &Value) -> Result<bool, String> {
    value.as_bool().ok_or_else(|| format!("`{key}` must be true or false, got {value}"))
}

/// `value` of `key` as an integer from `min` to `max`.
pub fn integer(key: &str, value: &Value, min: u64, max: u64) -> Result<u64, String> {
    match value.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("`{key}` must be an integer from {min} to {max}, got {value}")),
    }
}

/// `value` of `key` as an integer from `min` to `u32::MAX`.
pub fn integer_u32(key: &str, value: &Value, min: u32) -> Result<u32, String> {
    integer(key, value, u64::from(min), u64::from(u32::MAX)).map(|n| n as u32)
}

/// `value` of `key` as an array of strings.
pub fn strings(key: &str, value: &Value) -> Result<Vec<String>, String> {
    let wrong = || format!("`{key}` must be an array of strings, got {value}");
    value.as_array().ok_or_else(wrong)?.iter().map(|v| v.as_str().map(str::to_owned).ok_or_else(wrong)).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_check_names_the_key_the_rule_and_the_value_given() {
        assert_eq!(object("[]", "p").unwrap_err(), "p config must be a JSON object");
        assert!(object("{", "p").unwrap_err().starts_with("p config is not valid JSON"));
        assert!(boolean("on", &json!(true)).unwrap());
        assert_eq!(boolean("on", &json!(1)).unwrap_err(), "`on` must be true or false, got 1");
        assert_eq!(integer("n", &json!(5), 1, 9), Ok(5));
        assert_eq!(integer("n", &json!(0), 1, 9).unwrap_err(), "`n` must be an integer from 1 to 9, got 0");
        assert!(integer("n", &json!(10), 1, 9).is_err() && integer("n", &json!(-1), 0, 9).is_err());
        assert!(integer("n", &json!(2.5), 0, 9).is_err());
        assert_eq!(integer_u32("n", &json!(u64::from(u32::MAX)), 0), Ok(u32::MAX));
        assert!(integer_u32("n", &json!(u64::from(u32::MAX) + 1), 0).unwrap_err().contains("from 0 to 4294967295"));
        assert_eq!(strings("s", &json!(["a", "b"])), Ok(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(strings("s", &json!(["a", 1])).unwrap_err(), r#"`s` must be an array of strings, got ["a",1]"#);
    }
}
