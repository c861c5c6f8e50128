//! What the hook command remembers about a session between its processes (one process per
//! event): the current turn, each tool call's step in it, and the compaction warnings waiting
//! for the model. A small JSON file per (database, session) in the state directory, read and
//! written under an exclusive file lock, so the hooks of parallel tool calls never lose an
//! update. The plugins' state stays in the host's database; this is only the agent-side
//! bookkeeping the hook protocol does not carry.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The most tool calls one turn's ledger remembers; older ones are forgotten first.
const MAX_CALLS: usize = 1024;
/// The most compaction warnings kept waiting; older ones are dropped first.
const MAX_PENDING: usize = 8;

/// The bookkeeping of one session.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ledger {
    /// The turn the agent is in (the host's turn id), once one started.
    pub(crate) turn: Option<String>,
    /// The step the next tool call of the turn gets (1-based).
    pub(crate) next_step: u32,
    /// Each numbered call of the turn by the agent's call id, with its step.
    pub(crate) calls: BTreeMap<String, u32>,
    /// Order in which `calls` were numbered, to forget the oldest.
    pub(crate) order: Vec<String>,
    /// Compaction warnings not yet shown to the model.
    pub(crate) pending: Vec<String>,
    /// A compaction began (`PreCompact`) and its end was not yet told to the host.
    #[serde(default)]
    pub(crate) compacting: bool,
    /// A sub-agent's session: its notes as last handed back to its parent (or as it started).
    #[serde(default)]
    pub(crate) notes_handed: Option<NotesMark>,
}

/// A text as the ledger remembers it: its length and digest, not the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NotesMark {
    bytes: usize,
    digest: String,
}

impl NotesMark {
    pub(crate) fn of(text: &str) -> Self {
        NotesMark { bytes: text.len(), digest: fnv1a_hex(text) }
    }

    /// What `text` adds after the text marked, when it begins with it; `None` when it does not
    /// (the marked text was edited).
    pub(crate) fn rest<'t>(&self, text: &'t str) -> Option<&'t str> {
        let head = text.get(..self.bytes)?;
        (fnv1a_hex(head) == self.digest).then(|| &text[self.bytes..])
    }
}

impl Ledger {
    /// Enters `turn` when it is not the current one: steps start again at 1.
    pub(crate) fn enter(&mut self, turn: &str) {
        if self.turn.as_deref() != Some(turn) {
            self.turn = Some(turn.to_owned());
            self.next_step = 1;
            self.calls.clear();
            self.order.clear();
        }
    }

    /// The step of the call `call_id` in the current turn: the one it was given, or the next.
    /// A call without an id always takes the next step.
    pub(crate) fn step(&mut self, call_id: Option<&str>) -> u32 {
        if let Some(id) = call_id
            && let Some(step) = self.calls.get(id)
        {
            return *step;
        }
        let step = self.next_step.max(1);
        self.next_step = step.saturating_add(1);
        if let Some(id) = call_id {
            if self.order.len() >= MAX_CALLS {
                let oldest = self.order.remove(0);
                self.calls.remove(&oldest);
            }
            self.calls.insert(id.to_owned(), step);
            self.order.push(id.to_owned());
        }
        step
    }

    /// Whether this event ends the compaction in progress: true once per compaction, for
    /// whichever of `PostCompact` and `SessionStart` (`compact`) comes first.
    pub(crate) fn end_compaction(&mut self) -> bool {
        std::mem::take(&mut self.compacting)
    }

    /// Keeps `warning` for the model's next prompt.
    pub(crate) fn defer(&mut self, warning: String) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.remove(0);
        }
        self.pending.push(warning);
    }
}

/// The directory of the ledgers: `$SCRATCHPAD_HOOK_STATE`, else `$XDG_STATE_HOME/scratchpad/hooks`,
/// else `~/.local/state/scratchpad/hooks`.
pub(crate) fn directory() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("SCRATCHPAD_HOOK_STATE").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let state = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            std::env::home_dir().context("neither XDG_STATE_HOME nor a home directory is set")?.join(".local/state")
        }
    };
    Ok(state.join("scratchpad/hooks"))
}

