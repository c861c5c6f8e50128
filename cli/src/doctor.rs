//! `scratchpad doctor`: whether the database file is sound, checked without changing it — opened
//! read-only, no migration run, nothing created — and what to do about one that is not:
//! `--recover FILE` copies what SQLite can still read into a new file (`doctor/salvage.rs`).
//!
//! SQLite files only: a PostgreSQL server checks its own data. Every other command that meets a
//! damaged file points here ([`hint`]).

mod salvage;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags};
use scratchpad_host::terminal;
use serde_json::json;

use crate::args::Global;
use crate::output::print_json;
use crate::shell::quote;

/// Most problems listed of each check.
const MAX_LISTED: usize = 20;

/// The first 16 bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Checks the configured database, or with `recover` copies what is readable of it into that
/// new file and checks the copy. A damaged file is reported and exits with status 1.
pub(crate) fn run(global: &Global, recover: Option<&Path>) -> anyhow::Result<()> {
    let location = global.host_config()?.database;
    let Some(path) = location.path() else {
        bail!(
            "doctor checks SQLite database files; {location} is a PostgreSQL server, which checks its own data \
             (`pg_amcheck`, the `amcheck` extension)"
        );
    };
    match recover {
        Some(out) => recovered(global, path, out),
        None => {
            let report = check(path)?;
            finish(global, &report, |report| json!({ "database": report.path, "check": report.json() }))
        }
    }
}

/// `--recover OUT`: the copy, what it kept and lost, then the copy's own check.
fn recovered(global: &Global, from: &Path, out: &Path) -> anyhow::Result<()> {
    let salvage = salvage::recover(from, out)?;
    let report = check(out)?;
    let (shown, out_shown) = (from.display().to_string(), out.display().to_string());
    let mut put_in_place = move_aside(&shown);
    put_in_place.push(format!("mv {} {}", quote(&out_shown), quote(&shown)));
    if !global.json {
        println!("copied what SQLite could read of {shown} into {out_shown}:");
        salvage.lines().iter().for_each(|line| println!("  {}", terminal::line(line)));
    }
    finish(global, &report, |report| {
        json!({
            "database": from, "recovered": out, "salvage": salvage.json(), "check": report.json(),
            "put_in_place": put_in_place,
        })
    })?;
    if !global.json {
        println!("To put it in place, with no scratchpad process using {shown}:");
        put_in_place.iter().for_each(|line| println!("  {line}"));
    }
    Ok(())
}

/// Prints `report` (as `json` builds it with `--json`); an error when the file is damaged.
fn finish(global: &Global, report: &Report, json: impl Fn(&Report) -> serde_json::Value) -> anyhow::Result<()> {
    let recovery = (!report.sound()).then(|| recovery(&report.path));
    if global.json {
        let mut body = json(report);
        body["ok"] = json!(report.sound());
        if let Some(lines) = &recovery {
            body["recovery"] = json!(lines);
        }
        print_json(&body);
        if !report.sound() {
            // The report above is the answer; exit as any failed command does.
            std::process::exit(1);
        }
        return Ok(());
    }
    report.print();
    match recovery {
        None => Ok(()),
        Some(lines) => {
            let path = report.path.display();
            println!("{path} is damaged. To recover what SQLite can still read, with no scratchpad process using it:");
            lines.iter().for_each(|line| println!("  {line}"));
            println!("or restore a backup of {path}.");
            bail!("{path} is damaged")
        }
    }
}

/// The commands that copy what is readable of `path` into a new file and put it in place.
fn recovery(path: &Path) -> Vec<String> {
    let path = path.display().to_string();
    let out = format!("{path}.recovered");
    let mut lines = vec![format!("scratchpad doctor --db {} --recover {}", quote(&path), quote(&out))];
    lines.extend(move_aside(&path));
    lines.push(format!("mv {} {}", quote(&out), quote(&path)));
    lines
}

/// The commands that move the damaged file aside, with its write-ahead log and shared-memory
/// files when they are there: left beside a new file of the same name, SQLite would replay the
/// old log into it.
fn move_aside(path: &str) -> Vec<String> {
    ["", "-wal", "-shm"]
        .into_iter()
        .filter(|suffix| suffix.is_empty() || Path::new(&format!("{path}{suffix}")).exists())
        .map(|suffix| format!("mv {} {}", quote(&format!("{path}{suffix}")), quote(&format!("{path}.damaged{suffix}"))))
        .collect()
}

/// What the checks found in one database file.
struct Report {
    path: PathBuf,
    /// `PRAGMA user_version`: the schema version the file's migrations reached.
    schema_version: Option<i64>,
    /// `PRAGMA integrity_check`: its problems (none when it answered `ok`).
    integrity: Vec<String>,
    /// `PRAGMA foreign_key_check`: rows whose parent row is missing.
    foreign_keys: Vec<String>,
}

impl Report {
    fn sound(&self) -> bool {
        self.integrity.is_empty() && self.foreign_keys.is_empty()
    }

    fn print(&self) {
        let version = self.schema_version.map(|v| format!(", schema version {v}")).unwrap_or_default();
        println!("database: {} (SQLite{version})", self.path.display());
        for (name, problems) in [("integrity_check", &self.integrity), ("foreign_key_check", &self.foreign_keys)] {
            if problems.is_empty() {
                println!("{name}: ok");
                continue;
            }
            println!("{name}:");
            problems.iter().for_each(|p| println!("  {}", terminal::line(p)));
        }
        if self.sound() {
            println!("ok");
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "ok": self.sound(),
            "schema_version": self.schema_version,
            "integrity_check": self.integrity,
            "foreign_key_check": self.foreign_keys,
        })
    }
}

