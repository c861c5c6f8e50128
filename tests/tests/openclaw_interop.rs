//! OpenClaw session interop: real-shaped session JSONL in, scratchpad out, and back.

use std::path::Path;

use scratchpad_host::Origin;
use scratchpad_tests::{Fixture, dump, turn};

/// A sessions directory as OpenClaw writes it: every record type, the legacy key in a second
/// session, and a last line truncated by a crash.
fn write_openclaw_dir(dir: &Path) {
    let session = [
        r#"{"type":"session","version":3,"id":"7a0e870d-ac60-4042-85f2-99a6a0ca49fd","timestamp":"2026-04-17T02:39:51.893Z","cwd":"/workspace"}"#,
        r#"{"type":"message","id":"5dfb4ff6","parentId":"00540d3c","timestamp":"2026-04-17T02:40:00.000Z","message":{"role":"user","content":[{"type":"text","text":"fix the login bug"}]}}"#,
        r#"{"type":"model_change","id":"1b2c3d4e","parentId":"5dfb4ff6","timestamp":"2026-04-17T02:40:01.000Z","model":"claude"}"#,
        r#"{"type":"thinking_level_change","id":"2b2c3d4e","parentId":"1b2c3d4e","timestamp":"2026-04-17T02:40:02.000Z","level":"high"}"#,
        r#"{"type":"custom","customType":"openclaw:scratchpad:notes","data":"first notes","id":"3b2c3d4e","parentId":"2b2c3d4e","timestamp":"2026-04-17T02:41:00.000Z"}"#,
        r#"{"type":"compaction","id":"4b2c3d4e","parentId":"3b2c3d4e","timestamp":"2026-04-17T03:00:00.000Z","summary":"Working on login","firstKeptEntryId":"3b2c3d4e","tokensBefore":186673}"#,
        r#"{"type":"checkpoint","id":"1706803200000_c1a2","parentId":"4b2c3d4e","timestamp":"2026-04-17T03:01:00.000Z","checkpoint":{"summary":"s"}}"#,
        r#"{"type":"custom","customType":"openclaw:scratchpad:notes","data":"Root cause: timezone mismatch","id":"5b2c3d4e","parentId":"1706803200000_c1a2","timestamp":"2026-04-17T03:02:00.000Z"}"#,
        r#"{"type":"custom","customType":"openclaw:scratchpad:plan","data":"1. Fix expiry\n2. Add test","id":"6b2c3d4e","parentId":"5b2c3d4e","timestamp":"2026-04-17T03:03:00.000Z"}"#,
        r#"{"type":"custom","customType":"openclaw:scratchpad:refs","data":["src/auth/login.ts","https://github.com/org/repo/issues/42"],"id":"7b2c3d4e","parentId":"6b2c3d4e","timestamp":"2026-04-17T03:04:00.000Z"}"#,
        r#"{"type":"custom","customType":"other:extension","data":{"x":1},"id":"8b2c3d4e","parentId":"7b2c3d4e","timestamp":"2026-04-17T03:05:00.000Z"}"#,
        r#"{"type":"message","id":"9b2c3d4e","parentId":"8b2c3d4e","timestamp":"2026-04-17T03:06:00.0"#,
    ];
    std::fs::write(dir.join("7a0e870d-ac60-4042-85f2-99a6a0ca49fd.jsonl"), session.join("\n")).unwrap();
    let legacy = [
        r#"{"type":"session","version":3,"id":"legacy-1","timestamp":"2026-02-28T10:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"custom","customType":"openclaw:scratchpad","data":"Plan:\n1. old style","id":"aa000001","parentId":null,"timestamp":"2026-02-28T10:01:00.000Z"}"#,
    ];
    std::fs::write(dir.join("legacy-1.jsonl"), legacy.join("\n") + "\n").unwrap();
    let index = r#"{"agent:main:main":{"sessionId":"7a0e870d-ac60-4042-85f2-99a6a0ca49fd","updatedAt":1769962601713,
        "sessionFile":"/home/openclaw/.openclaw/agents/main/sessions/7a0e870d-ac60-4042-85f2-99a6a0ca49fd.jsonl",
        "compactionCount":2,"totalTokens":156000}}"#;
    std::fs::write(dir.join("sessions.json"), index).unwrap();
}

const SESSION: &str = "7a0e870d-ac60-4042-85f2-99a6a0ca49fd";

