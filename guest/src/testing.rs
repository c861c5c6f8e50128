//! Test fakes and a harness shared by the unit tests (compiled for tests only).

pub use scratchpad_plugin_sdk::WordTokenizer;
use scratchpad_plugin_sdk::{MemoryStorage, Tokenizer, ToolError, ToolOutput, Turn};

use crate::config::Config;
use crate::plugin::Scratchpad;

/// A fake tokenizer: one token per char.
pub struct ChattyTokenizer;

impl Tokenizer for ChattyTokenizer {
    fn count(&self, text: &str) -> u32 {
        text.chars().count() as u32
    }
}

/// A fake tokenizer in which a cut word can cost more than the whole word, as with BPE: per
/// whitespace-separated word, 1 token for an even number of chars, 2 for an odd number; and 1
/// per whitespace char.
pub struct PartialWordTokenizer;

impl Tokenizer for PartialWordTokenizer {
    fn count(&self, text: &str) -> u32 {
        let words: u32 = text.split_whitespace().map(|word| if word.chars().count() % 2 == 0 { 1 } else { 2 }).sum();
        words + text.chars().filter(|c| c.is_whitespace()).count() as u32
    }
}

/// A turn of session `s1` with the given index.
pub fn turn(index: u32) -> Turn {
    Turn {
        session_id: "s1".into(),
        turn_id: format!("t{index}"),
        turn_index: index,
        tokens_used: None,
        context_window: None,
    }
}

/// One session's storage with a configuration, driven through [`Scratchpad`].
pub struct Harness {
    /// The session's storage.
    pub storage: MemoryStorage,
    /// The configuration.
    pub config: Config,
}

impl Harness {
    /// A harness with the configuration parsed from `json`.
    pub fn new(json: &str) -> Harness {
        Harness { storage: MemoryStorage::default(), config: Config::from_json(json).unwrap() }
    }

    /// The scratchpad over this harness's storage (word-counting tokenizer).
    pub fn pad(&mut self) -> Scratchpad<'_, MemoryStorage, WordTokenizer> {
        Scratchpad::new(&mut self.storage, &WordTokenizer, &self.config)
    }

    /// Calls tool `name` in turn 0.
    pub fn call(&mut self, name: &str, arguments: &str) -> Result<ToolOutput, ToolError> {
        self.pad().call_tool(&turn(0), name, arguments)
    }

    /// Calls tool `name` in turn 0, expecting success; returns the output text.
    pub fn ok(&mut self, name: &str, arguments: &str) -> String {
        match self.call(name, arguments) {
            Ok(output) => output.content,
            Err(e) => panic!("{name} {arguments} failed: {e:?}"),
        }
    }

    /// Calls tool `name`, expecting an error, and checks that storage did not change.
    pub fn err(&mut self, name: &str, arguments: &str) -> ToolError {
        let before = self.storage.clone();
        let error = self.call(name, arguments).expect_err("expected an error");
        assert_eq!(self.storage, before, "storage changed by failing call {name} {arguments}");
        error
    }

    /// The stored text under `key` ("" when absent).
    pub fn text(&self, key: &str) -> String {
        crate::state::read_text(&self.storage, key)
    }
}

/// A [`MemoryStorage`] that records the keys of every `set` and `delete`, in order.
pub struct RecordingStorage {
    /// The storage written through.
    pub inner: MemoryStorage,
    /// Keys written or deleted, in order.
    pub writes: Vec<String>,
    /// When true, every `set` fails with a quota error (nothing is written).
    pub full: bool,
}

impl RecordingStorage {
    /// Records writes to a copy of `inner`.
    pub fn new(inner: &MemoryStorage) -> RecordingStorage {
        RecordingStorage { inner: inner.clone(), writes: Vec::new(), full: false }
    }
}

impl scratchpad_plugin_sdk::Storage for RecordingStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), scratchpad_plugin_sdk::StorageError> {
        if self.full {
            let quota = scratchpad_plugin_sdk::Quota { used: 100, requested: value.len() as u64, limit: 100 };
            return Err(scratchpad_plugin_sdk::StorageError::QuotaExceeded(quota));
        }
        self.writes.push(key.to_string());
        self.inner.set(key, value)
    }
    fn delete(&mut self, key: &str) -> bool {
        self.writes.push(key.to_string());
        self.inner.delete(key)
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        self.inner.list(prefix)
    }
}