/// Checks the SQLite file at `path` without changing it.
fn check(path: &Path) -> anyhow::Result<Report> {
    let conn = open_read_only(path)?;
    let schema_version = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).ok();
    // One problem past the listed ones says whether there are more.
    let mut integrity = Vec::new();
    let integrity_check = format!("PRAGMA integrity_check({})", MAX_LISTED + 1);
    if let Err(error) = each_row(&conn, &integrity_check, |r| {
        // One answer may hold several lines.
        integrity.extend(r.get::<_, String>(0)?.lines().map(str::to_owned));
        Ok(())
    }) {
        // What it found before SQLite gave up, and why it did.
        integrity.truncate(MAX_LISTED - 1);
        integrity.push(format!("SQLite could read no further: {error}"));
    }
    if integrity == ["ok"] {
        integrity.clear();
    } else if integrity.len() > MAX_LISTED {
        integrity.truncate(MAX_LISTED);
        integrity.push("… and more".to_owned());
    }
    let violation = |r: &rusqlite::Row| {
        let (table, rowid, parent) = (r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?, r.get::<_, String>(2)?);
        let row = rowid.map(|id| format!(" row {id}")).unwrap_or_default();
        Ok(format!("{table}{row}: its row in {parent} is missing"))
    };
    let foreign_keys = match rows(&conn, "PRAGMA foreign_key_check", violation) {
        Ok(mut lines) if lines.len() > MAX_LISTED => {
            let more = lines.len() - MAX_LISTED;
            lines.truncate(MAX_LISTED);
            lines.push(format!("… and {more} more"));
            lines
        }
        Ok(lines) => lines,
        Err(error) => vec![format!("SQLite cannot check them: {error}")],
    };
    Ok(Report { path: path.to_owned(), schema_version, integrity, foreign_keys })
}

/// Calls `row` on each row `sql` returns, up to the first error.
fn each_row(
    conn: &Connection,
    sql: &str,
    mut row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        row(r)?;
    }
    Ok(())
}

/// Every row `sql` returns, read with `row`.
fn rows<T>(
    conn: &Connection,
    sql: &str,
    row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    conn.prepare(sql)?.query_map([], row)?.collect()
}

/// The SQLite file at `path`, opened read-only once it is known to be one: never created, and
/// every way it is not a database file is an error naming it.
fn open_read_only(path: &Path) -> anyhow::Result<Connection> {
    let shown = path.display();
    let metadata = match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            bail!("there is no database at {shown}: nothing to check (doctor creates nothing)")
        }
        other => other.with_context(|| format!("reading {shown}"))?,
    };
    if metadata.is_dir() {
        bail!("{shown} is a directory, not a database file");
    }
    if !metadata.is_file() {
        bail!("{shown} is not a regular file");
    }
    if metadata.len() == 0 {
        bail!("{shown} is empty: it holds no database (a scratchpad command would create one in it)");
    }
    let mut header = [0u8; 16];
    let read = {
        use std::io::Read;
        let mut file = std::fs::File::open(path).with_context(|| format!("opening {shown}"))?;
        file.read(&mut header).with_context(|| format!("reading {shown}"))?
    };
    if read < header.len() || &header != SQLITE_HEADER {
        bail!(
            "{shown} is not a SQLite database: it does not start with SQLite's header (another file, or its first \
             page overwritten); restore a backup of it, or name the database with --db"
        );
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(uri(path)?, flags).with_context(|| format!("opening {shown} read-only"))?;
    // A host writing to it at the same moment holds its lock for milliseconds.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// The SQLite URI that opens `path` read-only. Without a write-ahead log beside it, no process
/// is using the file in WAL mode, and it is opened immutable: a read-only connection to a WAL
/// database would otherwise create the log and its shared-memory file, and leave them behind.
fn uri(path: &Path) -> anyhow::Result<String> {
    use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
    const URI_PATH: &AsciiSet = &CONTROLS.add(b' ').add(b'%').add(b'?').add(b'#').add(b'"');
    let absolute = std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
    let text = absolute.to_str().with_context(|| format!("{} is not valid UTF-8", path.display()))?;
    let text = text.replace('\\', "/");
    let slash = if text.starts_with('/') { "" } else { "/" };
    let mut wal = absolute.into_os_string();
    wal.push("-wal");
    let immutable = if Path::new(&wal).exists() { "" } else { "&immutable=1" };
    Ok(format!("file:{slash}{}?mode=ro{immutable}", utf8_percent_encode(&text, URI_PATH)))
}

/// `error` with a pointer to `scratchpad doctor` when SQLite found the database file damaged or
/// not a database: the message names the file and what to run.
pub(crate) fn hint(error: anyhow::Error, global: &Global) -> anyhow::Error {
    let sqlite = error.chain().any(|cause| {
        cause.downcast_ref::<rusqlite::Error>().and_then(rusqlite::Error::sqlite_error_code).is_some_and(|code| {
            matches!(code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        })
    });
    // The host keeps some SQLite errors as text only; these are SQLite's words for the two codes.
    let text = format!("{error:#}");
    let damaged =
        sqlite || text.contains("database disk image is malformed") || text.contains("file is not a database");
    let path = global.host_config().ok().and_then(|config| config.database.path().map(Path::to_owned));
    match path {
        Some(path) if damaged => {
            let shown = path.display().to_string();
            error.context(format!(
                "the database file {shown} is damaged or not a database (`scratchpad doctor --db {}` checks it and \
                 says how to recover)",
                quote(&shown)
            ))
        }
        _ => error,
    }
}
