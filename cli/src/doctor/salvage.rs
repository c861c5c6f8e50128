//! `doctor --recover FILE`: what SQLite can still read of a damaged database, copied into a new
//! file — what `sqlite3 DB .dump | sqlite3 NEW` does, but keeping on past damage (that dump ends
//! in `ROLLBACK` when a table is damaged, leaving NEW empty), keeping `user_version` (the
//! schema version the host's migrations go by), and needing no `sqlite3` shell (Debian's cannot
//! `.recover`: its SQLite lacks the `sqlite_dbpage` table that needs).
//!
//! Nothing here knows the host's schema: the tables, indexes and triggers are the file's own,
//! full-text indexes are rebuilt from their content, and rows whose parent row was lost are
//! dropped, so the copy passes both of doctor's checks.

use std::path::Path;

use anyhow::{Context, bail};
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};
use serde_json::json;

/// What a recovery kept and lost.
pub(super) struct Salvage {
    /// Each table's rows copied, and whether reading it stopped at damage.
    tables: Vec<(String, u64, bool)>,
    /// Rows dropped, per table, because the row they belong to was lost.
    dropped: Vec<(String, u64)>,
    /// Schema objects that could not be made again, with why.
    failed: Vec<String>,
}

impl Salvage {
    pub(super) fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .tables
            .iter()
            .map(|(name, rows, cut)| match cut {
                true => format!("{name}: {rows} row(s); reading stopped at damage, rows past it are lost"),
                false => format!("{name}: {rows} row(s)"),
            })
            .collect();
        lines.extend(
            self.dropped.iter().map(|(name, n)| format!("{name}: dropped {n} row(s) whose parent row was lost")),
        );
        lines.extend(self.failed.iter().map(|why| format!("not made again: {why}")));
        lines
    }

    pub(super) fn json(&self) -> serde_json::Value {
        json!({
            "tables": self.tables.iter().map(|(name, rows, cut)| json!({ "name": name, "rows": rows, "damaged": cut })).collect::<Vec<_>>(),
            "dropped": self.dropped.iter().map(|(name, rows)| json!({ "table": name, "rows": rows })).collect::<Vec<_>>(),
            "failed": self.failed,
        })
    }
}

