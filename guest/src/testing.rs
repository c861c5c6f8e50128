//! Test fakes and a harness shared by the unit tests (compiled for tests only).

use std::cell::Cell;

pub use scratchpad_plugin_sdk::WordTokenizer;
use scratchpad_plugin_sdk::{
    Checkpoint, CheckpointRequest, Checkpoints, MemoryIndex, MemoryStorage, Stored, Summary, Tokenizer, ToolError,
    ToolOutput, Trigger, Turn,
};

use crate::config::Config;
use crate::plugin::Scratchpad;
use crate::recall::Clock;

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

/// 2024-03-01T00:00:00Z, the harness clock's first reading.
pub const MARCH_1_2024: u64 = 1_709_251_200_000;
/// A day in milliseconds.
pub const DAY: u64 = 86_400_000;

/// A clock the test sets.
pub struct TestClock(pub Cell<u64>);

impl Clock for TestClock {
    fn now_ms(&self) -> u64 {
        self.0.get()
    }
}

/// [`Checkpoints`] of a host with a summarizer, whose latest checkpoint the test sets.
#[derive(Default)]
pub struct LatestCheckpoint(pub Option<Checkpoint>);

impl Checkpoints for LatestCheckpoint {
    /// A host with a summarizer (recall reads the latest checkpoint only then).
    fn available(&self) -> bool {
        true
    }
    fn request(&mut self, _request: CheckpointRequest) -> Result<(), String> {
        Err("no summarizer".into())
    }
    fn latest(&self) -> Option<Checkpoint> {
        self.0.clone()
    }
}

/// A checkpoint with id `id`, stored at `at_ms`.
pub fn checkpoint(id: &str, at_ms: u64, summary: &str, decisions: &[&str], open: &[&str]) -> Checkpoint {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    Checkpoint {
        id: id.into(),
        created_at_ms: at_ms,
        turn_id: "t3".into(),
        trigger: Trigger::MessageCount(15),
        tokens_at_checkpoint: 1000,
        message_count_at_checkpoint: 15,
        summary: Summary {
            summary: summary.into(),
            topics: Vec::new(),
            key_decisions: strings(decisions),
            open_questions: strings(open),
        },
    }
}

/// One session's storage with a configuration, driven through [`Scratchpad`] with recall over
/// a project's in-memory index (read-write, calls in session `s1`).
pub struct Harness {
    /// The session's storage.
    pub storage: MemoryStorage,
    /// The configuration.
    pub config: Config,
    /// The project's index.
    pub index: MemoryIndex,
    /// The session's checkpoints.
    pub checkpoints: LatestCheckpoint,
    /// The clock, from [`MARCH_1_2024`].
    pub clock: TestClock,
}

impl Harness {
    /// A harness with the configuration parsed from `json`.
    pub fn new(json: &str) -> Harness {
        Harness {
            storage: MemoryStorage::default(),
            config: Config::from_json(json).unwrap(),
            index: MemoryIndex::new("s1"),
            checkpoints: LatestCheckpoint::default(),
            clock: TestClock(Cell::new(MARCH_1_2024)),
        }
    }

    /// The scratchpad over this harness's storage (word-counting tokenizer), with recall.
    pub fn pad(&mut self) -> Scratchpad<'_, MemoryStorage, WordTokenizer> {
        Scratchpad::new(&mut self.storage, &WordTokenizer, &self.config).with_recall(
            &mut self.index,
            &self.checkpoints,
            &self.clock,
        )
    }

    /// Starts session `id` of the same project: empty storage, the same index, a day later.
    pub fn next_session(&mut self, id: &str) {
        self.storage = MemoryStorage::default();
        self.index.session = id.into();
        self.clock.0.set(self.clock.0.get() + DAY);
    }

    /// The indexed documents, oldest first (ties by id).
    pub fn documents(&self) -> Vec<Stored> {
        let mut documents: Vec<Stored> = self.index.documents.values().cloned().collect();
        documents.sort_by_key(|d| d.at_ms);
        documents
    }

    /// The ids of the indexed documents of `kind`, by id.
    pub fn ids(&self, kind: &str) -> Vec<String> {
        self.index.documents.values().filter(|d| d.kind == kind).map(|d| d.id.clone()).collect()
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

    /// Calls tool `name`, expecting an error, and checks that neither storage nor the index
    /// changed.
    pub fn err(&mut self, name: &str, arguments: &str) -> ToolError {
        let before = self.storage.clone();
        let indexed = format!("{:?}", self.index.documents);
        let error = self.call(name, arguments).expect_err("expected an error");
        assert_eq!(self.storage, before, "storage changed by failing call {name} {arguments}");
        assert_eq!(format!("{:?}", self.index.documents), indexed, "index changed by failing call {name} {arguments}");
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
