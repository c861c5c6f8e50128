//! The OpenClaw session JSONL reader: pure parsing, no I/O, shared with the fuzz target
//! (`tests/fuzz/fuzz_targets/openclaw_jsonl.rs` compiles this file as it is).

use serde::Serialize;
use serde_json::Value;

/// The custom-entry keys of the three spaces, and the legacy single key (loaded into notes).
pub const NOTES_KEY: &str = "openclaw:scratchpad:notes";
/// See [`NOTES_KEY`].
pub const PLAN_KEY: &str = "openclaw:scratchpad:plan";
/// See [`NOTES_KEY`].
pub const REFS_KEY: &str = "openclaw:scratchpad:refs";
/// The scratchpad extension's single key, read into notes when the three keys are absent.
pub const LEGACY_KEY: &str = "openclaw:scratchpad";

/// What one session file holds, as far as the scratchpad is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionFile {
    /// The header's session id.
    pub session_id: Option<String>,
    /// The last `notes` custom value (or the legacy key's, when none of the three is present).
    pub notes: Option<String>,
    /// The last `plan` custom value.
    pub plan: Option<String>,
    /// The last `refs` custom value.
    pub refs: Option<Vec<String>>,
    /// Compaction records seen.
    pub compactions: u64,
    /// Id of the file's last record (for `parentId` links).
    pub last_id: Option<String>,
    /// Records of types this reader does not use, skipped as OpenClaw skips unknown types.
    pub skipped_records: usize,
    /// Malformed lines, as `file:line: reason`.
    pub malformed: Vec<String>,
}

/// Parses one OpenClaw session JSONL text.
pub fn parse(name: &str, text: &str) -> SessionFile {
    let mut file = SessionFile::default();
    let mut legacy = None;
    for (index, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", index + 1);
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(e) => {
                file.malformed.push(format!("{at}: not JSON ({e})"));
                continue;
            }
        };
        let Some(kind) = record.get("type").and_then(Value::as_str) else {
            file.malformed.push(format!("{at}: a record needs a string `type`"));
            continue;
        };
        if let Some(id) = record.get("id").and_then(Value::as_str) {
            file.last_id = Some(id.to_owned());
        }
        match kind {
            "session" => match record.get("id").and_then(Value::as_str) {
                Some(id) => file.session_id = Some(id.to_owned()),
                None => file.malformed.push(format!("{at}: the session header needs a string `id`")),
            },
            "compaction" => file.compactions += 1,
            "custom" => {
                let custom = record.get("customType").and_then(Value::as_str).unwrap_or_default();
                let data = record.get("data");
                let text = || data.and_then(Value::as_str).map(str::to_owned);
                let wrong = |what: &str| format!("{at}: `{custom}` data must be {what}");
                match custom {
                    NOTES_KEY => match text() {
                        Some(t) => file.notes = Some(t),
                        None => file.malformed.push(wrong("a string")),
                    },
                    PLAN_KEY => match text() {
                        Some(t) => file.plan = Some(t),
                        None => file.malformed.push(wrong("a string")),
                    },
                    LEGACY_KEY => match text() {
                        Some(t) => legacy = Some(t),
                        None => file.malformed.push(wrong("a string")),
                    },
                    REFS_KEY => match data.and_then(Value::as_array) {
                        Some(items) => {
                            file.refs = Some(items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                        }
                        None => file.malformed.push(wrong("an array of strings")),
                    },
                    _ => file.skipped_records += 1,
                }
            }
            "message" | "model_change" | "thinking_level_change" => {}
            _ => file.skipped_records += 1,
        }
    }
    if file.notes.is_none() && file.plan.is_none() && file.refs.is_none() {
        file.notes = legacy;
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_types_are_skipped_and_malformed_lines_reported_with_their_line() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#,
            "\n",
            r#"{"type":"checkpoint","id":"c1","checkpoint":{}}"#,
            "\n",
            r#"{"type":"custom","customType":"openclaw:scratchpad:refs","data":"nope","id":"r1"}"#,
            "\n",
            r#"{"type":"custom","customType":"openclaw:scratchpad:notes","data":"n","id":"n1"}"#,
            "\n",
            r#"{"type":"message","id":"m1","message":{"role":"user"#,
        );
        let file = parse("f.jsonl", text);
        assert_eq!(file.session_id.as_deref(), Some("s1"));
        assert_eq!(file.notes.as_deref(), Some("n"));
        assert_eq!(file.skipped_records, 1);
        assert_eq!(file.malformed.len(), 2, "{:?}", file.malformed);
        assert!(file.malformed[0].starts_with("f.jsonl:3: `openclaw:scratchpad:refs` data must be an array"));
        assert!(file.malformed[1].starts_with("f.jsonl:5: not JSON"));
        assert_eq!(file.last_id.as_deref(), Some("n1"));
    }

    #[test]
    fn the_legacy_key_loads_into_notes_only_when_the_three_keys_are_absent() {
        let legacy = r#"{"type":"custom","customType":"openclaw:scratchpad","data":"old","id":"a"}"#;
        assert_eq!(parse("f", legacy).notes.as_deref(), Some("old"));
        let both =
            format!("{legacy}\n{}", r#"{"type":"custom","customType":"openclaw:scratchpad:plan","data":"p","id":"b"}"#);
        let file = parse("f", &both);
        assert_eq!((file.notes, file.plan.as_deref()), (None, Some("p")));
    }
}
