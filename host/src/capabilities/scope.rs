//! A call's scope: one plugin's data in one session, as a snapshot read before the call plus
//! the call's pending writes, in two key spaces (the private `storage` and the published
//! `metadata`) under one quota and key cap.
//!
//! The scope is read from the database before the call (one consistent snapshot) and the
//! call's writes are kept here, visible to its own later reads, until the host commits them
//! after a successful return. Nothing a plugin does can name another plugin's or session's
//! data: the scope is chosen by the host, and keys are plain strings within it.

use std::sync::Arc;

use crate::bindings::scratchpad::plugin::metadata::MetadataError;
use crate::bindings::scratchpad::plugin::storage::{Quota, StorageError};
use crate::config::Limits;
use crate::store::{ScopeWrites, Snapshot, Writes};

/// Longest key a plugin may use, in bytes.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// Deepest nesting of arrays and objects a metadata value may have. Readers of metadata
/// (`scratchpad show`, `Host::metadata`, JSON parsers of other runtimes) parse it whole, and
/// many refuse or overflow past a few hundred levels.
pub(crate) const MAX_METADATA_DEPTH: usize = 32;

/// One plugin's data in one session during a call: a snapshot plus pending writes, in two
/// key spaces — the plugin's private `storage` and the `metadata` it publishes — that share
/// one quota.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    state: Space,
    metadata: Space,
    used_bytes: u64,
    quota_bytes: u64,
    /// Keys in both spaces, and the most there may be (`storage_max_keys`).
    key_count: u64,
    max_keys: u64,
    /// Writes the quota refused during the call (counted in [`crate::metrics`]).
    quota_refusals: u32,
}

/// One key space of a scope.
#[derive(Debug, Default)]
struct Space {
    base: Arc<crate::store::Space>,
    writes: Writes,
}

impl Scope {
    /// The scope over `snapshot` with the storage quota and key cap of `limits`.
    pub(crate) fn new(snapshot: Snapshot, limits: &Limits) -> Self {
        let used_bytes = snapshot.bytes() as u64;
        let key_count = (snapshot.entries.len() + snapshot.metadata.len()) as u64;
        Scope {
            state: Space { base: snapshot.entries, writes: Writes::new() },
            metadata: Space { base: snapshot.metadata, writes: Writes::new() },
            used_bytes,
            quota_bytes: limits.storage_quota_bytes,
            key_count,
            max_keys: limits.storage_max_keys,
            quota_refusals: 0,
        }
    }

    /// Why a write of a new key is refused when the scope already holds its most keys.
    fn check_new_key(&self, space: &Space, key: &str) -> Result<(), String> {
        if self.key_count >= self.max_keys && space.get(key).is_none() {
            return Err(format!(
                "this plugin already keeps {} keys in this session, the most it may (storage_max_keys); \
                 delete keys or keep related values under one key",
                self.key_count
            ));
        }
        Ok(())
    }

    /// Counts a write the quota refused; `error`, to hand to the plugin.
    fn refused<E>(&mut self, error: E) -> E {
        self.quota_refusals += 1;
        error
    }

    /// How many writes the quota refused during the call.
    pub(crate) fn quota_refusals(&self) -> u32 {
        self.quota_refusals
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
        self.check_new_key(&self.state, &key).map_err(StorageError::InvalidKey)?;
        let (used, quota) = (self.used_bytes, self.quota_bytes);
        let (after, added) =
            self.state.set(key, value, used, quota).map_err(|q| self.refused(StorageError::QuotaExceeded(q)))?;
        self.used_bytes = after;
        self.key_count += u64::from(added);
        Ok(())
    }

    pub(crate) fn delete(&mut self, key: &str) -> bool {
        let freed = self.state.delete(key);
        self.forget(freed)
    }

