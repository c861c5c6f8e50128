//! Another process holds the SQLite file's write lock (as a `sqlite3` shell in `BEGIN
//! EXCLUSIVE` would: here the test process itself, through SQLite's own locking) past the
//! turn's bound. On the paths a person waits on — `scratchpad hook`, the hook tool of
//! `scratchpad mcp --hook-tool`, the sidecar's `before_query` — the wait ends at the bound
//! (`turn_wait_ms`), the turn goes on without the injection and the runtime is told its way,
//! nothing is half-written, other work that only reads goes on meanwhile, and once the lock
//! is released the same process works again.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::support;

use support::{Process, Rpc};

/// The turn's bound the tests configure: short, so they take little time.
const TURN_WAIT_MS: u64 = 400;

/// A configuration file in `dir` with the turn's bound set.
fn config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("scratchpad.toml");
    std::fs::write(&path, format!("turn_wait_ms = {TURN_WAIT_MS}\n")).unwrap();
    path
}

/// Another process's write lock on `db`, held until dropped (the transaction rolls back).
struct Writer {
    _holding: Connection,
}

impl Writer {
    fn lock(db: &Path) -> Writer {
        let conn = Connection::open(db).unwrap();
        // Something written, as a real writer would have: nothing of it may be seen or lost.
        conn.execute_batch(
            "BEGIN EXCLUSIVE;
             INSERT INTO plugin_identities (name, identity, recorded_at) VALUES ('other-writer', 'other', 0);",
        )
        .unwrap();
        Writer { _holding: conn }
    }
}

fn prompt_event(session: &str, prompt: &str) -> Vec<u8> {
    json!({"hook_event_name": "UserPromptSubmit", "session_id": session, "prompt": prompt, "cwd": "/tmp"})
        .to_string()
        .into_bytes()
}

/// Runs `scratchpad --config CONFIG hook` on `dir`'s database with `input`.
fn hook(dir: &Path, input: &[u8]) -> std::process::Output {
    let config = config(dir);
    support::hook(dir, "", &["--runtime", "claude-code"], &[("SCRATCHPAD_CONFIG", config.to_str().unwrap())], input)
}

fn turns(db: &Path, session: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row("SELECT turn_index FROM sessions WHERE id = ?1", [session], |r| r.get(0)).unwrap()
}

fn integrity(db: &Path) -> String {
    Connection::open(db).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

#[test]
fn a_hook_waits_at_most_the_turns_bound_then_the_turn_goes_on_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // A session with a plan, so a prompt has something to inject.
    let saved = hook(dir.path(), &prompt_event("s1", "start"));
    assert!(saved.status.success(), "{}", support::text(&saved.stderr));
    let plan =
        support::run(&db, &["call", "s1", "session_scratchpad", r#"{"action":"set_plan","content":"1. LOCK-PLAN"}"#]);
    assert!(plan.status.success(), "{}", support::text(&plan.stderr));
    let before = turns(&db, "s1");

    let writer = Writer::lock(&db);
    let started = Instant::now();
    let locked = hook(dir.path(), &prompt_event("s1", "go on"));
    let waited = started.elapsed();
    assert!(locked.status.success(), "exit 0: the turn goes on; {}", support::text(&locked.stderr));
    let answer: Value = serde_json::from_slice(&locked.stdout).unwrap();
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("locked by another writer") && message.contains("s.db"), "{answer}");
    assert!(answer.get("hookSpecificOutput").is_none(), "no injection: {answer}");
    // The busy timeout is 30 s; the turn's bound ends the wait long before.
    assert!(waited < Duration::from_secs(20), "waited {waited:?}");
    // Reading goes on meanwhile, with the other writer's work unseen.
    let shown = support::run(&db, &["show", "s1"]);
    assert!(shown.status.success() && support::text(&shown.stdout).contains("LOCK-PLAN"));
    drop(writer);

    assert_eq!(turns(&db, "s1"), before, "nothing of the bounded turn was kept");
    let again = hook(dir.path(), &prompt_event("s1", "go on"));
    assert!(again.status.success(), "{}", support::text(&again.stderr));
    let answer: Value = serde_json::from_slice(&again.stdout).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("LOCK-PLAN"), "the lock released, the plan is injected: {answer}");
    assert_eq!(turns(&db, "s1"), before + 1);
    assert_eq!(integrity(&db), "ok");
    let other: i64 = Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM plugin_identities WHERE name = 'other-writer'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(other, 0, "the other writer rolled back, nothing of it appeared");
}

