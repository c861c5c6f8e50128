//! A damaged database file, met by the real binary: every command fails naming the file and
//! `scratchpad doctor`, never with a panic; doctor reports the damage without changing or
//! creating anything, prints a recovery that works when followed as printed, and says plainly
//! what it cannot check.

use crate::support;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Output;

use support::{command, json_of, run, text};

const SESSIONS: usize = 40;
const PAGE: u64 = 4096;
/// The project the sessions belong to: recall indexes their plans.
const PROJECT: &str = "/projects/doctor";

/// A database built by the real binary: `SESSIONS` sessions of `PROJECT`, each with its own
/// plan (holding the word `markerNN`), made in one `scratchpad serve`.
fn build(db: &Path) {
    let mut serve = support::Process::spawn({
        let mut c = command();
        c.arg("--db").arg(db).arg("serve");
        c
    });
    for i in 0..SESSIONS {
        let create = serde_json::json!({"jsonrpc": "2.0", "id": i * 2, "method": "session.create",
            "params": {"session": format!("session-{i:02}"), "project": PROJECT}});
        let plan = serde_json::json!({"jsonrpc": "2.0", "id": i * 2 + 1, "method": "tools.call", "params": {
            "turn": {"session_id": format!("session-{i:02}"), "turn_id": "t1"}, "name": "session.scratchpad",
            "arguments": {"action": "set_plan", "content": format!("plan of session-{i:02}: marker{i:02}")}}});
        // One at a time: the sidecar answers requests concurrently.
        for request in [create, plan] {
            serve.send(format!("{request}\n").as_bytes());
            let answer = serve.read();
            assert!(answer.get("result").is_some(), "{answer}");
        }
    }
    assert!(serve.close(), "serve exits cleanly");
    assert!(!wal(db).exists(), "the last connection folded its write-ahead log into the file");
}

fn wal(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", db.display()))
}

/// The pages of `table`'s tree that hold its rows, as SQLite's `dbstat` lists them.
fn leaf_pages(db: &Path, table: &str) -> Vec<u64> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt =
        conn.prepare("SELECT pageno FROM dbstat WHERE name = ?1 AND pagetype = 'leaf' ORDER BY pageno").unwrap();
    stmt.query_map([table], |r| r.get::<_, u32>(0)).unwrap().map(|p| u64::from(p.unwrap())).collect()
}

/// Overwrites pages `first..=last` (1-based) of the file with bytes that are no b-tree page.
fn overwrite_pages(db: &Path, first: u64, last: u64) {
    let mut file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    file.seek(SeekFrom::Start((first - 1) * PAGE)).unwrap();
    let garbage: Vec<u8> = (0..(last - first + 1) * PAGE).map(|i| (i * 7 + 13) as u8).collect();
    file.write_all(&garbage).unwrap();
    file.sync_all().unwrap();
}

/// The files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Requires `output` to be a failure with exit status `code` and no panic.
fn failed(output: &Output, code: i32) -> (String, String) {
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(code), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (stdout, stderr)
}