#[tokio::test]
async fn an_openclaw_directory_imports_into_sessions_whose_next_turn_injects_the_scratchpad() {
    let fx = Fixture::new();
    let openclaw = tempfile::tempdir().unwrap();
    write_openclaw_dir(openclaw.path());
    let before: Vec<_> = ["7a0e870d-ac60-4042-85f2-99a6a0ca49fd.jsonl", "legacy-1.jsonl", "sessions.json"]
        .iter()
        .map(|f| std::fs::read(openclaw.path().join(f)).unwrap())
        .collect();
    let host = fx.host().await;

    let report = host.import_openclaw(openclaw.path()).await.unwrap();
    assert_eq!(report.sessions, [SESSION, "legacy-1"]);
    assert_eq!(report.skipped_lines.len(), 1, "the truncated last line: {:?}", report.skipped_lines);
    assert!(report.skipped_lines[0].contains("-99a6a0ca49fd.jsonl:12: not JSON"), "{:?}", report.skipped_lines);
    assert_eq!(report.skipped_records, 2, "the checkpoint and the other extension's custom record");

    let rendered =
        host.before_query(&turn(SESSION, "resume-1"), "what's next?").await.unwrap().render("", "what's next?");
    for needle in ["Root cause: timezone mismatch", "1. Fix expiry\n2. Add test", "- src/auth/login.ts"] {
        assert!(rendered.user.contains(needle), "missing {needle:?} in\n{}", rendered.user);
    }
    assert!(!rendered.user.contains("first notes"), "the last notes entry wins");
    let record = host.session(SESSION).await.unwrap();
    assert_eq!((record.compaction_count, record.total_tokens), (2, Some(156000)));

    let legacy = host.before_query(&turn("legacy-1", "resume-1"), "go").await.unwrap().render("", "go");
    assert!(legacy.user.contains("Plan:\n1. old style"), "the legacy key loads into notes: {}", legacy.user);

    let after: Vec<_> = ["7a0e870d-ac60-4042-85f2-99a6a0ca49fd.jsonl", "legacy-1.jsonl", "sessions.json"]
        .iter()
        .map(|f| std::fs::read(openclaw.path().join(f)).unwrap())
        .collect();
    assert_eq!(before, after, "the OpenClaw files are never modified");
}

#[tokio::test]
async fn importing_twice_changes_nothing() {
    let fx = Fixture::new();
    let openclaw = tempfile::tempdir().unwrap();
    write_openclaw_dir(openclaw.path());
    let host = fx.host().await;
    host.import_openclaw(openclaw.path()).await.unwrap();
    let state = (dump(&fx.db(), SESSION), dump(&fx.db(), "legacy-1"), host.session(SESSION).await.unwrap());

    let again = host.import_openclaw(openclaw.path()).await.unwrap();
    assert!(again.sessions.is_empty(), "{again:?}");
    assert_eq!(again.unchanged, [SESSION, "legacy-1"]);
    assert_eq!(state, (dump(&fx.db(), SESSION), dump(&fx.db(), "legacy-1"), host.session(SESSION).await.unwrap()));
}

#[tokio::test]
async fn export_then_import_round_trips_the_scratchpad() {
    let fx = Fixture::new();
    let host = fx.host().await;
    host.create_session("rt", Origin::New).await.unwrap();
    let t = turn("rt", "t1");
    for args in [
        r#"{"action":"set_notes","content":"notes with \"quotes\" and ünïcode"}"#,
        r#"{"action":"set_plan","content":"1. a\n2. b"}"#,
        r#"{"action":"refs.set","items":["x.rs","y.rs"]}"#,
    ] {
        host.call_tool(&t, "session.scratchpad", args).await.unwrap();
    }
    let file = fx.dir.path().join("rt.jsonl");
    std::fs::write(
        &file,
        r#"{"type":"session","version":3,"id":"rt-openclaw","timestamp":"2026-04-17T02:39:51.893Z","cwd":"/w"}"#,
    )
    .unwrap();

    let records = host.export_openclaw("rt", &file).await.unwrap();
    assert_eq!(records.len(), 3);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "the header and three appended records");
    assert_eq!(lines[1]["parentId"], "rt-openclaw", "linked to the file's last record");
    assert_eq!(lines[2]["parentId"], lines[1]["id"]);
    let id = lines[1]["id"].as_str().unwrap();
    let (ms, hex) = id.split_once('_').unwrap();
    assert!(ms.parse::<u64>().is_ok() && hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()), "{id}");

    let other = Fixture::new();
    let fresh = other.host().await;
    fresh.import_openclaw(&file).await.unwrap();
    let original: Vec<_> = dump(&fx.db(), "rt").into_iter().filter(|(_, k, _)| !k.starts_with("meta/")).collect();
    let imported: Vec<_> =
        dump(&other.db(), "rt-openclaw").into_iter().filter(|(_, k, _)| !k.starts_with("meta/")).collect();
    assert_eq!(original, imported);
}