    /// Accounts for a deleted key (`freed`: its bytes, `None` when there was none).
    fn forget(&mut self, freed: Option<u64>) -> bool {
        self.used_bytes -= freed.unwrap_or(0);
        self.key_count -= u64::from(freed.is_some());
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
        // The depth is checked first, with a scan that uses no recursion, so the parse below
        // never meets more than MAX_METADATA_DEPTH levels.
        let depth = json_depth(&value);
        if depth > MAX_METADATA_DEPTH {
            return Err(MetadataError::Invalid(format!(
                "the value of `{key}` nests arrays and objects {depth} levels deep; the most is {MAX_METADATA_DEPTH}"
            )));
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&value) {
            return Err(MetadataError::Invalid(format!("the value of `{key}` is not JSON: {e}")));
        }
        self.check_new_key(&self.metadata, &key).map_err(MetadataError::Invalid)?;
        let (used, quota) = (self.used_bytes, self.quota_bytes);
        let (after, added) = self
            .metadata
            .set(key, value.into_bytes(), used, quota)
            .map_err(|q| self.refused(MetadataError::QuotaExceeded(q)))?;
        self.used_bytes = after;
        self.key_count += u64::from(added);
        Ok(())
    }

    /// Withdraws metadata `key`.
    pub(crate) fn remove_metadata(&mut self, key: &str) -> bool {
        let freed = self.metadata.delete(key);
        self.forget(freed)
    }
}

impl Space {
    fn get(&self, key: &str) -> Option<&[u8]> {
        match self.writes.get(key) {
            Some(pending) => pending.as_deref(),
            None => self.base.get(key).map(Vec::as_slice),
        }
    }

    /// Sets `key`, given the scope's usage and quota; returns the new usage and whether the
    /// key is new. A write that grows the scope past its quota is refused (shrinking is always
    /// allowed).
    fn set(&mut self, key: String, value: Vec<u8>, used: u64, quota: u64) -> Result<(u64, bool), Quota> {
        let old = self.get(&key).map(|v| entry_size(&key, v));
        let new = entry_size(&key, &value);
        let after = used - old.unwrap_or(0) + new;
        if new > old.unwrap_or(0) && after > quota {
            return Err(Quota { used, requested: new - old.unwrap_or(0), limit: quota });
        }
        self.writes.insert(key, Some(value));
        Ok((after, old.is_none()))
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

/// The deepest nesting of arrays and objects in a JSON text, counted without parsing it
/// (brackets inside strings do not count), so any input costs one linear pass.
fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
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
    // Text columns of PostgreSQL cannot hold NUL; refused on every backend alike.
    if key.contains('\0') {
        return Err("keys must not contain NUL characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(entries: &[(&str, &str)], quota: u64) -> Scope {
        scope_with_keys(entries, quota, 1024)
    }

    fn scope_with_keys(entries: &[(&str, &str)], quota: u64, max_keys: u64) -> Scope {
        let entries = entries.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect();
        let limits = Limits { storage_quota_bytes: quota, storage_max_keys: max_keys, ..Limits::default() };
        Scope::new(Snapshot { entries: Arc::new(entries), metadata: Default::default() }, &limits)
    }

    #[test]
    fn the_key_cap_counts_both_spaces_and_frees_on_delete() {
        let mut s = scope_with_keys(&[("a", "1")], 1 << 20, 3);
        s.set("b".into(), b"2".to_vec()).unwrap();
        s.set_metadata("m".into(), "1".into()).unwrap();
        let refused = s.set("c".into(), b"3".to_vec()).unwrap_err();
        assert!(matches!(&refused, StorageError::InvalidKey(m) if m.contains("3 keys")), "{refused:?}");
        assert!(matches!(s.set_metadata("n".into(), "1".into()), Err(MetadataError::Invalid(m)) if m.contains("keys")));
        s.set("a".into(), b"replaced".to_vec()).expect("replacing a key adds none");
        assert!(s.delete("b"));
        s.set("c".into(), b"3".to_vec()).expect("a delete frees a key");
        assert_eq!(s.keys(""), vec!["a", "c"]);
    }

    #[test]
    fn metadata_deeper_than_the_limit_is_refused_in_one_pass() {
        let mut s = scope(&[], 64 << 20);
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        let refused = s.set_metadata("deep".into(), deep).unwrap_err();
        assert!(matches!(&refused, MetadataError::Invalid(m) if m.contains("1000000 levels")), "{refused:?}");
        let ok = "[".repeat(MAX_METADATA_DEPTH) + &"]".repeat(MAX_METADATA_DEPTH);
        s.set_metadata("ok".into(), ok).unwrap();
        s.set_metadata("brackets".into(), r#"{"a":"[[[[\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#.into()).unwrap();
        assert!(s.get("deep").is_none() && s.metadata("deep").is_none());
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