/// Runs the commands a doctor report printed, as a user pastes them into a shell
/// (`scratchpad` being this binary): what they printed.
fn follow(commands: &[String], dir: &Path) -> String {
    let script = format!("set -e\nscratchpad() {{ \"$SCRATCHPAD_BIN\" \"$@\"; }}\n{}\n", commands.join("\n"));
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("SCRATCHPAD_BIN", env!("CARGO_BIN_EXE_scratchpad"))
        .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
        .env_remove(scratchpad_host::DATABASE_URL_ENV)
        .output()
        .unwrap();
    assert!(output.status.success(), "{script}\n{}\n{}", text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}

/// The indented command lines after `after` in a report, up to the next unindented line.
fn commands_after(report: &str, after: &str) -> Vec<String> {
    let start = report.find(after).unwrap_or_else(|| panic!("no {after:?} in:\n{report}")) + after.len();
    report[start..]
        .lines()
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .map(|line| line.trim().to_owned())
        .collect()
}

#[test]
fn a_damaged_page_fails_every_command_naming_the_file_and_doctor_recovers_the_rest() {
    // A space in the path: the printed commands must quote it.
    let dir = tempfile::Builder::new().prefix("doctor db ").tempdir().unwrap();
    let db = dir.path().join("s.db");
    build(&db);
    let before = listing(dir.path());

    let ok = run(&db, &["doctor"]);
    let stdout = text(&ok.stdout);
    assert!(ok.status.success(), "{stdout}\n{}", text(&ok.stderr));
    assert!(stdout.contains("integrity_check: ok") && stdout.contains("foreign_key_check: ok"), "{stdout}");
    assert!(stdout.contains(&db.display().to_string()), "{stdout}");
    assert_eq!(listing(dir.path()), before, "doctor created nothing beside the file");
    assert_eq!(json_of(&run(&db, &["--json", "doctor"]))["ok"], true);

    // One page of the sessions table's rows, in the middle of the table, overwritten.
    let leaves = leaf_pages(&db, "sessions");
    assert!(leaves.len() >= 3, "the sessions span several pages: {leaves:?}");
    let damaged = leaves[leaves.len() / 2];
    overwrite_pages(&db, damaged, damaged);

    // A normal command fails: the file and doctor named, no panic.
    let (_, stderr) = failed(&run(&db, &["session", "list"]), 1);
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
    assert!(stderr.contains("scratchpad doctor --db"), "{stderr}");
    let json = json_of(&run(&db, &["--json", "session", "list"]));
    assert!(json["error"]["message"].as_str().unwrap().contains("scratchpad doctor"), "{json}");

    // Doctor names the damage and the recovery, and exits 1.
    let (report, stderr) = failed(&run(&db, &["doctor"]), 1);
    assert!(stderr.contains("is damaged"), "{stderr}");
    assert!(report.contains(&format!("page {damaged}")), "the damaged page is named:\n{report}");
    assert!(report.contains("or restore a backup"), "{report}");
    let json = json_of(&run(&db, &["--json", "doctor"]));
    assert_eq!(json["ok"], false, "{json}");
    assert!(!json["check"]["integrity_check"].as_array().unwrap().is_empty(), "{json}");
    let recovery = commands_after(&report, "with no scratchpad process using it:");
    assert_eq!(json["recovery"], serde_json::json!(recovery), "the same commands either way");
    assert!(recovery[0].starts_with("scratchpad doctor --db '"), "the path is quoted: {recovery:?}");
    assert_eq!(listing(dir.path()), before, "checking it changed nothing beside it");

    // Followed as printed, the recovery puts a sound copy in place.
    let recovered = follow(&recovery, dir.path());
    // What was lost is said: the damaged page's sessions, and the plans of those sessions.
    assert!(recovered.contains("sessions: ") && recovered.contains("reading stopped at damage"), "{recovered}");
    assert!(recovered.contains("plugin_state: dropped"), "{recovered}");
    assert!(!recovered.contains("not made again"), "the whole schema was made again:\n{recovered}");
    let ok = run(&db, &["doctor"]);
    assert!(ok.status.success(), "the recovered file passes doctor:\n{}", text(&ok.stdout));
    assert!(dir.path().join("s.db.damaged").exists(), "the damaged file is kept aside");

    // It holds every session SQLite could still read, with its plan; the damaged page's are gone.
    let list = run(&db, &["session", "list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let survivors: Vec<String> = text(&list.stdout).lines().map(|l| l.split('\t').next().unwrap().to_owned()).collect();
    assert!(survivors.len() > SESSIONS / 2 && survivors.len() < SESSIONS, "{survivors:?}");
    for survivor in [survivors.first().unwrap(), survivors.last().unwrap()] {
        let show = run(&db, &["show", survivor]);
        assert!(text(&show.stdout).contains(&format!("plan of {survivor}")), "{}", text(&show.stdout));
    }
    assert!(
        survivors.contains(&format!("session-{:02}", SESSIONS - 1)),
        "read backwards past the damage: {survivors:?}"
    );
    // Its full-text index was made again from the documents it kept: recall finds a plan.
    let found = run(&db, &["recall", "search", "marker00", "--project-key", PROJECT]);
    assert!(text(&found.stdout).contains("plan of session-00: marker00"), "{}", text(&found.stderr));
    // It is a database like any other: a new session and a call on it.
    let created = run(&db, &["session", "create", "after-recovery"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let call =
        run(&db, &["call", "after-recovery", "session.scratchpad", r#"{"action":"set_plan","content":"go on"}"#]);
    assert!(call.status.success(), "{}", text(&call.stderr));
}

#[test]
fn a_file_overwritten_past_its_first_page_fails_to_open_and_doctor_says_to_restore_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    build(&db);
    let pages = std::fs::metadata(&db).unwrap().len() / PAGE;
    overwrite_pages(&db, 2, pages);
    let before = listing(dir.path());

    let (_, stderr) = failed(&run(&db, &["session", "list"]), 1);
    assert!(stderr.contains(&db.display().to_string()) && stderr.contains("scratchpad doctor"), "{stderr}");
    let (_, stderr) = failed(&run(&db, &["session", "create", "s"]), 1);
    assert!(stderr.contains("scratchpad doctor"), "{stderr}");

    let (report, _) = failed(&run(&db, &["doctor"]), 1);
    assert!(report.contains("integrity_check:") && report.contains("or restore a backup"), "{report}");

    // Nothing readable is left to copy: said so, and no copy is made.
    let out = dir.path().join("s.db.recovered");
    let (_, stderr) = failed(&run(&db, &["doctor", "--recover", out.to_str().unwrap()]), 1);
    assert!(stderr.contains("restore a backup"), "{stderr}");
    assert_eq!(listing(dir.path()), before, "no copy, no leftover");
}

#[test]
fn what_is_not_a_database_is_said_so_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let (missing, empty, text_file) =
        (dir.path().join("missing.db"), dir.path().join("empty.db"), dir.path().join("notes.txt"));
    std::fs::write(&empty, b"").unwrap();
    std::fs::write(&text_file, b"remember the milk\n").unwrap();
    let before = listing(dir.path());
    for (db, says) in [
        (&missing, "there is no database at"),
        (&empty, "is empty"),
        (&text_file, "is not a SQLite database"),
        (&dir.path().to_owned(), "is a directory"),
    ] {
        let (_, stderr) = failed(&run(db, &["doctor"]), 1);
        assert!(stderr.contains(says) && stderr.contains(&db.display().to_string()), "{stderr}");
        let json = json_of(&run(db, &["--json", "doctor"]));
        assert!(json["error"]["message"].as_str().unwrap().contains(says), "{json}");
        let out = dir.path().join("copy.db");
        failed(&run(db, &["doctor", "--recover", out.to_str().unwrap()]), 1);
    }
    assert_eq!(listing(dir.path()), before, "nothing created, nothing changed");
    assert_eq!(std::fs::read(&text_file).unwrap(), b"remember the milk\n");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);

    // A normal command on the text file fails the same way the damaged file does.
    let (_, stderr) = failed(&run(&text_file, &["session", "list"]), 1);
    assert!(stderr.contains("scratchpad doctor"), "{stderr}");

    // A PostgreSQL database is not doctor's: it says so, and shows no password.
    let (_, stderr) = failed(&run("postgres://agent:hunter2@127.0.0.1:9/x", &["doctor"]), 1);
    assert!(stderr.contains("SQLite database files") && !stderr.contains("hunter2"), "{stderr}");

    // --recover writes a new file, never over one.
    let db = dir.path().join("s.db");
    build(&db);
    let (_, stderr) = failed(&run(&db, &["doctor", "--recover", text_file.to_str().unwrap()]), 1);
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read(&text_file).unwrap(), b"remember the milk\n");

    // A usage error is status 2.
    failed(&run(&db, &["doctor", "--recover"]), 2);
}
