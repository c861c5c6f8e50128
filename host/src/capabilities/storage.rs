//! The `storage` import: a call's view of its plugin's scope in its session.
//!
//! The scope is read from SQLite before the call (one consistent snapshot) and the call's
//! writes are kept here, visible to its own later reads, until the host commits them after a
//! successful return. Nothing a plugin does can name another plugin's or session's data: the
//! scope is chosen by the host, and keys are plain strings within it.

use std::collections::BTreeMap;

use crate::bindings::scratchpad::plugin::metadata::MetadataError;
use crate::bindings::scratchpad::plugin::storage::{Host, Quota, StorageError};
use crate::capabilities::CallState;
use crate::db::state::{Snapshot, Writes};

/// Longest key a plugin may use, in bytes.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// One plugin's data in one session during a call: a snapshot plus pending writes, in two
/// key spaces — the plugin's private `storage` and the `metadata` it publishes — that share
/// one quota.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    state: Space,
    metadata: Space,
    used_bytes: u64,
    quota_bytes: u64,
}

/// One key space of a scope.
#[derive(Debug, Default)]
struct Space {
    base: BTreeMap<String, Vec<u8>>,
    writes: Writes,
}

/// A call's pending writes in both key spaces.
#[derive(Debug, Default)]
pub(crate) struct ScopeWrites {
    /// `storage` keys.
    pub(crate) state: Writes,
    /// `metadata` keys.
    pub(crate) metadata: Writes,
}

impl ScopeWrites {
    pub(crate) fn is_empty(&self) -> bool {
        self.state.is_empty() && self.metadata.is_empty()
    }
}

impl Scope {
    pub(crate) fn new(snapshot: Snapshot, quota_bytes: u64) -> Self {
        let used_bytes = snapshot.entries.iter().chain(&snapshot.metadata).map(|(k, v)| entry_size(k, v)).sum();
        Scope {
            state: Space { base: snapshot.entries, writes: Writes::new() },
            metadata: Space { base: snapshot.metadata, writes: Writes::new() },
            used_bytes,
            quota_bytes,
        }
    }

    /// The pending writes, to commit after a successful call.
    pub(crate) fn into_writes(self) -> ScopeWrites {
        ScopeWrites { state: self.state.writes, metadata: self.metadata.writes }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&[u8]> {
        self.state.get(key)
    }

    pub(crate) fn set(&mut self, key: String, value: Vec<u8>) -> Result<(), StorageError> {
        check_key(&key).map_err(StorageError::InvalidKey)?;
        let (used, quota) = (self.used_bytes, self.quota_bytes);
        self.used_bytes = self.state.set(key, value, used, quota).map_err(StorageError::QuotaExceeded)?;
        Ok(())
    }

    pub(crate) fn delete(&mut self, key: &str) -> bool {
        let freed = self.state.delete(key);
        self.used_bytes -= freed.unwrap_or(0);
        freed.is_some()
    }

    pub(crate) fn keys(&self, prefix: &str) -> Vec<String> {
        self.state.keys(prefix)
    }

    /// The published metadata value of `key`.
    pub(crate) fn metadata(&self, key: &str) -> Option<&[u8]> {
        self.metadata.get(key)
    }

    /// Publishes `value` (checked to be JSON) under `key`.
    pub(crate) fn set_metadata(&mut self, key: String, value: String) -> Result<(), MetadataError> {
        check_key(&key).map_err(MetadataError::Invalid)?;
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&value) {
            return Err(MetadataError::Invalid(format!("the value of `{key}` is not JSON: {e}")));
        }
        let (used, quota) = (self.used_bytes, self.quota_bytes);
        self.used_bytes =
            self.metadata.set(key, value.into_bytes(), used, quota).map_err(MetadataError::QuotaExceeded)?;
        Ok(())
    }

    /// Withdraws metadata `key`.
    pub(crate) fn remove_metadata(&mut self, key: &str) -> bool {
        let freed = self.metadata.delete(key);
        self.used_bytes -= freed.unwrap_or(0);
        freed.is_some()
    }
}

impl Space {
    fn get(&self, key: &str) -> Option<&[u8]> {
        match self.writes.get(key) {
            Some(pending) => pending.as_deref(),
            None => self.base.get(key).map(Vec::as_slice),
        }
    }

    /// Sets `key`, given the scope's usage and quota; returns the new usage. A write that
    /// grows the scope past its quota is refused (shrinking is always allowed).
    fn set(&mut self, key: String, value: Vec<u8>, used: u64, quota: u64) -> Result<u64, Quota> {
        let old = self.get(&key).map(|v| entry_size(&key, v)).unwrap_or(0);
        let new = entry_size(&key, &value);
        let after = used - old + new;
        if new > old && after > quota {
            return Err(Quota { used, requested: new - old, limit: quota });
        }
        self.writes.insert(key, Some(value));
        Ok(after)
    }