#[test]
fn the_sidecar_answers_before_query_with_a_retryable_busy_error_and_serves_again_after() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let config = config(dir.path());
    let mut command = support::command();
    command.arg("--db").arg(&db).arg("--config").arg(&config).arg("serve");
    let mut sidecar = Rpc::new(Process::spawn(command));
    let request = |sidecar: &mut Rpc, method: &str, params: Value| sidecar.request(method, params);
    let created = request(&mut sidecar, "session.create", json!({"session": "s1"}));
    assert!(created.get("result").is_some(), "{created}");
    let turn = |t: &str| json!({"session_id": "s1", "turn_id": t});
    let before = turns(&db, "s1");

    let writer = Writer::lock(&db);
    let busy = request(&mut sidecar, "before_query", json!({"turn": turn("t1"), "message": "hello"}));
    assert_eq!(busy["error"]["code"], -32007, "{busy}");
    assert_eq!(busy["error"]["data"]["retryable"], true, "{busy}");
    assert!(busy["error"]["message"].as_str().unwrap().contains("locked by another writer"), "{busy}");
    // Reads are served meanwhile.
    let shown = request(&mut sidecar, "session.show", json!({"session": "s1"}));
    assert!(shown.get("result").is_some(), "{shown}");
    drop(writer);

    let served = request(&mut sidecar, "before_query", json!({"turn": turn("t1"), "message": "hello"}));
    assert!(served["result"]["rendered"]["user"].as_str().unwrap().contains("hello"), "{served}");
    assert_eq!(turns(&db, "s1"), before + 1, "the bounded attempt kept nothing, the second entered the turn once");
    assert!(sidecar.process.close(), "the sidecar exits 0");
    assert_eq!(integrity(&db), "ok");
}

#[test]
fn the_mcp_hook_tool_answers_with_a_notice_when_the_lock_outlasts_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let config = config(dir.path());
    let mut command = support::command();
    command
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .args(["mcp", "--session", "cc-1", "--hook-tool"])
        .env("SCRATCHPAD_HOOK_STATE", dir.path().join("hooks"));
    let mut server = Rpc::new(Process::spawn(command));
    let mut request = |server: &mut Rpc, method: &str, params: Value| server.request(method, params);
    let init = request(
        &mut server,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    server.process.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "cc-1", "prompt": "hello"});
    let hook = |server: &mut Rpc, request: &mut dyn FnMut(&mut Rpc, &str, Value) -> Value| -> Value {
        let answer = request(server, "tools/call", json!({"name": "hook", "arguments": event.clone()}));
        let result = &answer["result"];
        assert_ne!(result["isError"], true, "the hook tool answers, never fails the turn: {answer}");
        let text = result["content"][0]["text"].as_str().unwrap_or("{}");
        serde_json::from_str(text).unwrap()
    };
    // The session exists and has had a turn before the lock.
    hook(&mut server, &mut request);

    let writer = Writer::lock(&db);
    let locked = hook(&mut server, &mut request);
    let message = locked["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("locked by another writer"), "{locked}");
    assert!(locked.get("hookSpecificOutput").is_none(), "{locked}");
    drop(writer);

    let again = hook(&mut server, &mut request);
    assert!(again.get("systemMessage").is_none(), "served again without a restart: {again}");
    assert_eq!(integrity(&db), "ok");
}
