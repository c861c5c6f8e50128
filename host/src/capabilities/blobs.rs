//! The `blobs` import: the plugin's blob store in this session (the large-observation store's offload store).
//!
//! `store` only records the entry (the bytes stay shared with the observation) and the host
//! writes it with the call's other writes, after the call returned, outside its deadline.
//! `stat`, `list-turn`, `read` and `gc` touch SQLite, so they are async and run on the
//! blocking pool; entries stored earlier in the same call are served from memory.

use sha2::{Digest, Sha256};
use wasmtime::component::Resource;

use crate::bindings::scratchpad::plugin::blobs::{BlobError, Entry, Host, NewEntry, Quota};
use crate::capabilities::call::{CallState, SessionScope, within_deadline};
use crate::capabilities::observation::to_wit_kind;
use crate::resources::{MAX_READ_BYTES, ObservationData};
use crate::store::{BlobEntry, PendingBlob, now_ms};

/// Most entries one call may store. A hook is handed one observation, so storing it more
/// than a few times is never useful, and every entry is copied into the database after the
/// call, outside its deadline: this bounds that copy to a few times the observation.
pub(crate) const MAX_STORES_PER_CALL: usize = 4;

/// Most live entries a plugin may keep per session, whatever their size: `list-turn` and
/// garbage collection cost per entry.
pub(crate) const MAX_LIVE_ENTRIES: u64 = 4096;

/// Longest summary an entry may carry, in bytes (the large-observation store's is about 1,000 characters).
pub(crate) const MAX_SUMMARY_BYTES: usize = 16 << 10;

/// Longest turn id or tool name an entry may carry, in bytes.
pub(crate) const MAX_LABEL_BYTES: usize = 256;

fn to_wit(entry: BlobEntry, now: u64) -> Entry {
    Entry {
        expired: entry.expires_at_ms <= now,
        id: entry.id,
        turn_id: entry.turn_id,
        step: entry.step,
        tool: entry.tool,
        kind: to_wit_kind(entry.kind),
        size_bytes: entry.size_bytes,
        size_chars: entry.size_chars,
        ascii: entry.ascii,
        sha256: entry.sha256,
        summary: entry.summary,
        metadata: entry.metadata,
        created_at_ms: entry.created_at_ms,
        expires_at_ms: entry.expires_at_ms,
    }
}

impl CallState {
    fn pending(&self, id: &str) -> Option<&PendingBlob> {
        self.pending_blobs.iter().find(|b| b.id == id)
    }

    fn new_id(&mut self, turn: &str, step: u32) -> String {
        let mut hasher = Sha256::new();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        hasher.update(nanos.as_nanos().to_le_bytes());
        hasher.update(std::process::id().to_le_bytes());
        hasher.update(self.plugin.name.as_bytes());
        hasher.update(turn.as_bytes());
        hasher.update(step.to_le_bytes());
        hasher.update((self.pending_blobs.len() as u64).to_le_bytes());
        hasher.update(self.id_salt.to_le_bytes());
        hex::encode(&hasher.finalize()[..8])
    }
}

