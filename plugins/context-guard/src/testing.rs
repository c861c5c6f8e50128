//! A native harness for the unit tests: the policy over in-memory seams.

use scratchpad_plugin_sdk::{
    Injection, MemoryMetadata, MemoryStorage, RecordedCheckpoints, Storage, StorageError, ToolCall, Turn, WordTokenizer,
};

use crate::config::Config;
use crate::guard::Guard;

/// [`MemoryStorage`] that counts the writes made to it (each one a commit on a real host).
#[derive(Debug, Default, Clone)]
pub struct CountedStorage {
    pub inner: MemoryStorage,
    pub writes: usize,
}

impl Storage for CountedStorage {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
    fn set(&mut self, key: &str, value: &[u8]) -> Result<(), StorageError> {
        self.writes += 1;
        self.inner.set(key, value)
    }
    fn delete(&mut self, key: &str) -> bool {
        self.writes += 1;
        self.inner.delete(key)
    }
    fn list(&self, prefix: &str) -> Vec<String> {
        self.inner.list(prefix)
    }
}

/// One session's seams and the configuration, kept across calls like the host keeps storage.
pub struct Harness {
    pub config: Config,
    pub storage: CountedStorage,
    pub metadata: MemoryMetadata,
    pub checkpoints: RecordedCheckpoints,
    pub warnings: Vec<String>,
}

impl Harness {
    pub fn new(config: Config) -> Self {
        Harness {
            config,
            storage: CountedStorage::default(),
            metadata: MemoryMetadata::default(),
            checkpoints: RecordedCheckpoints { available: true, requests: Vec::new() },
            warnings: Vec::new(),
        }
    }

    fn with<R>(
        &mut self,
        f: impl FnOnce(&mut Guard<'_, CountedStorage, WordTokenizer, MemoryMetadata, RecordedCheckpoints>) -> R,
    ) -> R {
        let mut guard =
            Guard::new(&mut self.storage, &WordTokenizer, &mut self.metadata, &mut self.checkpoints, &self.config);
        let out = f(&mut guard);
        self.warnings.extend(std::mem::take(&mut guard.warnings));
        out
    }

    pub fn query(&mut self, turn: &Turn, message: &str) -> Vec<Injection> {
        self.with(|g| g.before_query(turn, message))
    }

    pub fn respond(&mut self, turn: &Turn, reply: &str) {
        self.with(|g| g.after_response(turn, reply))
    }

    pub fn tool(&mut self, turn: &Turn, name: &str, arguments: &str) {
        let call = ToolCall { name: name.into(), arguments: arguments.into(), step: 1 };
        self.with(|g| g.before_tool_call(turn, &call))
    }

    pub fn before_compaction(&mut self, turn: &Turn) -> Option<String> {
        self.with(|g| g.before_compaction(turn))
    }

    pub fn after_compaction(&mut self, turn: &Turn) {
        self.with(|g| g.after_compaction(turn))
    }

    pub fn flush_actioned(&self) -> Option<&str> {
        self.metadata.entries.get(crate::guard::FLUSH_ACTIONED).map(String::as_str)
    }
}

/// Turn `index` (id `t{index}`) with `used` of a 200k window.
pub fn turn(index: u32, used: Option<u64>) -> Turn {
    Turn {
        session_id: "s".into(),
        turn_id: format!("t{index}"),
        turn_index: index,
        tokens_used: used,
        context_window: Some(200_000),
    }
}