/// OpenClaw 2026.9's transcript store tables, as `openclaw@2026.9.6` creates them (copied from
/// a real run's `openclaw-agent.sqlite`; only the tables the import reads, and of
/// `session_windows` and `navigation_json`'s checks only what these rows need). The end-to-end
/// test also imports a store the real openclaw wrote.
const STORE_SCHEMA: &str = r#"
CREATE TABLE session_nodes (
  session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL,
  legacy_acp_migration_json TEXT,
  entry_valid INTEGER NOT NULL DEFAULT 0 CHECK (entry_valid IN (-1, 0, 1)),
  updated_at INTEGER NOT NULL,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  created_at INTEGER,
  created_via TEXT,
  created_actor_type TEXT, created_actor_id TEXT, owner_actor_type TEXT, owner_actor_id TEXT,
  owner_assigned_by_type TEXT, owner_assigned_by_id TEXT, owner_assigned_at INTEGER, project_id TEXT,
  parent_session_key TEXT, spawned_by TEXT, fork_source_session_key TEXT, fork_source_session_id TEXT,
  fork_source_entry_id TEXT, label TEXT, display_name TEXT, category TEXT, icon TEXT, pinned_at INTEGER,
  archived_at INTEGER, last_read_at INTEGER, last_interaction_at INTEGER, last_activity_at INTEGER
) STRICT;
CREATE TABLE session_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  previous_session_id TEXT,
  reason TEXT CHECK (reason IS NULL OR reason IN ('initial', 'reset', 'rollover', 'fork', 'rewind', 'switch', 'recovery', 'compaction')),
  session_scope TEXT NOT NULL DEFAULT 'conversation',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  FOREIGN KEY (session_key) REFERENCES session_nodes(session_key) ON DELETE CASCADE
) STRICT;
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT,
  created_at INTEGER NOT NULL,
  event_zstd BLOB,
  event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
  navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (
    (event_json IS NOT NULL AND event_zstd IS NULL)
    OR (event_json IS NULL AND event_zstd IS NOT NULL AND event_utf8_bytes IS NOT NULL
        AND event_utf8_bytes BETWEEN 1 AND 4194304 AND length(event_zstd) BETWEEN 1 AND 4194304
        AND navigation_json IS NOT NULL)
  )
) STRICT;
"#;