    /// Deletes `key`; returns the bytes freed, or `None` when it was not there.
    fn delete(&mut self, key: &str) -> Option<u64> {
        let old = self.get(key).map(|v| entry_size(key, v))?;
        if self.base.contains_key(key) {
            self.writes.insert(key.to_owned(), None);
        } else {
            self.writes.remove(key);
        }
        Some(old)
    }

    fn keys(&self, prefix: &str) -> Vec<String> {
        let mut keys: Vec<String> = self
            .base
            .keys()
            .filter(|k| k.starts_with(prefix) && !self.writes.contains_key(*k))
            .chain(self.writes.iter().filter(|(k, v)| v.is_some() && k.starts_with(prefix)).map(|(k, _)| k))
            .cloned()
            .collect();
        keys.sort_unstable();
        keys
    }
}

fn entry_size(key: &str, value: &[u8]) -> u64 {
    (key.len() + value.len()) as u64
}

fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("keys must not be empty".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(format!("key of {} bytes is longer than the {MAX_KEY_BYTES}-byte limit", key.len()));
    }
    Ok(())
}

impl Host for CallState {
    fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
        Ok(self.scope.get(&key).map(<[u8]>::to_vec))
    }

    fn set(&mut self, key: String, value: Vec<u8>) -> wasmtime::Result<Result<(), StorageError>> {
        Ok(self.scope.set(key, value))
    }

    fn delete(&mut self, key: String) -> wasmtime::Result<bool> {
        Ok(self.scope.delete(&key))
    }

    fn keys(&mut self, prefix: String) -> wasmtime::Result<Vec<String>> {
        Ok(self.scope.keys(&prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(entries: &[(&str, &str)], quota: u64) -> Scope {
        let entries = entries.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect();
        Scope::new(Snapshot { entries, metadata: Default::default() }, quota)
    }

    #[test]
    fn a_call_reads_its_own_writes_and_deletes() {
        let mut s = scope(&[("a", "1"), ("b", "2")], 1000);
        s.set("c".into(), b"3".to_vec()).unwrap();
        assert!(s.delete("a"));
        assert!(!s.delete("a"));
        assert_eq!(s.get("a"), None);
        assert_eq!(s.get("c"), Some(&b"3"[..]));
        assert_eq!(s.keys(""), vec!["b", "c"]);
        let writes = s.into_writes().state;
        assert_eq!(writes.get("a"), Some(&None));
        assert_eq!(writes.get("c"), Some(&Some(b"3".to_vec())));
        assert!(!writes.contains_key("b"));
    }

    #[test]
    fn a_write_past_the_quota_is_an_error_value_and_writes_nothing() {
        let mut s = scope(&[("k", "12345")], 10);
        let err = s.set("x".into(), b"12345".to_vec()).unwrap_err();
        assert!(matches!(err, StorageError::QuotaExceeded(Quota { used: 6, requested: 6, limit: 10 })));
        assert_eq!(s.get("x"), None);
        // Shrinking is always allowed, even while over the quota.
        s.set("k".into(), b"1".to_vec()).unwrap();
        s.set("x".into(), b"1234".to_vec()).unwrap();
    }

    #[test]
    fn metadata_shares_the_quota_and_must_be_json() {
        let mut s = scope(&[("k", "12345")], 20);
        s.set_metadata("flag".into(), "true".into()).unwrap();
        assert_eq!(s.metadata("flag"), Some(&b"true"[..]));
        assert_eq!(s.get("flag"), None, "metadata and storage are separate key spaces");
        assert!(
            matches!(s.set_metadata("x".into(), "{oops".into()), Err(MetadataError::Invalid(m)) if m.contains("not JSON"))
        );
        let err = s.set_metadata("long".into(), "\"abcdefgh\"".into()).unwrap_err();
        assert!(matches!(err, MetadataError::QuotaExceeded(Quota { used: 14, limit: 20, .. })), "{err:?}");
        assert!(s.remove_metadata("flag"));
        assert!(!s.remove_metadata("flag"));
        let writes = s.into_writes();
        assert_eq!(writes.metadata.get("flag"), None, "set then removed in one call: nothing to write");
        assert!(writes.state.is_empty());
    }

    #[test]
    fn empty_and_oversize_keys_are_refused() {
        let mut s = scope(&[], 1 << 20);
        assert!(matches!(s.set(String::new(), vec![]), Err(StorageError::InvalidKey(_))));
        assert!(matches!(s.set("k".repeat(257), vec![]), Err(StorageError::InvalidKey(_))));
        s.set("k".repeat(256), vec![]).unwrap();
    }
}
