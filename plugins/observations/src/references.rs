//! `{{stepN.field}}` in a later tool call's arguments (the large-observation store's `fs_write(content=
//! "{{step1.content}}")`), resolved in `before-tool-call` against the current turn's offloaded
//! entries — from the **stored** content, not the summary the model saw.
//!
//! - References are found in every string value of the arguments (object keys are left as
//!   they are) and replaced textually: a string that is exactly `{{step1.content}}` becomes the
//!   content, `"see {{step1.path}}"` becomes `"see /tmp/big_log.txt"`. Values stay strings.
//!   Spaces inside the braces are allowed (`{{ step1.content }}`).
//! - Fields: `content` (the full stored text, read in chunks), `summary`, `scratchpad_id`,
//!   `size_bytes`, `size_chars`, `kind`, `tool`, `sha256`, `metadata` (the whole object as
//!   JSON), `metadata.<key>` and, for keys that are not one of these names, `<key>` alone
//!   (`{{step1.path}}`). Dotted paths go into nested objects and arrays. A string metadata
//!   value is substituted as is, any other value as its JSON text.
//! - An unknown step or field, a step that was not offloaded, an expired entry and the
//!   `content` of a binary entry are `invalid-arguments` errors that block the call with the
//!   reason, never an empty string. Arguments that would grow past `maxArgumentBytes` (1 MB by
//!   default, under the host's 1 MiB output cap) are `rejected` with the sizes, so the large-observation store's
//!   800 KB file passes whole.
//! - Arguments without references (or that are not JSON) are left untouched (`Ok(None)`).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use scratchpad_plugin_sdk::{ContentKind, Entry, ToolCall, ToolError, Turn};
use serde_json::Value;

use crate::config::Config;
use crate::reader::EntryReader;
use crate::store::{Blobs, kind_name};
use scratchpad_plugin_sdk::args::invalid;

/// `{{stepN}}` or `{{stepN.field}}`, with optional spaces inside the braces.
static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{\s*step(\d+)(?:\.([^{}\s]*))?\s*\}\}").expect("the reference pattern compiles"));

/// The entry fields a reference may name, besides metadata keys.
const FIELDS: &[&str] =
    &["content", "summary", "scratchpad_id", "size_bytes", "size_chars", "kind", "tool", "sha256", "metadata"];

/// `before-tool-call`: `call`'s arguments with every reference resolved, or `None` when they
/// hold none.
pub fn resolve<B: Blobs + ?Sized>(
    blobs: &B,
    config: &Config,
    turn: &Turn,
    call: &ToolCall,
) -> Result<Option<String>, ToolError> {
    let text = &call.arguments;
    // Fast path for the usual call; `\u` because a JSON string may spell a brace as `\u007b`.
    if !text.contains("{{") && !text.contains("\\u") {
        return Ok(None);
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    let entries = blobs.list_turn(&turn.turn_id);
    let mut resolver = Resolver { blobs, config, call, entries, cache: HashMap::new() };
    if !resolver.walk(&mut value)? {
        return Ok(None);
    }
    let rewritten = value.to_string();
    if rewritten.len() as u64 > config.max_argument_bytes {
        return Err(ToolError::Rejected(format!(
            "resolving the references would make the arguments of `{}` {} bytes long, more than the {} bytes a \
             call's arguments may have; pass {{{{stepN.scratchpad_id}}}} and read the content with scratchpad_read \
             instead",
            call.name,
            rewritten.len(),
            config.max_argument_bytes
        )));
    }
    Ok(Some(rewritten))
}

struct Resolver<'a, B: Blobs + ?Sized> {
    blobs: &'a B,
    config: &'a Config,
    call: &'a ToolCall,
    /// The current turn's entries, oldest first.
    entries: Vec<Entry>,
    /// Values already resolved in this call, by reference text without spaces.
    cache: HashMap<(u32, String), String>,
}