/// A state directory as OpenClaw 2026.9 leaves it: session `agent:main:main` in two windows
/// (compaction rotated the id), the older one with superseded notes, the newer with the three
/// spaces; a compressed record and a malformed one among them.
fn write_openclaw_store(state: &Path) -> std::path::PathBuf {
    let dir = state.join("agents/main/agent");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("openclaw-agent.sqlite");
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute_batch(STORE_SCHEMA).unwrap();
    let entry = r#"{"sessionId":"w2","updatedAt":1769962601713,"compactionCount":1,"totalTokens":98000}"#;
    conn.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?1, 'w2', ?2, 1)",
        ["agent:main:main", entry],
    )
    .unwrap();
    for (id, at) in [("w1", 1000), ("w2", 2000)] {
        conn.execute(
            "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?1, 'agent:main:main', ?2, ?2)",
            rusqlite::params![id, at],
        )
        .unwrap();
    }
    let events: [(&str, i64, Option<&str>); 8] = [
        (
            "w1",
            0,
            Some(r#"{"type":"session","version":4,"id":"w1","timestamp":"2026-11-22T23:25:47.235Z","cwd":"/w"}"#),
        ),
        (
            "w1",
            1,
            Some(
                r#"{"type":"custom","customType":"openclaw:scratchpad:notes","data":"first notes","id":"a1","parentId":null,"timestamp":"t"}"#,
            ),
        ),
        (
            "w1",
            2,
            Some(
                r#"{"type":"compaction","id":"a2","parentId":"a1","timestamp":"t","summary":"s","firstKeptEntryId":"a1","tokensBefore":186673}"#,
            ),
        ),
        (
            "w2",
            0,
            Some(r#"{"type":"session","version":4,"id":"w2","timestamp":"2026-11-22T23:40:00.000Z","cwd":"/w"}"#),
        ),
        ("w2", 1, None),
        (
            "w2",
            2,
            Some(
                r#"{"type":"custom","customType":"openclaw:scratchpad:notes","data":"Root cause: timezone mismatch","id":"b2","parentId":"b1","timestamp":"t"}"#,
            ),
        ),
        (
            "w2",
            3,
            Some(
                r#"{"type":"custom","customType":"openclaw:scratchpad:plan","data":"1. Fix expiry\n2. Add test","id":"b3","parentId":"b2","timestamp":"t"}"#,
            ),
        ),
        (
            "w2",
            4,
            Some(
                r#"{"type":"custom","customType":"openclaw:scratchpad:refs","data":["src/auth/login.ts"],"id":"b4","parentId":"b3","timestamp":"t"}"#,
            ),
        ),
    ];
    for (session, seq, json) in events {
        match json {
            Some(json) => conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, ?2)",
                rusqlite::params![session, seq, json],
            ),
            // OpenClaw stores large records zstd-compressed with their navigation summary.
            None => conn.execute(
                "INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json)
                 VALUES (?1, ?2, ?2, x'28b52ffd', 90000, '{}')",
                rusqlite::params![session, seq],
            ),
        }
        .unwrap();
    }
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('w2', 5, '{\"type\":\"custom\",\"customType\":\"openclaw:scratchpad:refs\",\"data\":\"nope\"}', 5)",
        [],
    )
    .unwrap();
    store
}

#[tokio::test]
async fn an_openclaw_2026_9_store_imports_by_session_key_with_the_newest_window_winning() {
    let fx = Fixture::new();
    let state = tempfile::tempdir().unwrap();
    let store = write_openclaw_store(state.path());
    let before = std::fs::read(&store).unwrap();
    let host = fx.host().await;

    let report = host.import_openclaw(state.path()).await.unwrap();
    assert_eq!(report.sessions, ["agent:main:main"]);
    assert_eq!(report.skipped_lines.len(), 2, "{:?}", report.skipped_lines);
    assert!(report.skipped_lines[0].contains("#w2:2: a compressed record"), "{:?}", report.skipped_lines);
    assert!(report.skipped_lines[1].contains("#w2:6: `openclaw:scratchpad:refs` data must be an array"));

    let rendered = host.before_query(&turn("agent:main:main", "resume"), "next?").await.unwrap().render("", "next?");
    for needle in ["Root cause: timezone mismatch", "1. Fix expiry\n2. Add test", "- src/auth/login.ts"] {
        assert!(rendered.user.contains(needle), "missing {needle:?} in\n{}", rendered.user);
    }
    assert!(!rendered.user.contains("first notes"), "the newer window's notes win");
    let record = host.session("agent:main:main").await.unwrap();
    assert_eq!((record.compaction_count, record.total_tokens), (1, Some(98000)));
    assert_eq!(std::fs::read(&store).unwrap(), before, "the store is only read");

    // The store file and its agent directory name the same store: nothing left to import.
    for path in [store.clone(), store.parent().unwrap().to_owned()] {
        let again = host.import_openclaw(&path).await.unwrap();
        assert_eq!((again.sessions.len(), again.unchanged.as_slice()), (0, ["agent:main:main".to_owned()].as_slice()));
    }
}

#[tokio::test]
async fn a_sqlite_file_that_is_not_an_openclaw_store_is_a_clear_error_and_imports_nothing() {
    let fx = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    let host = fx.host().await;
    let error = host.import_openclaw(&other).await.unwrap_err().to_string();
    assert!(error.contains("not an OpenClaw transcript store"), "{error}");
    assert!(host.sessions().await.unwrap().is_empty());
    let missing = host.import_openclaw(&dir.path().join("nowhere")).await.unwrap_err().to_string();
    assert!(missing.contains("does not exist"), "{missing}");
}