/// The ledger file of `session` on `database` (any text naming the database) in `dir`.
pub(crate) fn path(dir: &Path, database: &str, session: &str) -> PathBuf {
    dir.join(format!("{}.json", fnv1a_hex(&format!("{database}\0{session}"))))
}

/// Runs `f` on the ledger at `path` under an exclusive lock and saves what it leaves. A ledger
/// that cannot be read as one (damaged, or of another version) starts empty.
pub(crate) fn with<R>(path: &Path, f: impl FnOnce(&mut Ledger) -> R) -> anyhow::Result<R> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut file: File = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.lock().with_context(|| format!("locking {}", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text).with_context(|| format!("reading {}", path.display()))?;
    let mut ledger: Ledger = serde_json::from_str(&text).unwrap_or_default();
    let result = f(&mut ledger);
    let saved = serde_json::to_vec(&ledger).expect("a ledger serializes");
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&saved).with_context(|| format!("writing {}", path.display()))?;
    Ok(result)
}

/// A file name from a text (FNV-1a, 64 bits, as hex): the ledger of another session on the
/// same name would only share bookkeeping, never plugin state, and 2^64 names make it moot.
pub(crate) fn fnv1a_hex(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_count_per_turn_and_a_call_keeps_its_step() {
        let mut ledger = Ledger::default();
        ledger.enter("t1");
        assert_eq!((ledger.step(Some("a")), ledger.step(Some("b")), ledger.step(Some("a"))), (1, 2, 1));
        assert_eq!(ledger.step(None), 3);
        ledger.enter("t1");
        assert_eq!(ledger.step(Some("c")), 4, "entering the same turn changes nothing");
        ledger.enter("t2");
        assert_eq!(ledger.step(Some("a")), 1, "a new turn numbers from 1");
    }

    #[test]
    fn a_notes_mark_finds_what_was_added_after_it() {
        let mark = NotesMark::of("- parent's note");
        assert_eq!(mark.rest("- parent's note\n- found X"), Some("\n- found X"));
        assert_eq!(mark.rest("- parent's note"), Some(""));
        assert_eq!(mark.rest("- edited note and more"), None);
        assert_eq!(mark.rest("short"), None);
        assert_eq!(NotesMark::of("é").rest("\u{e9}!"), Some("!"));
        assert_eq!(NotesMark::of("a").rest("é"), None, "not a char boundary");
    }

    #[test]
    fn a_compaction_ends_once_whichever_event_comes_first() {
        let mut ledger = Ledger::default();
        assert!(!ledger.end_compaction(), "no compaction began");
        ledger.compacting = true;
        assert!(ledger.end_compaction(), "PostCompact ends it");
        assert!(!ledger.end_compaction(), "SessionStart (compact) after it does not end it again");
    }

    #[test]
    fn concurrent_writers_lose_no_update() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path(), "db", "s");
        with(&file, |l| l.enter("t")).unwrap();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let file = file.clone();
                std::thread::spawn(move || {
                    (0..25).map(|k| with(&file, |l| l.step(Some(&format!("{i}-{k}")))).unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut steps: Vec<u32> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        steps.sort_unstable();
        assert_eq!(steps, (1..=200).collect::<Vec<_>>(), "every call got its own step");
    }

    #[test]
    fn a_damaged_ledger_starts_empty_and_pending_warnings_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path(), "db", "s");
        std::fs::write(&file, b"{ not json").unwrap();
        let ledger = with(&file, |l| {
            for i in 0..20 {
                l.defer(format!("w{i}"));
            }
            l.clone()
        })
        .unwrap();
        assert_eq!(ledger.pending.len(), MAX_PENDING);
        assert_eq!(ledger.pending.last().map(String::as_str), Some("w19"));
    }
}
