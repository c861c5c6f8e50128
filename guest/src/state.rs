//! The three spaces and the nudge bookkeeping, as they live in host storage.
//!
//! Storage key layout (all keys are scoped by the host to this plugin and session):
//!
//! | Key                             | Value |
//! | ------------------------------- | ----- |
//! | `notes`                         | the notes space (also the notepad), UTF-8 text |
//! | `plan`                          | the plan space, UTF-8 text |
//! | `refs`                          | the refs space, a JSON array of strings, oldest first |
//! | `meta/last-update-turn`         | turn index of the last successful write, decimal |
//! | `meta/nudge/after-turns-fired`  | present once the nudgeAfterTurns hint was given |
//! | `meta/nudge/stale-fired-for`    | the `last-update-turn` the nudgeTurnsSinceLastUse hint was given for, or `none` |
//! | `meta/nudge/plan-pending`       | turn index of a reply with a plan; hint due on the next turn |
//! | `meta/nudge/compaction-pending` | present after a compaction; hint due on the next turn |
//! | `meta/recall/checkpoint`        | id of the last checkpoint put in the recall index |
//! | `meta/recall/compaction-pending`| present after a compaction; the recall reminder is due on the next turn |
//!
//! An empty space is stored as an absent key. Every tool call writes at most one space key, so
//! a space is never half-updated.

use scratchpad_plugin_sdk::{Storage, StorageError, ToolError};

/// Key of the notes space.
pub const NOTES: &str = "notes";
/// Key of the plan space.
pub const PLAN: &str = "plan";
/// Key of the refs space.
pub const REFS: &str = "refs";
/// Key of the turn index of the last successful write.
pub const LAST_UPDATE_TURN: &str = "meta/last-update-turn";
/// Key marking that the nudgeAfterTurns hint was given.
pub const AFTER_TURNS_FIRED: &str = "meta/nudge/after-turns-fired";
/// Key holding the `LAST_UPDATE_TURN` value the staleness hint was given for.
pub const STALE_FIRED_FOR: &str = "meta/nudge/stale-fired-for";
/// Value of `STALE_FIRED_FOR` when no staleness hint was given for any `LAST_UPDATE_TURN`.
pub const NOT_FIRED: &[u8] = b"none";
/// Key marking a plan seen in a reply while the scratchpad was empty.
pub const PLAN_PENDING: &str = "meta/nudge/plan-pending";
/// Key marking a compaction since the last turn started.
pub const COMPACTION_PENDING: &str = "meta/nudge/compaction-pending";

/// Key of the id of the last checkpoint put in the recall index.
pub const RECALL_CHECKPOINT: &str = "meta/recall/checkpoint";
/// Key marking that the session's first turn was given recall's block: a re-injection with no
/// message in that turn (a session resumed in it) is not given it again.
pub const RECALL_OFFERED: &str = "meta/recall/offered";
/// Key marking a compaction since the last turn started, for the recall reminder.
pub const RECALL_COMPACTION_PENDING: &str = "meta/recall/compaction-pending";

/// The contents of the three spaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spaces {
    /// Unstructured working memory (the notepad of the session notepad, the scratchpad of the scratchpad extension).
    pub notes: String,
    /// The current multi-step plan.
    pub plan: String,
    /// Atomic references, oldest first.
    pub refs: Vec<String>,
}

impl Spaces {
    /// Reads all three spaces. Undecodable bytes are read leniently (lossy UTF-8, refs that
    /// are not a JSON array of strings read as none): the component only ever writes valid
    /// values, and a corrupt value must not block the session.
    pub fn load(storage: &impl Storage) -> Spaces {
        Spaces { notes: read_text(storage, NOTES), plan: read_text(storage, PLAN), refs: read_refs(storage) }
    }

    /// Whether every space is empty.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty() && self.plan.is_empty() && self.refs.is_empty()
    }
}

/// The text stored under `key`, empty when absent.
pub fn read_text(storage: &impl Storage, key: &str) -> String {
    storage.get(key).map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default()
}

