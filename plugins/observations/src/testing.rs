//! Test fakes and a harness shared by the unit tests (compiled for tests only): an in-memory
//! blob store that behaves like the host's, and observations that count what the guest reads.

use std::cell::Cell;

use scratchpad_plugin_sdk::{BlobError, ContentKind, Entry, NewEntry, ToolCall, ToolError, Turn};
use serde_json::Value;

use crate::config::Config;
pub use crate::fixtures::big_log;
use crate::plugin::Observations;
use crate::store::{Blobs, HOST_READ_CAP, Source};

/// A fake sha256 (the host computes the real one; the component only passes it on).
pub const FAKE_SHA: &str = "abc123def4560000000000000000000000000000000000000000000000000000";

enum Data {
    Bytes(Vec<u8>),
    /// `unit` repeated `times` times, produced on demand (nothing of that size is allocated).
    Repeated {
        unit: Vec<u8>,
        times: u64,
    },
}

/// An observation held "by the host": the guest sees it only through [`Source`], and every
/// byte the guest asks for is counted. Past `budget` requested bytes, `read` panics.
pub struct FakeObservation {
    data: Data,
    kind: ContentKind,
    metadata: String,
    requested: Cell<u64>,
    budget: u64,
}

impl FakeObservation {
    /// A text observation.
    pub fn text(text: &str) -> Self {
        Self::new(Data::Bytes(text.as_bytes().to_vec()), ContentKind::Text)
    }

    /// A binary observation.
    pub fn binary(bytes: &[u8]) -> Self {
        Self::new(Data::Bytes(bytes.to_vec()), ContentKind::Binary)
    }

    /// A text observation of `unit` repeated `times` times, never materialised.
    pub fn repeated(unit: &str, times: u64) -> Self {
        Self::new(Data::Repeated { unit: unit.as_bytes().to_vec(), times }, ContentKind::Text)
    }

    fn new(data: Data, kind: ContentKind) -> Self {
        FakeObservation { data, kind, metadata: "{}".into(), requested: Cell::new(0), budget: u64::MAX }
    }

    /// The same observation with this metadata (JSON object text).
    pub fn with_metadata(mut self, metadata: &str) -> Self {
        self.metadata = metadata.into();
        self
    }

    /// The same observation, panicking once the guest has asked for more than `budget` bytes.
    pub fn with_read_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }

    /// Bytes the guest asked for so far.
    pub fn requested(&self) -> u64 {
        self.requested.get()
    }

    fn byte_at(&self, offset: u64) -> u8 {
        match &self.data {
            Data::Bytes(bytes) => bytes[offset as usize],
            Data::Repeated { unit, .. } => unit[(offset % unit.len() as u64) as usize],
        }
    }

    /// The whole content, as the host copies it into the store (not counted: it never enters
    /// the guest). `None` for repeated observations, which the fake store keeps empty.
    fn host_bytes(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Bytes(bytes) => Some(bytes),
            Data::Repeated { .. } => None,
        }
    }
}

impl Source for FakeObservation {
    fn size(&self) -> u64 {
        match &self.data {
            Data::Bytes(bytes) => bytes.len() as u64,
            Data::Repeated { unit, times } => unit.len() as u64 * times,
        }
    }
    fn kind(&self) -> ContentKind {
        self.kind
    }
    fn size_chars(&self) -> u64 {
        match (&self.data, self.kind) {
            (_, ContentKind::Binary) => self.size(),
            (Data::Bytes(bytes), _) => std::str::from_utf8(bytes).unwrap().chars().count() as u64,
            (Data::Repeated { unit, times }, _) => std::str::from_utf8(unit).unwrap().chars().count() as u64 * times,
        }
    }
    fn read(&self, offset: u64, len: u32) -> Vec<u8> {
        let len = len.min(HOST_READ_CAP);
        self.requested.set(self.requested.get() + u64::from(len));
        assert!(
            self.requested.get() <= self.budget,
            "the guest asked for {} bytes of the observation, more than its budget of {}",
            self.requested.get(),
            self.budget
        );
        let end = (offset + u64::from(len)).min(self.size());
        (offset.min(end)..end).map(|o| self.byte_at(o)).collect()
    }
    fn sha256(&self) -> String {
        FAKE_SHA.into()
    }
    fn metadata(&self) -> String {
        self.metadata.clone()
    }
}

/// The host's blob store of one session, in memory. Ids are 16 lowercase hex digits.
#[derive(Default)]
pub struct MemoryBlobs {
    /// Entries with their content, oldest first.
    pub entries: Vec<(Entry, Vec<u8>)>,
    /// Largest `len` the guest passed to `read`.
    pub largest_read: Cell<u32>,
    /// Total bytes the guest asked for through `read`.
    pub requested: Cell<u64>,
    /// When set, `store` fails with this reason.
    pub refuse: Option<String>,
}

impl MemoryBlobs {
    /// Marks entry `id` as expired (the host's clock passed its `expires-at`).
    pub fn expire(&mut self, id: &str) {
        self.entries.iter_mut().filter(|(e, _)| e.id == id).for_each(|(e, _)| e.expired = true);
    }

    /// The entry `id`.
    pub fn entry(&self, id: &str) -> &Entry {
        &self.entries.iter().find(|(e, _)| e.id == id).expect("stored entry").0
    }
}

