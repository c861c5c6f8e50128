//! Known blob entries: what `stat` read of an entry, kept so the next `stat` of it (a
//! `scratchpad_read` reads an entry's facts before every slice) needs no trip.
//!
//! An entry never changes once stored, and the only thing that removes one is garbage
//! collection of entries past their expiry. So an entry read once is served from memory for
//! as long as it has not expired by this host's clock; from its expiry on, `stat` asks the
//! database again (which may have collected it). A collector on another machine whose clock
//! runs ahead can remove an entry this host still serves: the read that follows then finds no
//! entry, as it would if the collection had come between a `stat` and a `read` anyway.
//!
//! At most [`MAX_KEPT`] entries and [`MAX_KEPT_BYTES`] of their text are kept; past either,
//! entries are dropped in no particular order until three quarters remain.

use std::collections::HashMap;
use std::sync::Mutex;

use super::BlobEntry;

/// Most entries kept.
pub(crate) const MAX_KEPT: usize = 4096;
/// Most bytes of entries' text (summaries, metadata, labels) kept.
pub(crate) const MAX_KEPT_BYTES: usize = 16 << 20;

/// Entries read from the database, by (plugin, session, id).
#[derive(Default)]
pub(crate) struct KnownEntries {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<(String, String, String), BlobEntry>,
    bytes: usize,
}

/// What an entry costs to keep, roughly: its text and the key's.
fn size(session: &str, entry: &BlobEntry) -> usize {
    let text = [&entry.id, &entry.plugin, &entry.turn_id, &entry.tool, &entry.sha256, &entry.summary, &entry.metadata];
    session.len() + text.iter().map(|t| t.len()).sum::<usize>() + 64
}

impl KnownEntries {
    /// Entry `id` of `plugin` in `session`, if it is known and unexpired at `now_ms`.
    pub(crate) fn get(&self, plugin: &str, session: &str, id: &str, now_ms: u64) -> Option<BlobEntry> {
        let inner = self.inner.lock().unwrap();
        let key = (plugin.to_owned(), session.to_owned(), id.to_owned());
        inner.entries.get(&key).filter(|entry| now_ms < entry.expires_at_ms).cloned()
    }

    /// Keeps `entry` of `session`, read from the database.
    pub(crate) fn keep(&self, session: &str, entry: &BlobEntry) {
        let added = size(session, entry);
        if added > MAX_KEPT_BYTES / 4 {
            return;
        }
        let mut inner = self.inner.lock().unwrap();
        let Inner { entries, bytes } = &mut *inner;
        if entries.len() >= MAX_KEPT || *bytes + added > MAX_KEPT_BYTES {
            let drop: Vec<_> = entries.keys().take(entries.len().div_ceil(4)).cloned().collect();
            for key in drop {
                let gone = entries.remove(&key).expect("listed above");
                *bytes -= size(&key.1, &gone);
            }
        }
        let key = (entry.plugin.clone(), session.to_owned(), entry.id.clone());
        if let Some(old) = entries.insert(key, entry.clone()) {
            *bytes -= size(session, &old);
        }
        *bytes += added;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ContentKind;

    fn entry(id: &str, expires_at_ms: u64) -> BlobEntry {
        BlobEntry {
            id: id.into(),
            plugin: "p".into(),
            turn_id: "t".into(),
            step: 1,
            tool: "fs_read".into(),
            kind: ContentKind::Text,
            size_bytes: 10,
            size_chars: 10,
            ascii: true,
            sha256: String::new(),
            summary: String::new(),
            metadata: "{}".into(),
            created_at_ms: 0,
            expires_at_ms,
        }
    }

    #[test]
    fn an_entry_is_served_until_it_expires_and_only_in_its_scope() {
        let known = KnownEntries::default();
        known.keep("s", &entry("a", 1_000));
        assert_eq!(known.get("p", "s", "a", 999).map(|e| e.id).as_deref(), Some("a"));
        assert!(known.get("p", "s", "a", 1_000).is_none(), "from its expiry on, the database is asked");
        assert!(known.get("p", "other", "a", 0).is_none());
        assert!(known.get("q", "s", "a", 0).is_none());
    }

    #[test]
    fn at_most_max_kept_entries_are_kept() {
        let known = KnownEntries::default();
        for i in 0..MAX_KEPT + 10 {
            known.keep("s", &entry(&format!("{i:016x}"), u64::MAX));
        }
        let kept = known.inner.lock().unwrap().entries.len();
        assert!(kept <= MAX_KEPT, "{kept}");
        let last = format!("{:016x}", MAX_KEPT + 9);
        assert!(known.get("p", "s", &last, 0).is_some(), "the newest is kept");
    }
}