/// The refs, oldest first.
pub fn read_refs(storage: &impl Storage) -> Vec<String> {
    storage.get(REFS).and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

/// Stores `text` under `key` (deleting the key when `text` is empty).
pub fn write_text(storage: &mut impl Storage, key: &str, text: &str) -> Result<(), ToolError> {
    if text.is_empty() {
        storage.delete(key);
        return Ok(());
    }
    storage.set(key, text.as_bytes()).map_err(storage_failure)
}

/// Stores the refs in one write (deleting the key when there are none).
pub fn write_refs(storage: &mut impl Storage, refs: &[String]) -> Result<(), ToolError> {
    if refs.is_empty() {
        storage.delete(REFS);
        return Ok(());
    }
    let json = serde_json::to_vec(refs).map_err(|e| ToolError::Failed(format!("encoding refs: {e}")))?;
    storage.set(REFS, &json).map_err(storage_failure)
}

/// A decimal number stored under `key`.
pub fn read_number(storage: &impl Storage, key: &str) -> Option<u32> {
    read_text(storage, key).parse().ok()
}

/// Stores a decimal number under `key`. Bookkeeping only: a failure is ignored because the
/// space the call wrote is already stored and hints are best-effort.
pub fn write_number(storage: &mut impl Storage, key: &str, value: u32) {
    let _ = storage.set(key, value.to_string().as_bytes());
}

/// Records that a space was written in turn `turn_index` (for nudgeTurnsSinceLastUse).
pub fn mark_updated(storage: &mut impl Storage, turn_index: u32) {
    write_number(storage, LAST_UPDATE_TURN, turn_index);
}

/// A storage error as a tool error the model can read.
pub fn storage_failure(error: StorageError) -> ToolError {
    ToolError::Failed(match error {
        StorageError::QuotaExceeded(q) => format!(
            "storage quota exceeded (used {} + requested {} > limit {} bytes); nothing was changed, \
             shorten the content",
            q.used, q.requested, q.limit
        ),
        StorageError::InvalidKey(key) => {
            format!("storage refused key `{key}`; nothing was changed")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scratchpad_plugin_sdk::MemoryStorage;

    #[test]
    fn spaces_round_trip_through_their_keys() {
        let mut storage = MemoryStorage::default();
        write_text(&mut storage, NOTES, "héllo").unwrap();
        write_text(&mut storage, PLAN, "1. a").unwrap();
        write_refs(&mut storage, &["a.rs".into(), "b \"q\"".into()]).unwrap();
        assert_eq!(storage.get(REFS).unwrap(), br#"["a.rs","b \"q\""]"#);
        let spaces = Spaces::load(&storage);
        assert_eq!(spaces.notes, "héllo");
        assert_eq!(spaces.plan, "1. a");
        assert_eq!(spaces.refs, vec!["a.rs".to_string(), "b \"q\"".to_string()]);
        assert!(!spaces.is_empty());
    }

    #[test]
    fn emptied_spaces_are_removed_from_storage() {
        let mut storage = MemoryStorage::default();
        write_text(&mut storage, NOTES, "x").unwrap();
        write_refs(&mut storage, &["a".into()]).unwrap();
        write_text(&mut storage, NOTES, "").unwrap();
        write_refs(&mut storage, &[]).unwrap();
        assert!(storage.entries.is_empty());
        assert!(Spaces::load(&storage).is_empty());
    }

    #[test]
    fn corrupt_values_read_leniently() {
        let mut storage = MemoryStorage::default();
        storage.set(NOTES, &[0x66, 0xff]).unwrap();
        storage.set(REFS, b"{not json").unwrap();
        let spaces = Spaces::load(&storage);
        assert_eq!(spaces.notes, "f\u{fffd}");
        assert!(spaces.refs.is_empty());
    }

    #[test]
    fn numbers_round_trip() {
        let mut storage = MemoryStorage::default();
        assert_eq!(read_number(&storage, LAST_UPDATE_TURN), None);
        mark_updated(&mut storage, 42);
        assert_eq!(read_number(&storage, LAST_UPDATE_TURN), Some(42));
    }
}
