//! The two seams between the component's logic and the host: the observation being handled
//! ([`Source`]) and the blob store ([`Blobs`]).
//!
//! Inside the component they are the WIT `observation` resource and the `blobs` import
//! (`component.rs`); in native unit tests they are in-memory fakes (`testing.rs`). Neither
//! hands the guest more than the slice it asks for.

use scratchpad_plugin_sdk::{BlobError, ContentKind, Entry, NewEntry};

/// Most bytes the host returns per `read` call (see `wit/observation.wit` and `wit/blobs.wit`).
pub const HOST_READ_CAP: u32 = 1 << 20;

/// A tool's result as the host holds it (`wit/observation.wit`).
pub trait Source {
    /// Total length in bytes.
    fn size(&self) -> u64;
    /// Text (valid UTF-8) or binary.
    fn kind(&self) -> ContentKind;
    /// Length in characters for text, `size` for binary.
    fn size_chars(&self) -> u64;
    /// Up to `len` bytes from byte `offset` (shorter only at the end; capped at 1 MiB).
    fn read(&self, offset: u64, len: u32) -> Vec<u8>;
    /// SHA-256 of the whole content, 64 lowercase hex digits.
    fn sha256(&self) -> String;
    /// The tool's metadata as JSON object text.
    fn metadata(&self) -> String;
}

/// The host's blob store, scoped to this plugin and the current session (`wit/blobs.wit`).
pub trait Blobs {
    /// What `store` copies from: the observation handle.
    type Content: Source + ?Sized;
    /// Stores `content` as a new entry (the host copies the bytes); returns its id.
    fn store(&mut self, content: &Self::Content, entry: NewEntry) -> Result<String, BlobError>;
    /// The entry `id`, if it exists in this scope.
    fn stat(&self, id: &str) -> Option<Entry>;
    /// Every entry of `turn_id`, oldest first.
    fn list_turn(&self, turn_id: &str) -> Vec<Entry>;
    /// Up to `len` bytes of entry `id` from byte `offset` (capped at 1 MiB, empty past the end).
    fn read(&self, id: &str, offset: u64, len: u32) -> Result<Vec<u8>, BlobError>;
}

/// The name of a content kind as the model sees it: `text` or `binary`.
pub fn kind_name(kind: ContentKind) -> &'static str {
    match kind {
        ContentKind::Text => "text",
        ContentKind::Binary => "binary",
    }
}

/// The entries of `turn_id` that have not expired, oldest first.
pub fn live_entries<B: Blobs + ?Sized>(blobs: &B, turn_id: &str) -> Vec<Entry> {
    blobs.list_turn(turn_id).into_iter().filter(|e| !e.expired).collect()
}
