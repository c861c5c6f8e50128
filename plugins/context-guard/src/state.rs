//! What the component remembers between calls: one JSON document under the storage key
//! `state` (each call runs in a fresh instance; this is all of its memory).

use scratchpad_plugin_sdk::Storage;
use serde::{Deserialize, Serialize};

/// The storage key of the document.
pub const KEY: &str = "state";

/// The component's state in one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GuardState {
    /// Flush thresholds (percent) already given in this compaction cycle.
    pub flush_fired: Vec<u8>,
    /// Checkpoint thresholds (percent) already requested in this compaction cycle.
    pub checkpoint_fired: Vec<u8>,
    /// User messages in the session when the last checkpoint was requested.
    pub messages_at_checkpoint: u32,
    /// Tokens in use at the end of the last turn: the runtime's figure, or the estimate.
    pub last_tokens: Option<u64>,
    /// This turn's pre-query estimate, when the runtime gave no figure (for `after-response`
    /// to build on when it gives none either).
    pub turn_tokens: Option<u64>,
    /// The turn in which the urgent (last) flush threshold fired: write/edit calls on memory
    /// files in it count as acting on the flush.
    pub urgent_flush_turn: Option<String>,
}

impl GuardState {
    /// Reads the document; a missing one is the initial state. A document that does not parse
    /// (written by an incompatible version) is replaced by the initial state rather than
    /// breaking every turn; the error says so, for the log.
    pub fn load(storage: &impl Storage) -> (GuardState, Option<String>) {
        let Some(bytes) = storage.get(KEY) else {
            return (GuardState::default(), None);
        };
        match serde_json::from_slice(&bytes) {
            Ok(state) => (state, None),
            Err(e) => (GuardState::default(), Some(format!("discarded unreadable context-guard state: {e}"))),
        }
    }

    /// Writes the document if it differs from `before` (a call that changes nothing writes
    /// nothing, so it commits nothing). `Err` says why it could not be written.
    pub fn save(&self, before: &GuardState, storage: &mut impl Storage) -> Result<(), String> {
        if self == before {
            return Ok(());
        }
        let bytes = serde_json::to_vec(self).expect("the state serializes");
        storage.set(KEY, &bytes).map_err(|e| format!("could not save the context-guard state: {e:?}"))
    }
}