/// Copies what is readable of the SQLite file `from` into the new file `to`.
pub(super) fn recover(from: &Path, to: &Path) -> anyhow::Result<Salvage> {
    let src = super::open_read_only(from)?;
    let schema = schema(&src).map_err(|error| {
        anyhow::anyhow!(
            "SQLite cannot read the schema of {} ({error}): there is nothing to copy; restore a backup of it",
            from.display()
        )
    })?;
    if std::fs::symlink_metadata(to).is_ok() {
        bail!("{} already exists: --recover writes a new file", to.display());
    }
    let name = to.file_name().with_context(|| format!("{} names no file", to.display()))?;
    // Made under another name and renamed when whole: a crash leaves no half copy named `to`.
    let partial = to.with_file_name(format!(".{}.partial", name.to_string_lossy()));
    let _ = std::fs::remove_file(&partial);
    let result = Connection::open(&partial)
        .with_context(|| format!("creating {}", partial.display()))
        .and_then(|mut dst| copy(&src, &schema, &mut dst).with_context(|| format!("writing {}", partial.display())));
    match result {
        Ok(salvage) => {
            std::fs::rename(&partial, to)
                .with_context(|| format!("renaming {} to {}", partial.display(), to.display()))?;
            Ok(salvage)
        }
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

/// One entry of the damaged file's schema.
struct Entry {
    kind: String,
    name: String,
    sql: String,
}

impl Entry {
    fn is_virtual(&self) -> bool {
        self.sql.get(..20).is_some_and(|s| s.eq_ignore_ascii_case("CREATE VIRTUAL TABLE"))
    }
}

fn copy(src: &Connection, schema: &[Entry], dst: &mut Connection) -> anyhow::Result<Salvage> {
    let mut salvage = Salvage { tables: Vec::new(), dropped: Vec::new(), failed: Vec::new() };
    dst.pragma_update(None, "foreign_keys", false)?;
    let tx = dst.transaction()?;
    let make = |tx: &rusqlite::Transaction, entry: &Entry, failed: &mut Vec<String>| {
        // One statement, as the schema holds: `execute` refuses any trailing one.
        if let Err(error) = tx.execute(&entry.sql, []) {
            failed.push(format!("{} {}: {error}", entry.kind, entry.name));
        }
    };
    // Virtual tables first: making one makes its shadow tables, which the schema lists too.
    let tables = schema.iter().filter(|e| e.kind == "table");
    for entry in tables.clone().filter(|e| e.is_virtual()) {
        make(&tx, entry, &mut salvage.failed);
    }
    for entry in tables.clone().filter(|e| !e.is_virtual() && !e.name.starts_with("sqlite_")) {
        if !exists(&tx, &entry.name)? {
            make(&tx, entry, &mut salvage.failed);
        }
    }
    // The rows, before the triggers exist (they would act on each copied row twice).
    for entry in tables.clone().filter(|e| !e.is_virtual() && !e.name.starts_with("sqlite_")) {
        if exists(&tx, &entry.name)? {
            let (rows, cut) = copy_rows(src, &tx, &entry.name)?;
            salvage.tables.push((entry.name.clone(), rows, cut));
        }
    }
    // AUTOINCREMENT's counters, never below what the damaged file had handed out.
    if exists(src, "sqlite_sequence")? && exists(&tx, "sqlite_sequence")? {
        let counters = super::rows(src, "SELECT name, seq FROM sqlite_sequence", |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })
        .unwrap_or_default();
        for (table, seq) in counters {
            if tx.execute("UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1", (&table, seq))? == 0 {
                tx.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)", (&table, seq))?;
            }
        }
    }
    for entry in schema.iter().filter(|e| e.kind != "table") {
        make(&tx, entry, &mut salvage.failed);
    }
    // A full-text index is made again from its content, which may have lost rows.
    for entry in tables.filter(|e| e.is_virtual() && e.sql.to_ascii_lowercase().contains("fts5")) {
        let name = ident(&entry.name);
        if let Err(error) = tx.execute(&format!("INSERT INTO {name}({name}) VALUES ('rebuild')"), []) {
            salvage.failed.push(format!("the full-text index {}: {error}", entry.name));
        }
    }
    for pragma in ["user_version", "application_id"] {
        let value: i64 = src.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))?;
        tx.pragma_update(None, pragma, value)?;
    }
    salvage.dropped = drop_orphans(&tx)?;
    tx.commit()?;
    Ok(salvage)
}

/// The schema entries SQLite can still read (all of them, unless the schema itself is damaged).
fn schema(src: &Connection) -> anyhow::Result<Vec<Entry>> {
    let mut stmt = src.prepare("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    let mut entries = Vec::new();
    while let Ok(Some(row)) = rows.next() {
        let (kind, name, sql): (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        // Only what a schema holds: a damaged or hand-made file could hold any text.
        if sql.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("CREATE ")) {
            entries.push(Entry { kind, name, sql });
        }
    }
    if entries.is_empty() {
        bail!("none of it is readable");
    }
    Ok(entries)
}

fn exists(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1", [table], |r| r.get(0))
}

/// `name` as an SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Copies `table`'s readable rows: in order up to the first damage, then, for a table with
/// rowids, backwards from its end down to the damage. How many, and whether any damage cut
/// the reading short.
fn copy_rows(src: &Connection, dst: &Connection, table: &str) -> anyhow::Result<(u64, bool)> {
    let name = ident(table);
    let (mut forward, rowids) = match src.prepare(&format!("SELECT *, _rowid_ FROM {name} ORDER BY _rowid_")) {
        Ok(stmt) => (stmt, true),
        // WITHOUT ROWID tables, and any whose rows SQLite cannot even plan to read.
        Err(_) => match src.prepare(&format!("SELECT * FROM {name}")) {
            Ok(stmt) => (stmt, false),
            Err(_) => return Ok((0, true)),
        },
    };
    let columns = forward.column_count() - usize::from(rowids);
    let placeholders = vec!["?"; columns].join(", ");
    let mut copy = Copy {
        insert: dst.prepare(&format!("INSERT INTO {name} VALUES ({placeholders})"))?,
        columns,
        rowids,
        copied: 0,
        last: None,
    };
    let mut cut = copy.rows(&mut forward, &[])?;
    if cut && rowids {
        let above = copy.last.unwrap_or(i64::MIN);
        let mut backward =
            src.prepare(&format!("SELECT *, _rowid_ FROM {name} WHERE _rowid_ > ?1 ORDER BY _rowid_ DESC"))?;
        copy.rows(&mut backward, &[above])?;
        cut = true;
    }
    Ok((copy.copied, cut))
}

/// Rows of one table on their way into the copy.
struct Copy<'conn> {
    insert: rusqlite::Statement<'conn>,
    /// The table's columns (a query may add the rowid after them).
    columns: usize,
    rowids: bool,
    copied: u64,
    /// The highest rowid read.
    last: Option<i64>,
}

