//! Seed 002's OpenClaw interop: real-shaped session JSONL in, scratchpad out, and back.

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