impl Blobs for MemoryBlobs {
    type Content = FakeObservation;

    fn store(&mut self, content: &FakeObservation, new: NewEntry) -> Result<String, BlobError> {
        if let Some(reason) = &self.refuse {
            return Err(BlobError::Invalid(reason.clone()));
        }
        if new.ttl_seconds == 0 {
            return Err(BlobError::Invalid("ttl-seconds must be at least 1".into()));
        }
        let id = format!("{:016x}", 0x485d_7bea_e4e1_44eb_u64 + self.entries.len() as u64);
        let bytes = content.host_bytes().map(<[u8]>::to_vec).unwrap_or_default();
        let entry = Entry {
            id: id.clone(),
            turn_id: new.turn_id,
            step: new.step,
            tool: new.tool,
            kind: content.kind(),
            size_bytes: content.size(),
            size_chars: content.size_chars(),
            ascii: content.host_bytes().is_some_and(<[u8]>::is_ascii),
            sha256: content.sha256(),
            summary: new.summary,
            metadata: content.metadata(),
            created_at_ms: 1_000,
            expires_at_ms: 1_000 + new.ttl_seconds * 1000,
            expired: false,
        };
        self.entries.push((entry, bytes));
        Ok(id)
    }

    fn stat(&self, id: &str) -> Option<Entry> {
        self.entries.iter().find(|(e, _)| e.id == id).map(|(e, _)| e.clone())
    }

    fn list_turn(&self, turn_id: &str) -> Vec<Entry> {
        self.entries.iter().filter(|(e, _)| e.turn_id == turn_id).map(|(e, _)| e.clone()).collect()
    }

    fn read(&self, id: &str, offset: u64, len: u32) -> Result<Vec<u8>, BlobError> {
        let len = len.min(HOST_READ_CAP);
        self.largest_read.set(self.largest_read.get().max(len));
        self.requested.set(self.requested.get() + u64::from(len));
        let (_, bytes) = self.entries.iter().find(|(e, _)| e.id == id).ok_or(BlobError::NotFound(id.into()))?;
        let start = (offset as usize).min(bytes.len());
        let end = (start + len as usize).min(bytes.len());
        Ok(bytes[start..end].to_vec())
    }
}

/// Turn `id` of session `s1`.
pub fn turn(id: &str) -> Turn {
    Turn { session_id: "s1".into(), turn_id: id.into(), turn_index: 0, tokens_used: None, context_window: None }
}

/// Call number `step` of `tool` with these arguments.
pub fn call(step: u32, tool: &str, arguments: &str) -> ToolCall {
    ToolCall { name: tool.into(), arguments: arguments.into(), step }
}

/// One session's blob store with a configuration, driven through [`Observations`].
pub struct Harness {
    /// The session's blob store.
    pub blobs: MemoryBlobs,
    /// The configuration.
    pub config: Config,
}

impl Harness {
    /// A harness with the configuration parsed from `json`.
    pub fn new(json: &str) -> Harness {
        Harness { blobs: MemoryBlobs::default(), config: Config::from_json(json).unwrap() }
    }

    /// The component's logic over this harness's store.
    pub fn plugin(&mut self) -> Observations<'_, MemoryBlobs> {
        Observations::new(&mut self.blobs, &self.config)
    }

    /// `after-tool-result` for call `step` of `tool` in turn `turn_id`; the replacement parsed.
    pub fn offload(&mut self, turn_id: &str, step: u32, tool: &str, observation: &FakeObservation) -> Option<Value> {
        let text = self.plugin().after_tool_result(&turn(turn_id), &call(step, tool, "{}"), observation)?;
        Some(serde_json::from_str(&text).expect("the synthetic observation is JSON"))
    }

    /// Offloads `observation` as step `step` of `fs_read` in turn `turn_id`; returns its id.
    pub fn offload_id(&mut self, turn_id: &str, step: u32, observation: &FakeObservation) -> String {
        let synthetic = self.offload(turn_id, step, "fs_read", observation).expect("offloaded");
        synthetic["scratchpad_id"].as_str().unwrap().to_owned()
    }

    /// `scratchpad_read` in turn `turn_id`; the result parsed.
    pub fn read(&mut self, turn_id: &str, arguments: &str) -> Result<Value, ToolError> {
        let output = self.plugin().call_tool(&turn(turn_id), crate::schema::READ_TOOL, arguments)?;
        Ok(serde_json::from_str(&output.content).expect("the result is JSON"))
    }

    /// `scratchpad_read` in turn `turn_id`, expecting success.
    pub fn ok(&mut self, turn_id: &str, arguments: &str) -> Value {
        self.read(turn_id, arguments).unwrap_or_else(|e| panic!("scratchpad_read {arguments} failed: {e:?}"))
    }

    /// `before-tool-call` for call `step` of `tool` in turn `turn_id`.
    pub fn resolve(&mut self, turn_id: &str, step: u32, tool: &str, args: &str) -> Result<Option<String>, ToolError> {
        self.plugin().before_tool_call(&turn(turn_id), &call(step, tool, args))
    }
}

/// The message of any error case.
pub fn message(error: &ToolError) -> &str {
    match error {
        ToolError::UnknownTool(m)
        | ToolError::InvalidArguments(m)
        | ToolError::Rejected(m)
        | ToolError::NotFound(m)
        | ToolError::Failed(m) => m,
    }
}
