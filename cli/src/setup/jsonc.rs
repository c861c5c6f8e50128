//! Settings files as Gemini CLI reads them: JSON with `//` and `/* */` comments, whose objects
//! keep their keys in the file's order when written back (serde_json's own map sorts them), so
//! a merged file reads as the user left it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// `text` with its `//` and `/* */` comments (outside strings) replaced by spaces, so a parse
/// error's line and column are the file's; and whether it had any.
pub(crate) fn strip_comments(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut in_string, mut found) = (false, false);
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                found = true;
                out.push(' ');
                while let Some(&next) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    chars.next();
                    out.push(' ');
                }
            }
            ('/', Some('*')) => {
                found = true;
                chars.next();
                out.push_str("  ");
                let mut previous = ' ';
                for next in chars.by_ref() {
                    out.push(if next == '\n' { '\n' } else { ' ' });
                    if previous == '*' && next == '/' {
                        break;
                    }
                    previous = next;
                }
            }
            _ => out.push(c),
        }
    }
    (out, found)
}

/// A JSON value whose objects keep their keys in the file's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    Scalar(serde_json::Value),
}

impl Json {
    pub(crate) fn as_object(&self) -> Option<&Vec<(String, Json)>> {
        match self {
            Json::Object(fields) => Some(fields),
            _ => None,
        }
    }

    pub(crate) fn as_object_mut(&mut self) -> Option<&mut Vec<(String, Json)>> {
        match self {
            Json::Object(fields) => Some(fields),
            _ => None,
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Object(_) => "an object",
            Json::Array(_) => "an array",
            Json::Scalar(serde_json::Value::String(_)) => "a string",
            Json::Scalar(serde_json::Value::Number(_)) => "a number",
            Json::Scalar(serde_json::Value::Bool(_)) => "a boolean",
            Json::Scalar(_) => "null",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
                Ok(Json::Scalar(serde_json::Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut fields: Vec<(String, Json)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    // A key given twice: the last wins, in the first one's place.
                    match fields.iter_mut().find(|(name, _)| *name == key) {
                        Some(field) => field.1 = value,
                        None => fields.push((key, value)),
                    }
                }
                Ok(Json::Object(fields))
            }
        }
        deserializer.deserialize_any(Ordered)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Scalar(value) => value.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_outside_strings_become_spaces_and_keys_keep_their_order() {
        let text = "// head\n{\"b\": \"//x\", /* c\n */ \"a\": [1, {\"z\": null, \"y\": true}]}";
        let (uncommented, found) = strip_comments(text);
        assert!(found);
        assert_eq!(uncommented.lines().count(), text.lines().count(), "lines stay where they were");
        let value: Json = serde_json::from_str(&uncommented).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"b":"//x","a":[1,{"z":null,"y":true}]}"#);
        assert!(!strip_comments(r#"{"a": "/* no */"}"#).1);
    }
}
