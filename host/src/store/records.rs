//! The records the storage contract passes between the host and a backend.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::resources::ObservationFacts;
use crate::types::{Checkpoint, Summary, SummaryRequest};
use crate::types::{ContentKind, Injection, Origin};

/// Bytes per stored chunk of an offloaded observation. One large value would make a read at
/// offset N walk the whole value up to N (SQLite's overflow-page chain: 41 ms for 2 KB at the
/// end of 100 MB); with chunks a range read touches only the chunks it needs.
pub(crate) const CHUNK: usize = 64 << 10;

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The session's id.
    pub id: String,
    /// How it was created.
    pub origin: Origin,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Time of the last committed plugin write, Unix milliseconds.
    pub updated_at: i64,
    /// The runtime's id of the current turn, once a turn has started.
    pub turn_id: Option<String>,
    /// 0-based index of the current turn; -1 before the first turn.
    pub turn_index: i64,
    /// Standing guidance from every plugin's `before-session-create`.
    pub guidance: Vec<Injection>,
    /// Compactions recorded for the session.
    pub compaction_count: i64,
    /// The runtime's last reported token total, when known.
    pub total_tokens: Option<i64>,
    /// The project it belongs to (what recall keeps its findings under), if any.
    #[serde(default)]
    pub project: Option<String>,
}

/// What a plugin contributes to a new session.
pub(crate) struct PluginInit {
    pub(crate) plugin: String,
    /// Copy the parent's state of this plugin first.
    pub(crate) inherit: bool,
    /// The hook's own writes, applied on top of any copy.
    pub(crate) writes: ScopeWrites,
}

/// What an operation reads of its session's row: the current turn, the version (for the
/// optimistic commit) and the standing guidance, still as its JSON text.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) turn_id: Option<String>,
    pub(crate) turn_index: i64,
    pub(crate) version: i64,
    pub(crate) guidance_json: String,
    /// The project the session belongs to.
    pub(crate) project: Option<String>,
}

/// The standing guidance stored as JSON text.
pub(crate) fn parse_guidance(json: &str) -> Vec<Injection> {
    serde_json::from_str(json).unwrap_or_default()
}

/// The tag a session's origin is stored as.
pub(crate) fn origin_tag(origin: &Origin) -> &'static str {
    match origin {
        Origin::New => "new",
        Origin::Spawn { copy: false, .. } => "spawn",
        Origin::Spawn { copy: true, .. } => "spawn-copy",
        Origin::Fork { .. } => "fork",
    }
}

/// The origin stored as `tag` with `parent`.
pub(crate) fn origin_from(tag: &str, parent: Option<String>) -> Origin {
    match (tag, parent) {
        ("fork", Some(parent)) => Origin::Fork { parent },
        ("spawn", Some(parent)) => Origin::Spawn { parent, copy: false },
        ("spawn-copy", Some(parent)) => Origin::Spawn { parent, copy: true },
        _ => Origin::New,
    }
}

/// A call's pending writes: `Some(value)` sets, `None` deletes.
pub(crate) type Writes = BTreeMap<String, Option<Vec<u8>>>;

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

/// One key space of a scope as read: key to value.
pub(crate) type Space = BTreeMap<String, Vec<u8>>;

/// A consistent read of one scope (the session's version it was read at is the operation's).
/// Cloning it is cheap: the maps are shared, so the hot-session cache (`hot.rs`) hands the
/// same read to every call without copying it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// The plugin's storage keys.
    pub(crate) entries: Arc<Space>,
    /// The metadata the plugin published.
    pub(crate) metadata: Arc<Space>,
}

impl Snapshot {
    /// The key space `space` names: 0 for storage, anything else for metadata (the tag the
    /// backends' scope queries return).
    pub(crate) fn space_mut(&mut self, space: i64) -> &mut Space {
        Arc::make_mut(if space == 0 { &mut self.entries } else { &mut self.metadata })
    }

    /// Bytes of keys and values, what the hot-session cache counts against its budget.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.iter().chain(self.metadata.iter()).map(|(k, v)| k.len() + v.len()).sum()
    }

    /// The scope after `writes` were committed on top of it.
    pub(crate) fn with_writes(&self, writes: &ScopeWrites) -> Snapshot {
        fn apply(base: &Arc<Space>, writes: &Writes) -> Arc<Space> {
            if writes.is_empty() {
                return base.clone();
            }
            let mut space = Space::clone(base);
            for (key, value) in writes {
                match value {
                    Some(value) => space.insert(key.clone(), value.clone()),
                    None => space.remove(key),
                };
            }
            Arc::new(space)
        }
        Snapshot { entries: apply(&self.entries, &writes.state), metadata: apply(&self.metadata, &writes.metadata) }
    }
}

