//! The seam between a plugin's logic and the host's `metadata` import: facts a plugin
//! publishes about a session for the runtime and its operators (see `wit/host.wit`).

use std::collections::BTreeMap;

use crate::bindings::scratchpad::plugin::metadata as wit_metadata;

pub use wit_metadata::MetadataError;

/// Session metadata scoped to one plugin and one session.
pub trait Metadata {
    /// Publishes `value` (a JSON text) under `key`.
    fn set(&mut self, key: &str, value: &str) -> Result<(), MetadataError>;
    /// The value published under `key`, if any.
    fn get(&self, key: &str) -> Option<String>;
    /// Withdraws `key`; returns whether it was there.
    fn remove(&mut self, key: &str) -> bool;
}

/// [`Metadata`] through the host's `metadata` import. Only usable inside a component.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostMetadata;

impl Metadata for HostMetadata {
    fn set(&mut self, key: &str, value: &str) -> Result<(), MetadataError> {
        wit_metadata::set(key, value)
    }
    fn get(&self, key: &str) -> Option<String> {
        wit_metadata::get(key)
    }
    fn remove(&mut self, key: &str) -> bool {
        wit_metadata::remove(key)
    }
}

/// In-memory [`Metadata`] for native unit tests. Refuses values that are not JSON, as the
/// host does.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryMetadata {
    /// The published pairs.
    pub entries: BTreeMap<String, String>,
}

impl Metadata for MemoryMetadata {
    fn set(&mut self, key: &str, value: &str) -> Result<(), MetadataError> {
        if let Err(e) = serde_json::from_str::<serde_json::Value>(value) {
            return Err(MetadataError::Invalid(format!("the value of `{key}` is not JSON: {e}")));
        }
        self.entries.insert(key.to_owned(), value.to_owned());
        Ok(())
    }
    fn get(&self, key: &str) -> Option<String> {
        self.entries.get(key).cloned()
    }
    fn remove(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }
}