impl Host for CallState {
    async fn store(
        &mut self,
        content: Resource<ObservationData>,
        entry: NewEntry,
    ) -> wasmtime::Result<Result<String, BlobError>> {
        self.require(crate::grants::Power::Blobs)?;
        let Some(SessionScope { db, plugin, session, .. }) = self.session.clone() else {
            return Ok(Err(BlobError::Invalid("there is no session in this call".into())));
        };
        if entry.ttl_seconds == 0 {
            return Ok(Err(BlobError::Invalid("ttl-seconds must be at least 1".into())));
        }
        if entry.summary.len() > MAX_SUMMARY_BYTES {
            return Ok(Err(BlobError::Invalid(format!(
                "the summary is {} bytes; the most is {MAX_SUMMARY_BYTES}",
                entry.summary.len()
            ))));
        }
        if entry.turn_id.len() > MAX_LABEL_BYTES || entry.tool.len() > MAX_LABEL_BYTES {
            return Ok(Err(BlobError::Invalid(format!("turn-id and tool may have at most {MAX_LABEL_BYTES} bytes"))));
        }
        // Text columns of PostgreSQL cannot hold NUL; refused on every backend alike.
        if [&entry.summary, &entry.turn_id, &entry.tool].iter().any(|text| text.contains('\0')) {
            return Ok(Err(BlobError::Invalid("summary, turn-id and tool must not contain NUL characters".into())));
        }
        if self.pending_blobs.len() >= MAX_STORES_PER_CALL {
            return Ok(Err(BlobError::Invalid(format!(
                "one call may store at most {MAX_STORES_PER_CALL} entries; this call already stored them"
            ))));
        }
        let facts = self.table.get(&content)?.0.clone();
        // The quota counts the session's live entries and this call's pending ones, so storing
        // one observation many times fills it like storing many.
        let live = within_deadline(self.deadline, db.blob_usage(&plugin, &session, now_ms() as u64)).await?;
        if live.entries + self.pending_blobs.len() as u64 >= MAX_LIVE_ENTRIES {
            return Ok(Err(BlobError::Invalid(format!(
                "this plugin already keeps {} live entries in this session, the most it may; they expire with \
                 their TTL",
                live.entries
            ))));
        }
        let pending: u64 = self.pending_blobs.iter().map(|b| b.content.bytes.len() as u64).sum();
        let (used, requested, limit) =
            (live.bytes + pending, facts.bytes.len() as u64, self.plugin.limits.blob_quota_bytes);
        if used.saturating_add(requested) > limit {
            return Ok(Err(BlobError::QuotaExceeded(Quota { used, requested, limit })));
        }
        // A plugin may not keep an entry longer than the host allows, so `gc` reclaims
        // everything it stores; a longer TTL is shortened (the entry's `expires-at-ms` says so).
        let ttl_seconds = entry.ttl_seconds.min(self.plugin.limits.blob_max_ttl_seconds);
        let id = self.new_id(&entry.turn_id, entry.step);
        let created_at_ms = now_ms() as u64;
        let expires_at_ms = created_at_ms.saturating_add(ttl_seconds.saturating_mul(1000));
        self.pending_blobs.push(PendingBlob {
            id: id.clone(),
            turn_id: entry.turn_id,
            step: entry.step,
            tool: entry.tool,
            summary: entry.summary,
            created_at_ms,
            expires_at_ms,
            content: facts,
        });
        Ok(Ok(id))
    }

    async fn stat(&mut self, id: String) -> wasmtime::Result<Option<Entry>> {
        self.require(crate::grants::Power::Blobs)?;
        let now = now_ms() as u64;
        if let Some(pending) = self.pending(&id) {
            return Ok(Some(to_wit(pending.entry(&self.plugin.name), now)));
        }
        let Some(SessionScope { db, plugin, session, .. }) = self.session.clone() else { return Ok(None) };
        let entry = within_deadline(self.deadline, db.blob_stat(&plugin, &session, &id)).await?;
        Ok(entry.map(|e| to_wit(e, now)))
    }

    async fn list_turn(&mut self, turn_id: String) -> wasmtime::Result<Vec<Entry>> {
        self.require(crate::grants::Power::Blobs)?;
        let now = now_ms() as u64;
        let Some(SessionScope { db, plugin, session, .. }) = self.session.clone() else { return Ok(Vec::new()) };
        let mut entries = within_deadline(self.deadline, db.blob_list(Some(&plugin), &session, Some(&turn_id))).await?;
        entries.extend(self.pending_blobs.iter().filter(|b| b.turn_id == turn_id).map(|b| b.entry(&self.plugin.name)));
        Ok(entries.into_iter().map(|e| to_wit(e, now)).collect())
    }

    async fn read(&mut self, id: String, offset: u64, len: u32) -> wasmtime::Result<Result<Vec<u8>, BlobError>> {
        self.require(crate::grants::Power::Blobs)?;
        if let Some(pending) = self.pending(&id) {
            return Ok(Ok(pending.content.slice(offset, len).to_vec()));
        }
        let Some(SessionScope { db, plugin, session, .. }) = self.session.clone() else {
            return Ok(Err(BlobError::NotFound(format!("no entry `{id}`"))));
        };
        let len = len.min(MAX_READ_BYTES) as usize;
        let bytes = within_deadline(self.deadline, db.blob_read(&plugin, &session, &id, offset, len)).await?;
        Ok(bytes.ok_or_else(|| BlobError::NotFound(format!("no entry `{id}`"))))
    }

    async fn gc(&mut self) -> wasmtime::Result<u32> {
        self.require(crate::grants::Power::Blobs)?;
        let Some(SessionScope { db, plugin, session, .. }) = self.session.clone() else { return Ok(0) };
        within_deadline(self.deadline, db.blob_gc(Some((&plugin, &session)), now_ms() as u64)).await
    }
}
