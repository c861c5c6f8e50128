//! The storage and tokenizer seams between a plugin's logic and the host.
//!
//! Logic written against these traits runs unchanged in three places: inside the component
//! (the `Host*` types call the WIT imports), in native unit tests ([`MemoryStorage`]), and
//! natively inside the host as the benchmarks' baseline.

use std::collections::BTreeMap;

use crate::StorageError;
use crate::bindings::scratchpad::plugin::{storage as wit_storage, tokens as wit_tokens};

/// Key-value storage scoped to one plugin and one session (see `wit/host.wit`).
pub trait Storage {
    /// The value under `key`, if any.
    fn get(&self, key: &str) -> Option<Vec<u8>>;
    /// Stores `value` under `key`.
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), StorageError>;
    /// Removes `key`; returns whether it was there.
    fn delete(&mut self, key: &str) -> bool;
    /// Keys starting with `prefix`, sorted.
    fn list(&self, prefix: &str) -> Vec<String>;
}

/// Counts tokens the way the model does.
pub trait Tokenizer {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> u32;
}

/// [`Storage`] through the host's `storage` import. Only usable inside a component.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostStorage;

impl Storage for HostStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        wit_storage::get(key)
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), StorageError> {
        wit_storage::set(key, value)
    }
    fn delete(&mut self, key: &str) -> bool {
        wit_storage::delete(key)
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        wit_storage::keys(prefix)
    }
}

/// [`Tokenizer`] through the host's `tokens` import. Only usable inside a component.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostTokenizer;

impl Tokenizer for HostTokenizer {
    fn count(&self, text: &str) -> u32 {
        wit_tokens::count(text)
    }
}

/// A [`Tokenizer`] for native unit tests: one token per whitespace-separated word, so the
/// expected counts can be worked out by hand.
#[derive(Debug, Default, Clone, Copy)]
pub struct WordTokenizer;

impl Tokenizer for WordTokenizer {
    fn count(&self, text: &str) -> u32 {
        text.split_whitespace().count() as u32
    }
}

/// In-memory [`Storage`] for native unit tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryStorage {
    /// The stored pairs.
    pub entries: BTreeMap<String, Vec<u8>>,
}

impl Storage for MemoryStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.entries.get(key).cloned()
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), StorageError> {
        self.entries.insert(key.to_owned(), value.to_vec());
        Ok(())
    }
    fn delete(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        self.entries.keys().filter(|k| k.starts_with(prefix)).cloned().collect()
    }
}
