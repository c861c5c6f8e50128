//! The OpenClaw 2026.9 transcript store: `$STATE/agents/<agent>/agent/openclaw-agent.sqlite`,
//! whose `transcript_events` rows hold the same records as the JSONL files (`event_json`), one
//! row per record, ordered by `seq` within a session window. A session key (`agent:main:k1`)
//! owns one window per physical session id (a compaction or reset may rotate it) through
//! `session_windows`; `session_nodes.entry_json` carries the `sessions.json` fields
//! (`compactionCount`, `totalTokens`).
//!
//! The store is opened read-only and never written. The records go through the JSONL parser
//! window by window, so the two paths agree on every record; rows OpenClaw stored compressed
//! (`event_zstd`, large records, never the scratchpad's small custom entries) are reported as
//! skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

use super::jsonl::{SessionFile, parse};

/// The store file's name inside an agent's directory.
pub const STORE_FILE: &str = "openclaw-agent.sqlite";

/// One OpenClaw session (a session key) as the store holds it.
#[derive(Debug, Default)]
pub struct StoreSession {
    /// The session key: the project's session id, as the OpenClaw plugin maps it.
    pub key: String,
    /// The scratchpad spaces, the last value of each across the key's windows in order.
    pub file: SessionFile,
    /// `compactionCount` from the session's entry.
    pub compactions: Option<i64>,
    /// `totalTokens` from the session's entry.
    pub tokens: Option<i64>,
}

/// The transcript stores `path` names: a store file itself (by its SQLite header), an agent
/// directory holding one, or a state directory (`agents/*/agent/`). `None` when `path` is none
/// of these (the JSONL reader takes it).
pub fn stores_at(path: &Path) -> anyhow::Result<Option<Vec<PathBuf>>> {
    if path.is_file() {
        return Ok(is_sqlite(path)?.then(|| vec![path.to_owned()]));
    }
    let direct = path.join(STORE_FILE);
    if direct.is_file() {
        return Ok(Some(vec![direct]));
    }
    let agents = path.join("agents");
    if !agents.is_dir() {
        return Ok(None);
    }
    let mut stores: Vec<PathBuf> = std::fs::read_dir(&agents)
        .with_context(|| format!("reading {}", agents.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path().join("agent").join(STORE_FILE)))
        .filter(|store| store.is_file())
        .collect();
    stores.sort();
    Ok((!stores.is_empty()).then_some(stores))
}

fn is_sqlite(path: &Path) -> anyhow::Result<bool> {
    use std::io::Read as _;
    let mut header = [0u8; 16];
    let mut file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let read = file.read(&mut header).with_context(|| format!("reading {}", path.display()))?;
    Ok(read == 16 && &header == b"SQLite format 3\0")
}

/// Every session in the store at `path`, with malformed or unreadable records reported in
/// `skipped` as `store#session_id:N: reason` (N: the record's position in its window).
pub fn read_store(
    path: &Path,
    skipped: &mut Vec<String>,
    skipped_records: &mut usize,
) -> anyhow::Result<Vec<StoreSession>> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_context(|| format!("opening the OpenClaw store {}", path.display()))?;
    let has_events: Option<String> = conn
        .query_row("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'transcript_events'", [], |r| {
            r.get(0)
        })
        .optional()
        .with_context(|| format!("reading {}", path.display()))?;
    if has_events.is_none() {
        anyhow::bail!("{} is not an OpenClaw transcript store (no `transcript_events` table)", path.display());
    }
    let windows = windows(&conn).with_context(|| format!("reading the session windows of {}", path.display()))?;
    let mut sessions: BTreeMap<String, StoreSession> = BTreeMap::new();
    let mut events = conn
        .prepare("SELECT event_json, event_zstd IS NOT NULL FROM transcript_events WHERE session_id = ?1 ORDER BY seq")
        .with_context(|| format!("reading {}", path.display()))?;
    for (session_id, key) in windows {
        let name = format!("{}#{session_id}", path.display());
        let mut lines = Vec::new();
        let rows = events.query_map([&session_id], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, bool>(1)?)))?;
        for (index, row) in rows.enumerate() {
            let (json, compressed) = row.with_context(|| format!("reading {name}"))?;
            if compressed || json.is_none() {
                // Kept as an empty line so the positions of the records after it stay right.
                skipped.push(format!("{name}:{}: a compressed record (event_zstd) is not read", index + 1));
                lines.push(String::new());
            } else {
                lines.push(json.unwrap_or_default().replace('\n', " "));
            }
        }
        let window = parse(&name, &lines.join("\n"));
        skipped.extend(window.malformed.iter().cloned());
        *skipped_records += window.skipped_records;
        let session = sessions.entry(key.clone()).or_insert_with(|| StoreSession { key, ..Default::default() });
        merge(&mut session.file, window);
    }
    let mut entries = conn.prepare("SELECT entry_json FROM session_nodes WHERE session_key = ?1").ok();
    for session in sessions.values_mut() {
        let entry: Option<String> =
            entries.as_mut().and_then(|stmt| stmt.query_row([&session.key], |r| r.get(0)).optional().ok().flatten());
        if let Some(entry) = entry.and_then(|text| serde_json::from_str::<Value>(&text).ok()) {
            session.compactions = entry.get("compactionCount").and_then(Value::as_i64);
            session.tokens = entry.get("totalTokens").and_then(Value::as_i64);
        }
        if session.compactions.is_none() {
            session.compactions = Some(session.file.compactions as i64);
        }
    }
    Ok(sessions.into_values().collect())
}

/// Every window with events, oldest first, with its session key (the session id itself when
/// the store has no window row for it).
fn windows(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let has_windows: bool = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'session_windows'", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n > 0)?;
    let sql = if has_windows {
        "SELECT e.session_id, COALESCE(w.session_key, e.session_id), MIN(e.created_at) AS first
         FROM transcript_events e LEFT JOIN session_windows w ON w.session_id = e.session_id
         GROUP BY e.session_id ORDER BY first, e.session_id"
    } else {
        "SELECT session_id, session_id, MIN(created_at) AS first FROM transcript_events
         GROUP BY session_id ORDER BY first, session_id"
    };
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// A later window's values win, space by space; compactions add up.
fn merge(into: &mut SessionFile, window: SessionFile) {
    into.session_id = window.session_id.or(into.session_id.take());
    if window.notes.is_some() {
        into.notes = window.notes;
    }
    if window.plan.is_some() {
        into.plan = window.plan;
    }
    if window.refs.is_some() {
        into.refs = window.refs;
    }
    into.compactions += window.compactions;
    into.last_id = window.last_id.or(into.last_id.take());
}