impl Copy<'_> {
    /// Copies the rows `stmt` reads until its end or damage: whether damage stopped it.
    fn rows(&mut self, stmt: &mut rusqlite::Statement, params: &[i64]) -> anyhow::Result<bool> {
        let mut rows = stmt.query(params_from_iter(params))?;
        loop {
            let row = match rows.next() {
                Ok(Some(row)) => row,
                Ok(None) => return Ok(false),
                Err(_) => return Ok(true),
            };
            let values: Vec<Value> = (0..self.columns).map(|i| row.get(i)).collect::<rusqlite::Result<_>>()?;
            if self.rowids {
                self.last = self.last.max(Some(row.get::<_, i64>(self.columns)?));
            }
            // A row the copy refuses (a constraint the damage broke) is lost like a damaged one.
            if self.insert.execute(params_from_iter(values)).is_ok() {
                self.copied += 1;
            }
        }
    }
}

/// Drops the rows whose parent row (a foreign key's) is missing, and then those of their
/// children that this orphaned, until none is left: how many, per table.
fn drop_orphans(conn: &Connection) -> anyhow::Result<Vec<(String, u64)>> {
    let mut dropped: Vec<(String, u64)> = Vec::new();
    // Each round removes one more generation; a schema is not this deep.
    for _ in 0..32 {
        let mut violations: Vec<(String, i64)> =
            super::rows(conn, "PRAGMA foreign_key_check", |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(3)?)))?;
        violations.sort();
        violations.dedup();
        if violations.is_empty() {
            break;
        }
        let mut progress = 0;
        for (table, fk) in violations {
            let n = delete_orphans(conn, &table, fk)?;
            progress += n;
            match dropped.iter_mut().find(|(t, _)| *t == table) {
                Some((_, count)) => *count += n,
                None => dropped.push((table, n)),
            }
        }
        if progress == 0 {
            break;
        }
    }
    dropped.retain(|(_, n)| *n > 0);
    Ok(dropped)
}

/// Deletes `table`'s rows whose foreign key `fk` (its id in `PRAGMA foreign_key_list`) names
/// no row of the parent table, as `PRAGMA foreign_key_check` judges them: a key with a NULL
/// column names nothing and is kept.
fn delete_orphans(conn: &Connection, table: &str, fk: i64) -> anyhow::Result<u64> {
    let columns: Vec<(String, String, Option<String>)> =
        super::rows(conn, &format!("PRAGMA foreign_key_list({})", ident(table)), |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, Option<String>>(4)?))
        })?
        .into_iter()
        .filter(|(id, ..)| *id == fk)
        .map(|(_, parent, from, to)| (parent, from, to))
        .collect();
    let Some(parent) = columns.first().map(|(parent, ..)| parent.clone()) else { return Ok(0) };
    // A key that names no parent column refers to the parent's primary key.
    let primary: Vec<String> = {
        let mut pk = super::rows(conn, &format!("PRAGMA table_info({})", ident(&parent)), |r| {
            Ok((r.get::<_, i64>(5)?, r.get::<_, String>(1)?))
        })?;
        pk.retain(|(position, _)| *position > 0);
        pk.sort();
        pk.into_iter().map(|(_, column)| column).collect()
    };
    let mut not_null = Vec::new();
    let mut matches = Vec::new();
    for (i, (_, from, to)) in columns.iter().enumerate() {
        let Some(to) = to.clone().or_else(|| primary.get(i).cloned()) else { return Ok(0) };
        not_null.push(format!("{}.{} IS NOT NULL", ident(table), ident(from)));
        matches.push(format!("p.{} = {}.{}", ident(&to), ident(table), ident(from)));
    }
    // The parent is aliased (it may be the table itself); the child is named by its name.
    let sql = format!(
        "DELETE FROM {table} WHERE {} AND NOT EXISTS (SELECT 1 FROM {parent} AS p WHERE {})",
        not_null.join(" AND "),
        matches.join(" AND "),
        table = ident(table),
        parent = ident(&parent),
    );
    Ok(conn.execute(&sql, [])? as u64)
}
