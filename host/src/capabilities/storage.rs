//! The `storage` import: a call's view of its plugin's scope in its session.
//!
//! The scope is read from SQLite before the call (one consistent snapshot) and the call's
//! writes are kept here, visible to its own later reads, until the host commits them after a
//! successful return. Nothing a plugin does can name another plugin's or session's data: the
//! scope is chosen by the host, and keys are plain strings within it.

use std::collections::BTreeMap;

use crate::bindings::scratchpad::plugin::storage::{Host, Quota, StorageError};
use crate::capabilities::CallState;
use crate::db::state::{Snapshot, Writes};

/// Longest key a plugin may use, in bytes.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// One plugin's data in one session during a call: a snapshot plus pending writes.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    base: BTreeMap<String, Vec<u8>>,
    writes: Writes,
    used_bytes: u64,
    quota_bytes: u64,
}

impl Scope {
    pub(crate) fn new(snapshot: Snapshot, quota_bytes: u64) -> Self {
        let used_bytes = snapshot.entries.iter().map(|(k, v)| entry_size(k, v)).sum();
        Scope { base: snapshot.entries, writes: Writes::new(), used_bytes, quota_bytes }
    }

    /// The pending writes, to commit after a successful call.
    pub(crate) fn into_writes(self) -> Writes {
        self.writes
    }

    pub(crate) fn get(&self, key: &str) -> Option<&[u8]> {
        match self.writes.get(key) {
            Some(pending) => pending.as_deref(),
            None => self.base.get(key).map(Vec::as_slice),
        }
    }

    pub(crate) fn set(&mut self, key: String, value: Vec<u8>) -> Result<(), StorageError> {
        check_key(&key)?;
        let old = self.get(&key).map(|v| entry_size(&key, v)).unwrap_or(0);
        let new = entry_size(&key, &value);
        let after = self.used_bytes - old + new;
        if new > old && after > self.quota_bytes {
            return Err(StorageError::QuotaExceeded(Quota {
                used: self.used_bytes,
                requested: new - old,
                limit: self.quota_bytes,
            }));
        }
        self.used_bytes = after;
        self.writes.insert(key, Some(value));
        Ok(())
    }

    pub(crate) fn delete(&mut self, key: &str) -> bool {
        let Some(old) = self.get(key).map(|v| entry_size(key, v)) else {
            return false;
        };
        self.used_bytes -= old;
        if self.base.contains_key(key) {
            self.writes.insert(key.to_owned(), None);
        } else {
            self.writes.remove(key);
        }
        true
    }

    pub(crate) fn keys(&self, prefix: &str) -> Vec<String> {
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

fn check_key(key: &str) -> Result<(), StorageError> {
    if key.is_empty() {
        return Err(StorageError::InvalidKey("keys must not be empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(StorageError::InvalidKey(format!(
            "key of {} bytes is longer than the {MAX_KEY_BYTES}-byte limit",
            key.len()
        )));
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
        Scope::new(Snapshot { version: 7, entries }, quota)
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
        let writes = s.into_writes();
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
    fn empty_and_oversize_keys_are_refused() {
        let mut s = scope(&[], 1 << 20);
        assert!(matches!(s.set(String::new(), vec![]), Err(StorageError::InvalidKey(_))));
        assert!(matches!(s.set("k".repeat(257), vec![]), Err(StorageError::InvalidKey(_))));
        s.set("k".repeat(256), vec![]).unwrap();
    }
}