impl<B: Blobs + ?Sized> Resolver<'_, B> {
    /// Resolves the references in every string under `value`; returns whether any was found.
    fn walk(&mut self, value: &mut Value) -> Result<bool, ToolError> {
        let mut changed = false;
        match value {
            Value::String(s) => {
                if let Some(resolved) = self.substitute(s)? {
                    *s = resolved;
                    changed = true;
                }
            }
            Value::Array(items) => {
                for item in items {
                    changed |= self.walk(item)?;
                }
            }
            Value::Object(map) => {
                for item in map.values_mut() {
                    changed |= self.walk(item)?;
                }
            }
            _ => {}
        }
        Ok(changed)
    }

    fn substitute(&mut self, s: &str) -> Result<Option<String>, ToolError> {
        if !s.contains("{{") {
            return Ok(None);
        }
        let mut out = String::new();
        let mut last = 0;
        for captures in REFERENCE.captures_iter(s) {
            let whole = captures.get(0).expect("group 0 always matches");
            let reference = whole.as_str();
            let step =
                captures[1].parse::<u32>().map_err(|_| invalid(format!("`{reference}`: there is no such step")))?;
            let Some(field) = captures.get(2).map(|m| m.as_str()).filter(|f| !f.is_empty()) else {
                return Err(invalid(format!(
                    "`{reference}` names no field: write e.g. {{{{step{step}.content}}}} (fields: {})",
                    FIELDS.join(", ")
                )));
            };
            let key = (step, field.to_owned());
            let value = match self.cache.get(&key) {
                Some(value) => value.clone(),
                None => {
                    let value = self.value(reference, step, field)?;
                    self.cache.insert(key, value.clone());
                    value
                }
            };
            out.push_str(&s[last..whole.start()]);
            out.push_str(&value);
            last = whole.end();
        }
        if last == 0 {
            return Ok(None);
        }
        out.push_str(&s[last..]);
        Ok(Some(out))
    }

    /// The entry of step `step` in the current turn.
    fn entry(&self, reference: &str, step: u32) -> Result<&Entry, ToolError> {
        if step == 0 {
            return Err(invalid(format!("`{reference}`: steps are numbered from 1")));
        }
        match self.entries.iter().rev().find(|e| e.step == step) {
            Some(entry) if entry.expired => Err(invalid(format!(
                "`{reference}`: the scratchpad entry of step {step} expired; run that step's tool again"
            ))),
            Some(entry) => Ok(entry),
            None if self.call.step > 0 && step >= self.call.step => Err(invalid(format!(
                "`{reference}`: step {step} has not run yet (this call is step {})",
                self.call.step
            ))),
            None => {
                let steps: Vec<String> =
                    self.entries.iter().filter(|e| !e.expired).map(|e| e.step.to_string()).collect();
                let offloaded = if steps.is_empty() {
                    "no step of this turn was offloaded".to_owned()
                } else {
                    format!("offloaded steps in this turn: {}", steps.join(", "))
                };
                Err(invalid(format!(
                    "`{reference}`: step {step} was not offloaded; only offloaded steps can be referenced \
                     ({offloaded})"
                )))
            }
        }
    }

    fn value(&self, reference: &str, step: u32, field: &str) -> Result<String, ToolError> {
        let entry = self.entry(reference, step)?;
        let value = match field {
            "content" => return self.content(reference, step, entry),
            "summary" => entry.summary.clone(),
            "scratchpad_id" => entry.id.clone(),
            "size_bytes" => entry.size_bytes.to_string(),
            "size_chars" => entry.size_chars.to_string(),
            "kind" => kind_name(entry.kind).to_owned(),
            "tool" => entry.tool.clone(),
            "sha256" => entry.sha256.clone(),
            "metadata" => entry.metadata.clone(),
            _ => {
                let path = field.strip_prefix("metadata.").unwrap_or(field);
                return metadata_field(reference, step, entry, path);
            }
        };
        Ok(value)
    }

    /// The full stored text of `entry`, read in chunks.
    fn content(&self, reference: &str, step: u32, entry: &Entry) -> Result<String, ToolError> {
        if entry.kind == ContentKind::Binary {
            return Err(invalid(format!(
                "`{reference}`: the observation of step {step} is binary ({} bytes); only text content can be \
                 put into arguments (pass {{{{step{step}.scratchpad_id}}}} or read it with scratchpad_read)",
                entry.size_bytes
            )));
        }
        if entry.size_bytes > self.config.max_argument_bytes {
            return Err(ToolError::Rejected(format!(
                "`{reference}`: the content of step {step} is {} bytes, more than the {} bytes a call's arguments \
                 may have; pass {{{{step{step}.scratchpad_id}}}} and read it with scratchpad_read instead",
                entry.size_bytes, self.config.max_argument_bytes
            )));
        }
        let bytes = EntryReader::new(self.blobs, entry).bytes(0, entry.size_bytes)?;
        String::from_utf8(bytes)
            .map_err(|_| ToolError::Failed(format!("`{reference}`: the stored text of step {step} is not UTF-8")))
    }
}

/// The metadata value at the dotted `path` of `entry`: a string as is, anything else as JSON.
fn metadata_field(reference: &str, step: u32, entry: &Entry, path: &str) -> Result<String, ToolError> {
    let metadata: Value = serde_json::from_str(&entry.metadata).unwrap_or(Value::Null);
    let found = path.split('.').try_fold(&metadata, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    });
    match found {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Ok(other.to_string()),
        None => {
            let keys: Vec<&str> =
                metadata.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
            let keys = if keys.is_empty() { "none".to_owned() } else { keys.join(", ") };
            Err(invalid(format!(
                "`{reference}`: step {step} has no field `{path}`; fields: {}, or a metadata key ({keys})",
                FIELDS.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests;