/// Whether a commit went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// The writes are durable.
    Done,
    /// Another call committed to the session since the snapshot; nothing was written.
    Conflict,
}

/// One plugin call's effects to commit.
pub(crate) struct PluginWrites {
    /// The plugin.
    pub(crate) plugin: String,
    /// Its storage and metadata writes.
    pub(crate) writes: ScopeWrites,
    /// Its new blob entries.
    pub(crate) blobs: Vec<PendingBlob>,
    /// Its writes to the project's search index, in order.
    pub(crate) index: Vec<super::index::IndexWrite>,
}

/// One plugin scope an operation reads at its start.
pub(crate) struct ScopeToRead {
    /// The plugin's index in the host.
    pub(crate) index: usize,
    /// Its name.
    pub(crate) plugin: String,
}

/// What an operation reads at its start.
pub(crate) struct Read {
    pub(crate) head: Head,
    /// (plugin index, snapshot) of each involved plugin.
    pub(crate) snapshots: Vec<(usize, Snapshot)>,
}

/// An entry written by a call, committed with the call's other writes.
pub(crate) struct PendingBlob {
    pub(crate) id: String,
    pub(crate) turn_id: String,
    pub(crate) step: u32,
    pub(crate) tool: String,
    pub(crate) summary: String,
    pub(crate) created_at_ms: u64,
    pub(crate) expires_at_ms: u64,
    pub(crate) content: std::sync::Arc<ObservationFacts>,
}

/// A stored entry's description (without its content).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BlobEntry {
    /// 16 lowercase hex digits.
    pub id: String,
    /// The plugin that stored it.
    pub plugin: String,
    /// The turn it belongs to.
    pub turn_id: String,
    /// The step that produced it.
    pub step: u32,
    /// The tool that produced it.
    pub tool: String,
    /// Text or binary.
    pub kind: ContentKind,
    /// Content length in bytes.
    pub size_bytes: u64,
    /// Content length in characters (bytes for binary).
    pub size_chars: u64,
    /// Whether the content is pure ASCII.
    pub ascii: bool,
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// The summary shown to the model.
    pub summary: String,
    /// The observation's metadata (JSON object text).
    pub metadata: String,
    /// Creation time, Unix milliseconds.
    pub created_at_ms: u64,
    /// Expiry time, Unix milliseconds.
    pub expires_at_ms: u64,
}

impl PendingBlob {
    pub(crate) fn entry(&self, plugin: &str) -> BlobEntry {
        BlobEntry {
            id: self.id.clone(),
            plugin: plugin.to_owned(),
            turn_id: self.turn_id.clone(),
            step: self.step,
            tool: self.tool.clone(),
            kind: self.content.kind,
            size_bytes: self.content.bytes.len() as u64,
            size_chars: self.content.size_chars,
            ascii: self.content.ascii,
            sha256: self.content.sha256().to_owned(),
            summary: self.summary.clone(),
            metadata: self.content.metadata.clone(),
            created_at_ms: self.created_at_ms,
            expires_at_ms: self.expires_at_ms,
        }
    }
}

/// What a plugin's live (unexpired) entries in a session take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveUsage {
    /// Content bytes.
    pub(crate) bytes: u64,
    /// Entries.
    pub(crate) entries: u64,
}

/// The tag a content kind is stored as.
pub(crate) fn kind_tag(kind: ContentKind) -> &'static str {
    match kind {
        ContentKind::Text => "text",
        ContentKind::Binary => "binary",
    }
}

/// The content kind stored as `tag`.
pub(crate) fn kind_from(tag: &str) -> ContentKind {
    if tag == "binary" { ContentKind::Binary } else { ContentKind::Text }
}

/// What the database says about a name a plugin is loaded under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The name was free, or already this component's: it is recorded as this component's.
    Granted,
    /// Another component owns the name's data.
    Owned {
        /// The recorded identity.
        identity: String,
        /// When it was recorded, Unix ms.
        recorded_at_ms: i64,
    },
}

