//! The machine under a SQLite database fails: its disk fills up, its filesystem turns
//! read-only. Each test mounts a small filesystem of its own (tmpfs; the tests run as root),
//! puts a real database on it, and checks through the real binary that the caller gets an error
//! naming the fault, the database and what to do; that nothing is half-written (`PRAGMA
//! integrity_check`, no observation file without its entry); that a coding agent's hook answers
//! and the turn goes on; and that once the fault clears the same `serve` process works again.

use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::support;

use support::{Process, Rpc};

/// A tmpfs of `megabytes` mounted on a fresh directory, unmounted when dropped.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    fn new(megabytes: u32) -> Mount {
        let dir = tempfile::tempdir().unwrap();
        mount(&["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"], dir.path());
        Mount { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the filesystem up with a file of its own; returns the file.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 64 << 10];
        while file.write_all(&block).is_ok() {}
        // What is left, block by block and then byte by byte.
        while file.write_all(&[0u8]).is_ok() {}
        path
    }

    fn remount(&self, mode: &str) {
        mount(&["-o", &format!("remount,{mode}")], self.path());
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

fn mount(args: &[&str], dir: &Path) {
    let status = Command::new("mount").args(args).arg(dir).status().expect("running mount");
    assert!(status.success(), "mount {args:?} {}: this test runs as root", dir.display());
}

/// `scratchpad serve` on `db`, speaking JSON-RPC.
struct Sidecar(Rpc);

impl Sidecar {
    fn start(db: &Path) -> Sidecar {
        let mut command = support::command();
        command.arg("--db").arg(db).arg("serve");
        Sidecar(Rpc::new(Process::spawn(command)))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.0.request(method, params)
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        answer["result"].clone()
    }
}

fn turn(t: &str) -> Value {
    json!({"session_id": "s1", "turn_id": t})
}

/// The large observation a tool returned in step `step` of turn `t`, handed to the plugins.
fn observe(sidecar: &mut Sidecar, t: &str, step: u32, text: &str) -> Value {
    let call = json!({"name": "fetch_log", "arguments": "{}", "step": step});
    sidecar.request("after_tool_result", json!({"turn": turn(t), "call": call, "text": text}))
}

fn integrity(db: &Path) -> String {
    Connection::open(db).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

/// The observation content files beside `db`, and the entries the database holds.
fn files_and_entries(db: &Path) -> (usize, i64) {
    let dir = PathBuf::from(format!("{}-observations", db.display()));
    let files = std::fs::read_dir(&dir).map_or(0, |entries| entries.count());
    let rows = Connection::open(db).unwrap().query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();
    (files, rows)
}

fn hook(db: &Path, state: &Path, prompt: &str) -> std::process::Output {
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": prompt, "cwd": "/tmp"});
    let dir = db.parent().unwrap();
    let mut command = support::command();
    command
        .arg("--db")
        .arg(db)
        .args(["hook", "--runtime", "claude-code"])
        .env("SCRATCHPAD_HOOK_STATE", state)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_full_disk_fails_the_write_by_name_keeps_everything_whole_and_the_server_recovers() {
    let disk = Mount::new(8);
    let db = disk.path().join("s.db");
    let state = tempfile::tempdir().unwrap();
    let mut sidecar = Sidecar::start(&db);
    sidecar.ok("session.create", json!({"session": "s1"}));
    sidecar.ok("before_query", json!({"turn": turn("t1"), "message": "start"}));
    let plan = json!({"action": "set_plan", "content": "1. FULL-PLAN"});
    sidecar.ok("tools.call", json!({"turn": turn("t1"), "name": "session.scratchpad", "arguments": plan}));
    let log = "INFO a line of the log\n".repeat(50_000);
    assert!(observe(&mut sidecar, "t1", 1, &log)["result"]["replaced_by"].is_string(), "offloaded before the fault");

    let filler = disk.fill();
    // Offloading a large observation needs room for its content.
    let full = observe(&mut sidecar, "t1", 2, &log);
    assert_eq!(full["error"]["code"], -32008, "{full}");
    assert_eq!(full["error"]["data"]["fault"], "disk-full", "{full}");
    let message = full["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("is full") && message.contains("s.db") && message.contains("free some space"),
        "{message}"
    );
    // A coding agent's turn goes on, told why.
    let hooked = hook(&db, state.path(), "go on");
    assert!(hooked.status.success(), "{}", support::text(&hooked.stderr));
    let answer: Value = serde_json::from_slice(&hooked.stdout).unwrap();
    assert!(answer["systemMessage"].as_str().unwrap_or_default().contains("is full"), "{answer}");
    // Reading goes on.
    sidecar.ok("session.show", json!({"session": "s1"}));

    std::fs::remove_file(filler).unwrap();
    assert_eq!(integrity(&db), "ok");
    let (files, entries) = files_and_entries(&db);
    assert_eq!(files as i64, entries, "no observation file without its entry, nor the reverse");
    // The same process works again.
    assert!(observe(&mut sidecar, "t1", 2, &log)["result"]["replaced_by"].is_string());
    let note = json!({"action": "append_notes", "content": "after the disk was freed"});
    sidecar.ok("tools.call", json!({"turn": turn("t1"), "name": "session.scratchpad", "arguments": note}));
    let prompt = sidecar.ok("before_query", json!({"turn": turn("t2"), "message": "next"}));
    assert!(prompt.to_string().contains("FULL-PLAN") && prompt.to_string().contains("after the disk was freed"));
    assert!(sidecar.0.process.close(), "serve exits 0");
    assert_eq!(integrity(&db), "ok");
    let (files, entries) = files_and_entries(&db);
    assert_eq!((files as i64, entries), (2, 2));
}

/// Linux refuses to remount a filesystem read-only while a process holds a file on it open for
/// writing (a running `serve`), so the processes here are the one-shot ones a person meets: a
/// command and a coding agent's hook, each opening the database anew.
#[test]
fn a_read_only_filesystem_fails_writes_by_name_and_works_again_once_writable() {
    let disk = Mount::new(8);
    let db = disk.path().join("s.db");
    let state = tempfile::tempdir().unwrap();
    let call = |arguments: &str| support::run(&db, &["call", "s1", "session_scratchpad", arguments]);
    assert!(support::run(&db, &["session", "create", "s1"]).status.success());
    assert!(call(r#"{"action":"set_plan","content":"1. RO-PLAN"}"#).status.success());

    disk.remount("ro");
    let refused = call(r#"{"action":"append_notes","content":"while read-only"}"#);
    assert_eq!(refused.status.code(), Some(1));
    let message = support::text(&refused.stderr);
    assert!(message.contains("cannot be written") && message.contains("s.db") && message.contains("make it writable"));
    assert!(!message.contains("panicked"), "{message}");
    let hooked = hook(&db, state.path(), "go on");
    assert!(hooked.status.success(), "{}", support::text(&hooked.stderr));
    let answer: Value = serde_json::from_slice(&hooked.stdout).unwrap();
    assert!(answer["systemMessage"].as_str().unwrap_or_default().contains("read-only"), "{answer}");

    disk.remount("rw");
    assert!(call(r#"{"action":"append_notes","content":"once writable"}"#).status.success());
    let shown = support::text(&support::run(&db, &["show", "s1"]).stdout);
    assert!(shown.contains("RO-PLAN") && shown.contains("once writable") && !shown.contains("while read-only"));
    assert_eq!(integrity(&db), "ok");
}
