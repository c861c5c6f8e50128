//! What crosses the Extism boundary: the exports' JSON input and output and the host
//! functions' encodings. Compiled into the plugin and, natively, into the benchmark that hosts
//! it, so the two sides cannot drift apart.

use scratchpad_plugin_sdk as sdk;
use serde::{Deserialize, Serialize};

/// The export running the `before-query` hook: [`BeforeQuery`] in, a list of [`Injection`] out.
pub const BEFORE_QUERY: &str = "before_query";
/// The export running a tool: [`CallTool`] in, [`ToolResult`] out.
pub const CALL_TOOL: &str = "call_tool";

/// Host function: key (UTF-8) in, the value encoded by [`encode_value`] out.
pub const STORAGE_GET: &str = "storage_get";
/// Host function: key and value in, [`SetResult`] (JSON) out.
pub const STORAGE_SET: &str = "storage_set";
/// Host function: key in, whether it was there (one byte) out.
pub const STORAGE_DELETE: &str = "storage_delete";
/// Host function: prefix in, the sorted keys (JSON list) out.
pub const STORAGE_LIST: &str = "storage_list";
/// Host function: text in, its token count (`u32`, little-endian) out.
pub const COUNT_TOKENS: &str = "count_tokens";

/// The turn a hook runs in (the WIT `turn` record).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Turn {
    /// The session.
    pub session_id: String,
    /// The turn's id.
    pub turn_id: String,
    /// The turn's index in the session.
    pub turn_index: u32,
    /// Tokens used so far, when the runtime knows.
    #[serde(default)]
    pub tokens_used: Option<u64>,
    /// The model's context window, when the runtime knows.
    #[serde(default)]
    pub context_window: Option<u64>,
}

impl Turn {
    /// Turn `index` of `session`, with no token figures.
    pub fn new(session: &str, turn_id: &str, index: u32) -> Turn {
        Turn {
            session_id: session.to_owned(),
            turn_id: turn_id.to_owned(),
            turn_index: index,
            tokens_used: None,
            context_window: None,
        }
    }
}

impl From<Turn> for sdk::Turn {
    fn from(t: Turn) -> sdk::Turn {
        sdk::Turn {
            session_id: t.session_id,
            turn_id: t.turn_id,
            turn_index: t.turn_index,
            tokens_used: t.tokens_used,
            context_window: t.context_window,
        }
    }
}

/// Input of [`BEFORE_QUERY`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BeforeQuery {
    /// The turn that starts.
    pub turn: Turn,
    /// The user's message.
    pub message: String,
}

/// One injected text of [`BEFORE_QUERY`]'s output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// Where it goes: the WIT `placement` case name, e.g. `append-system`.
    pub placement: String,
    /// The text.
    pub text: String,
}

impl From<sdk::Injection> for Injection {
    fn from(i: sdk::Injection) -> Injection {
        let placement = match i.placement {
            sdk::Placement::PrependSystem => "prepend-system",
            sdk::Placement::AppendSystem => "append-system",
            sdk::Placement::PrependContext => "prepend-context",
            sdk::Placement::AppendContext => "append-context",
        };
        Injection { placement: placement.to_owned(), text: i.text }
    }
}

/// Input of [`CALL_TOOL`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallTool {
    /// The turn the call is made in.
    pub turn: Turn,
    /// The tool's name.
    pub name: String,
    /// Its arguments, JSON text.
    pub arguments: String,
}

/// Output of [`CALL_TOOL`]: the tool's content, or its error as the native baseline words it.
/// The host commits the call's writes only on `Ok`, as it does for the component.
pub type ToolResult = Result<String, String>;

/// Output of [`STORAGE_SET`].
pub type SetResult = Result<(), SetError>;

/// Why a write was refused (the WIT `storage-error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SetError {
    /// The write would take the scope past its quota.
    QuotaExceeded {
        /// Bytes used before the write.
        used: u64,
        /// Bytes the write would add.
        requested: u64,
        /// The quota.
        limit: u64,
    },
    /// The key is empty or too long.
    InvalidKey(String),
}

impl From<sdk::StorageError> for SetError {
    fn from(e: sdk::StorageError) -> SetError {
        match e {
            sdk::StorageError::QuotaExceeded(q) => {
                SetError::QuotaExceeded { used: q.used, requested: q.requested, limit: q.limit }
            }
            sdk::StorageError::InvalidKey(m) => SetError::InvalidKey(m),
        }
    }
}

impl From<SetError> for sdk::StorageError {
    fn from(e: SetError) -> sdk::StorageError {
        match e {
            SetError::QuotaExceeded { used, requested, limit } => {
                sdk::StorageError::QuotaExceeded(sdk::Quota { used, requested, limit })
            }
            SetError::InvalidKey(m) => sdk::StorageError::InvalidKey(m),
        }
    }
}

/// [`STORAGE_GET`]'s answer: empty for no value, else a `1` byte and the value. Extism's own
/// `Option` encoding reads an empty value as none; the tag keeps `Some(empty)` distinct.
pub fn encode_value(value: Option<&[u8]>) -> Vec<u8> {
    value.map(|v| [&[1u8][..], v].concat()).unwrap_or_default()
}

/// The value [`encode_value`] encoded.
pub fn decode_value(bytes: &[u8]) -> Option<Vec<u8>> {
    bytes.split_first().map(|(_, value)| value.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_empty_is_not_none() {
        for value in [None, Some(&b""[..]), Some(&b"notes"[..])] {
            assert_eq!(decode_value(&encode_value(value)).as_deref(), value);
        }
    }

    #[test]
    fn storage_errors_round_trip() {
        let quota = sdk::StorageError::QuotaExceeded(sdk::Quota { used: 1, requested: 2, limit: 3 });
        let back: sdk::StorageError = SetError::from(quota).into();
        assert!(matches!(back, sdk::StorageError::QuotaExceeded(sdk::Quota { used: 1, requested: 2, limit: 3 })));
    }
}