/// Everything stored about one session, as `scratchpad migrate` copies it between stores.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionExport {
    /// The session row.
    pub(crate) record: SessionRecord,
    /// The parent session's id, if any (also in `record.origin`).
    pub(crate) parent: Option<String>,
    /// The session's version (its commit counter).
    pub(crate) version: i64,
    /// The standing guidance as stored (JSON text).
    pub(crate) guidance_json: String,
    /// (plugin, key, value) of every storage key, ordered.
    pub(crate) state: Vec<(String, String, Vec<u8>)>,
    /// (plugin, key, JSON text) of every metadata key, ordered.
    pub(crate) metadata: Vec<(String, String, String)>,
    /// Every checkpoint, oldest first.
    pub(crate) checkpoints: Vec<Checkpoint>,
    /// Every offloaded observation with its content, oldest first.
    pub(crate) observations: Vec<(BlobEntry, Vec<u8>)>,
    /// Every document the session kept in its project's search index, oldest first.
    pub(crate) index: Vec<super::index::IndexedDocument>,
}

/// The checkpoint written for `request`, stored under `id` at `now_ms` after `parent_id`.
pub(crate) fn new_checkpoint(
    request: &SummaryRequest,
    summary: &Summary,
    id: String,
    parent_id: Option<String>,
    now_ms: i64,
) -> Checkpoint {
    Checkpoint {
        id,
        parent_id,
        session_id: request.session_id.clone(),
        plugin: request.plugin.clone(),
        turn_id: request.turn_id.clone(),
        created_at_ms: now_ms as u64,
        trigger: request.trigger,
        tokens_at_checkpoint: request.tokens,
        message_count_at_checkpoint: request.message_count,
        checkpoint: summary.clone(),
    }
}

/// Something a plugin did in a session that an operator wants to see afterwards: a failed call
/// (none of its writes kept) or a write its storage quota refused. A tool's own refusal (a
/// tool error, e.g. an append over the notes budget) is the caller's bad input, which changes
/// nothing stored; it is counted in the metrics only. Kept
/// per session, the newest [`MAX_EVENTS_PER_SESSION`] only; no plugin can read them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct PluginEvent {
    /// The plugin.
    pub plugin: String,
    /// The hook or tool that was running (`before-query`, `tool session.scratchpad`, ...).
    pub hook: String,
    /// What happened.
    pub kind: EventKind,
    /// What the host or the plugin said, at most [`MAX_EVENT_MESSAGE`] bytes.
    pub message: String,
    /// When, Unix milliseconds.
    pub at_ms: i64,
}

/// What a [`PluginEvent`] records; written and shown by its name ([`EventKind::as_str`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum EventKind {
    /// A call failed ([`crate::PluginFailure`]); its name is the failure's kind (`timeout`, …).
    Failure(crate::FailureKind),
    /// The plugin's storage quota refused a write (`quota`).
    Quota,
    /// A kind this version does not know, written by a newer host: its name as stored.
    Unknown(String),
}

impl EventKind {
    /// The kind's name: a failure kind's ([`crate::FailureKind::as_str`]) or `quota`.
    pub fn as_str(&self) -> &str {
        match self {
            EventKind::Failure(kind) => kind.as_str(),
            EventKind::Quota => "quota",
            EventKind::Unknown(name) => name,
        }
    }

    /// The kind named `name`, as stored.
    pub fn parse(name: &str) -> EventKind {
        match name {
            "quota" => EventKind::Quota,
            other => crate::FailureKind::parse(other)
                .map_or_else(|| EventKind::Unknown(other.to_owned()), EventKind::Failure),
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// How many events of one kind a plugin has in the sessions' logs ([`crate::Host::event_counts`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct EventCount {
    /// The plugin.
    pub plugin: String,
    /// The events' kind.
    pub kind: EventKind,
    /// How many the logs keep.
    pub count: u64,
}

/// Events kept per session; older ones are dropped as new ones come.
pub const MAX_EVENTS_PER_SESSION: i64 = 200;
/// Longest message kept with an event, in bytes (cut at a character boundary).
pub const MAX_EVENT_MESSAGE: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_kinds_are_failure_kinds_quota_or_a_newer_hosts_name() {
        assert_eq!(EventKind::parse("memory"), EventKind::Failure(crate::FailureKind::Memory));
        assert_eq!(EventKind::parse("quota"), EventKind::Quota);
        assert_eq!(EventKind::parse("from-the-future"), EventKind::Unknown("from-the-future".into()));
        assert_eq!(serde_json::to_value(EventKind::Quota).unwrap(), serde_json::json!("quota"));
    }
}
