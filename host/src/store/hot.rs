//! Hot sessions: the scopes an operation read or committed last, kept in memory so the next
//! operation on the session can skip the database trip of its begin when they are provably
//! current.
//!
//! A session's state changes only by a commit, and every commit bumps the session's version
//! (sessions are never deleted, and created or imported only when absent). So the scopes read
//! at version `v` — or those of `v - 1` with the writes of the commit that made `v` applied —
//! *are* the state at `v`. An operation that finds its session's head still at the cached
//! version, in the same turn, takes the cached scopes instead of reading them again: the same
//! snapshot a read would return. The head comes from [`Backend::peek_head`](super::Backend),
//! which answers only where that costs no trip (SQLite: one row read on the calling thread,
//! never waiting for a lock); elsewhere every begin reads. The version check of the commit is
//! unchanged, so a process that commits in between still makes the operation run again.
//!
//! The cache holds at most its byte budget (keys and values of the scopes it keeps);
//! past it, sessions are dropped in no particular order until it is three quarters full.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{PluginWrites, Read, ScopeToRead, Snapshot};

/// The scopes of recently used sessions, each at the session version they hold.
pub(crate) struct HotSessions {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Hot>,
    bytes: usize,
}

/// One session's scopes at one version.
struct Hot {
    version: i64,
    scopes: HashMap<String, Snapshot>,
    bytes: usize,
}

impl Hot {
    fn new(version: i64) -> Self {
        Hot { version, scopes: HashMap::new(), bytes: 0 }
    }

    fn keep(&mut self, plugin: &str, snapshot: Snapshot) {
        let added = plugin.len() + snapshot.bytes();
        if let Some(old) = self.scopes.insert(plugin.to_owned(), snapshot) {
            self.bytes -= plugin.len() + old.bytes();
        }
        self.bytes += added;
    }
}

impl HotSessions {
    /// A cache of at most `budget` bytes; 0 keeps nothing.
    pub(crate) fn new(budget: usize) -> Self {
        HotSessions { budget, inner: Mutex::new(Inner::default()) }
    }

    /// Whether anything is ever kept (a budget of 0, or a backend that cannot peek: no).
    pub(crate) fn enabled(&self) -> bool {
        self.budget > 0
    }

    /// Whether anything of `session` is kept (else a begin need not look at the head first).
    pub(crate) fn has(&self, session: &str) -> bool {
        self.budget > 0 && self.inner.lock().unwrap().sessions.contains_key(session)
    }

    /// The snapshots of every plugin in `plugins` at `version`, when all of them are kept.
    pub(crate) fn get(&self, session: &str, version: i64, plugins: &[ScopeToRead]) -> Option<Vec<(usize, Snapshot)>> {
        let inner = self.inner.lock().unwrap();
        let hot = inner.sessions.get(session).filter(|hot| hot.version == version)?;
        plugins.iter().map(|p| Some((p.index, hot.scopes.get(&p.plugin)?.clone()))).collect()
    }

    /// Keeps what a begin read: `read`'s snapshots, of the plugins named by their index in
    /// `names`, at its version (joining those kept at the same version, replacing older ones).
    pub(crate) fn keep_read(&self, session: &str, read: &Read, names: &[(usize, String)]) {
        if self.budget == 0 {
            return;
        }
        let mut inner = self.inner.lock().unwrap();
        let mut hot = match inner.sessions.remove(session) {
            Some(hot) if hot.version == read.head.version => hot,
            // A newer version is kept already (another task committed meanwhile).
            Some(hot) if hot.version > read.head.version => {
                inner.sessions.insert(session.to_owned(), hot);
                return;
            }
            Some(stale) => {
                inner.bytes -= stale.bytes;
                Hot::new(read.head.version)
            }
            None => Hot::new(read.head.version),
        };
        inner.bytes -= hot.bytes;
        for (index, snapshot) in &read.snapshots {
            if let Some((_, plugin)) = names.iter().find(|(i, _)| i == index) {
                hot.keep(plugin, snapshot.clone());
            }
        }
        self.insert(&mut inner, session, hot);
    }

    /// The kept scopes of `session` as they will be once `calls` commit on top of
    /// `expected_version`, for [`HotSessions::committed`]. `None` when nothing is kept at that
    /// version.
    pub(crate) fn prepare_commit(&self, session: &str, expected_version: i64, calls: &[PluginWrites]) -> Option<Next> {
        if self.budget == 0 {
            return None;
        }
        let inner = self.inner.lock().unwrap();
        let hot = inner.sessions.get(session).filter(|hot| hot.version == expected_version)?;
        let mut next = Hot::new(expected_version + 1);
        for (plugin, snapshot) in &hot.scopes {
            let writes = calls.iter().find(|call| call.plugin == *plugin).map(|call| &call.writes);
            next.keep(plugin, writes.map_or_else(|| snapshot.clone(), |w| snapshot.with_writes(w)));
        }
        Some(Next(next))
    }

    /// After a commit of `session`: keeps `next` (from [`HotSessions::prepare_commit`]) when it
    /// went through, else forgets the session (a conflict means another process moved it on).
    pub(crate) fn committed(&self, session: &str, next: Option<Next>) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(old) = inner.sessions.remove(session) {
            inner.bytes -= old.bytes;
        }
        if let Some(Next(hot)) = next {
            self.insert(&mut inner, session, hot);
        }
    }

    /// Forgets `session` (its commit failed or lost).
    pub(crate) fn forget(&self, session: &str) {
        self.committed(session, None);
    }

    fn insert(&self, inner: &mut Inner, session: &str, hot: Hot) {
        let size = session.len() + hot.bytes;
        if size > self.budget / 4 {
            return;
        }
        inner.bytes += hot.bytes;
        inner.sessions.insert(session.to_owned(), hot);
        if inner.bytes + inner.sessions.len() * 64 > self.budget {
            let target = self.budget / 4 * 3;
            let mut drop = Vec::new();
            let mut bytes = inner.bytes + inner.sessions.len() * 64;
            for (id, hot) in &inner.sessions {
                if bytes <= target {
                    break;
                }
                if id != session {
                    bytes -= hot.bytes + 64;
                    drop.push(id.clone());
                }
            }
            for id in drop {
                let hot = inner.sessions.remove(&id).expect("listed above");
                inner.bytes -= hot.bytes;
            }
        }
    }
}

/// A session's scopes after a commit that has not landed yet.
pub(crate) struct Next(Hot);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Head;
    use crate::store::ScopeWrites;

    fn read(version: i64, scopes: &[(usize, &[(&str, &str)])]) -> Read {
        let head =
            Head { turn_id: Some("t".into()), turn_index: 0, version, guidance_json: "[]".into(), project: None };
        let snapshots = scopes
            .iter()
            .map(|(i, entries)| {
                let mut snapshot = Snapshot::default();
                for (k, v) in *entries {
                    snapshot.space_mut(0).insert(k.to_string(), v.as_bytes().to_vec());
                }
                (*i, snapshot)
            })
            .collect();
        Read { head, snapshots }
    }

    fn names() -> Vec<(usize, String)> {
        vec![(0, "a".into()), (1, "b".into())]
    }

    fn both() -> Vec<ScopeToRead> {
        names().into_iter().map(|(index, plugin)| ScopeToRead { index, plugin }).collect()
    }

    fn value(cache: &HotSessions, version: i64, plugin: usize, key: &str) -> Option<Vec<u8>> {
        let got = cache.get("s", version, &both())?;
        got[plugin].1.entries.get(key).cloned()
    }

    #[test]
    fn a_read_is_served_only_at_its_version_and_only_whole() {
        let cache = HotSessions::new(1 << 20);
        cache.keep_read("s", &read(3, &[(0, &[("k", "v")])]), &names());
        assert!(cache.has("s"));
        assert!(cache.get("s", 3, &both()).is_none(), "plugin b was not read");
        cache.keep_read("s", &read(3, &[(1, &[("k", "w")])]), &names());
        assert_eq!(value(&cache, 3, 0, "k").as_deref(), Some(&b"v"[..]));
        assert_eq!(value(&cache, 3, 1, "k").as_deref(), Some(&b"w"[..]));
        assert!(cache.get("s", 4, &both()).is_none(), "another version is never served");
        cache.keep_read("s", &read(5, &[(0, &[("k", "new")])]), &names());
        assert!(cache.get("s", 5, &both()).is_none(), "a newer read replaces, not joins, the older one");
        cache.keep_read("s", &read(4, &[(1, &[("k", "old")])]), &names());
        assert!(cache.get("s", 4, &both()).is_none(), "an older read never replaces a newer one");
    }

    #[test]
    fn a_landed_commit_moves_the_scopes_to_the_next_version_and_a_lost_one_forgets_them() {
        let cache = HotSessions::new(1 << 20);
        cache.keep_read("s", &read(3, &[(0, &[("k", "v"), ("gone", "x")]), (1, &[("k", "w")])]), &names());
        let mut writes = ScopeWrites::default();
        writes.state.insert("k".into(), Some(b"v2".to_vec()));
        writes.state.insert("gone".into(), None);
        let calls =
            vec![crate::store::PluginWrites { plugin: "a".to_owned(), writes, blobs: Vec::new(), index: Vec::new() }];
        assert!(cache.prepare_commit("s", 2, &calls).is_none(), "nothing is kept at version 2");
        let next = cache.prepare_commit("s", 3, &calls);
        assert_eq!(value(&cache, 3, 0, "k").as_deref(), Some(&b"v"[..]), "unchanged until the commit lands");
        cache.committed("s", next);
        assert!(cache.get("s", 3, &both()).is_none());
        assert_eq!(value(&cache, 4, 0, "k").as_deref(), Some(&b"v2"[..]));
        assert_eq!(value(&cache, 4, 0, "gone"), None);
        assert_eq!(value(&cache, 4, 1, "k").as_deref(), Some(&b"w"[..]), "an unwritten scope carries over");
        let next = cache.prepare_commit("s", 4, &calls);
        drop(next);
        cache.forget("s");
        assert!(!cache.has("s"));
    }

    #[test]
    fn the_budget_bounds_what_is_kept() {
        let cache = HotSessions::new(10_000);
        let big = "x".repeat(500);
        for i in 0..100 {
            let session = format!("s{i}");
            cache.keep_read(&session, &read(1, &[(0, &[("k", big.as_str())])]), &names());
        }
        let inner = cache.inner.lock().unwrap();
        let counted: usize = inner.sessions.values().map(|h| h.bytes).sum();
        assert_eq!(inner.bytes, counted, "the running count matches what is kept");
        assert!(inner.bytes + inner.sessions.len() * 64 <= 10_000, "{} bytes kept", inner.bytes);
        assert!(inner.sessions.contains_key("s99"), "the session just read is kept");
        drop(inner);
        let off = HotSessions::new(0);
        off.keep_read("s", &read(1, &[(0, &[("k", "v")])]), &names());
        assert!(!off.has("s"), "a budget of 0 keeps nothing");
        let huge = "y".repeat(5_000);
        cache.keep_read("whale", &read(1, &[(0, &[("k", huge.as_str())])]), &names());
        assert!(!cache.has("whale"), "a session over a quarter of the budget is not kept");
    }
}
