//! An operation's two trips on SQLite (see `crate::transaction`): the begin enters the turn
//! and reads the session's head and every involved scope in one read transaction; the commit
//! checks the session's version and applies every call's writes in one write transaction.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::contents::Contents;
use super::scope::{apply, read_scope};
use super::{blobs, index, sessions};
use crate::store::{Commit, PluginWrites, Read, ScopeToRead, now_ms};
use crate::{Error, Result};

/// Enters `turn_id` and reads the session's head and each named plugin's snapshot in one
/// read transaction (so all are of one version). A new turn id is counted first, in a write
/// transaction of its own, which also collects expired observations (the large-observation store: at the start
/// of every turn); the usual call, inside the current turn, writes nothing, and neither does
/// a read with no `turn_id`.
pub(crate) fn begin(
    conn: &mut Connection,
    contents: &Contents,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
) -> Result<Read> {
    let mut entered = false;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let head = sessions::head(&tx, session)?.ok_or_else(|| Error::SessionNotFound(session.into()))?;
        // Entered once: another process may switch the session to its own turn right after,
        // and re-entering would let two processes take turns re-entering without end.
        if let Some(turn_id) = turn_id
            && head.turn_id.as_deref() != Some(turn_id)
            && !entered
        {
            entered = true;
            drop(tx);
            let (_, new) = sessions::start_turn(conn, session, turn_id, tokens)?;
            if new {
                blobs::gc(conn, contents, None, now_ms() as u64)?;
            }
            continue;
        }
        let mut snapshots = Vec::with_capacity(plugins.len());
        for scope in plugins {
            snapshots.push((scope.index, read_scope(&tx, &scope.plugin, session)?));
        }
        tx.commit()?;
        return Ok(Read { head, snapshots });
    }
}

/// Content size from which the commit hashes new observations beside writing them: below it,
/// a thread costs more than it saves.
const HASH_BESIDE_BYTES: usize = 1 << 20;

/// Commits the effects of one operation's calls if the session is still at
/// `expected_version`, in one transaction that bumps the version once. New observations'
/// content is written and synced first, before the write lock is taken (so a large one does
/// not hold up other sessions' commits), and removed again unless the commit lands.
pub(crate) fn commit(
    conn: &mut Connection,
    contents: &Contents,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    let written = write_contents(contents, calls)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if apply_calls(&tx, session, expected_version, calls)? == Commit::Conflict {
        return Ok(Commit::Conflict);
    }
    tx.commit()?;
    written.keep();
    Ok(Commit::Done)
}

/// Writes the new observations' content of `calls` (hashing large ones beside), before any
/// lock is taken when the caller holds none.
fn write_contents<'c>(contents: &'c Contents, calls: &[PluginWrites]) -> Result<super::contents::Written<'c>> {
    let blobs = || calls.iter().flat_map(|call| &call.blobs);
    let large = blobs().map(|blob| blob.content.bytes.len()).sum::<usize>() >= HASH_BESIDE_BYTES;
    std::thread::scope(|scope| {
        // The entries' SHA-256 (computed once, kept with the observation) on a second thread
        // while their content is written: for a large observation both take about as long.
        if large {
            scope.spawn(|| blobs().for_each(|blob| _ = blob.content.sha256()));
        }
        contents.write(blobs().map(|blob| (blob.id.as_str(), &blob.content.bytes[..])))
    })
}

/// Inside the caller's write transaction: if the session is still at `expected_version`,
/// applies every call's writes and bumps the version once.
fn apply_calls(tx: &Connection, session: &str, expected_version: i64, calls: &[PluginWrites]) -> Result<Commit> {
    let row: Option<(i64, Option<String>)> = tx
        .prepare_cached("SELECT version, project FROM sessions WHERE id = ?1")?
        .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let project = match row {
        None => return Err(Error::SessionNotFound(session.to_owned())),
        Some((v, _)) if v != expected_version => return Ok(Commit::Conflict),
        Some((_, project)) => project,
    };
    for call in calls {
        apply(tx, &call.plugin, session, &call.writes)?;
        for blob in &call.blobs {
            blobs::insert_entry(tx, session, &blob.entry(&call.plugin))?;
        }
        // A call writes to the index only when its session has a project (the import refuses
        // otherwise); a project is never changed, so it is the one the call saw.
        if let (Some(project), false) = (&project, call.index.is_empty()) {
            index::apply(tx, project, &call.plugin, &call.index)?;
        }
    }
    tx.execute("UPDATE sessions SET version = version + 1, updated_at = ?2 WHERE id = ?1", params![session, now_ms()])?;
    Ok(Commit::Done)
}

/// [`begin`] for an operation's re-run: takes the database's write lock first (`BEGIN
/// IMMEDIATE`, waiting for it as any commit does) and reads under it; the transaction stays
/// open on `conn` for [`commit_leased`]. Expired observations are not collected here.
pub(crate) fn begin_leased(
    conn: &Connection,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
) -> Result<Read> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let read = (|| {
        if let Some(turn_id) = turn_id {
            sessions::enter_turn(conn, session, turn_id, tokens)?;
        }
        let head = sessions::head(conn, session)?.ok_or_else(|| Error::SessionNotFound(session.into()))?;
        let mut snapshots = Vec::with_capacity(plugins.len());
        for scope in plugins {
            snapshots.push((scope.index, read_scope(conn, &scope.plugin, session)?));
        }
        Ok(Read { head, snapshots })
    })();
    if read.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    read
}

/// [`commit`] inside the transaction [`begin_leased`] opened on `conn`, which then ends:
/// committed when the writes were (with no calls, only the turn the begin entered), rolled
/// back otherwise.
pub(crate) fn commit_leased(
    conn: &Connection,
    contents: &Contents,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    let outcome = (|| {
        if calls.is_empty() {
            return Ok((Commit::Done, None));
        }
        let written = write_contents(contents, calls)?;
        let outcome = apply_calls(conn, session, expected_version, calls)?;
        Ok((outcome, Some(written)))
    })();
    match outcome {
        Ok((Commit::Done, written)) => {
            conn.execute_batch("COMMIT")?;
            if let Some(written) = written {
                written.keep();
            }
            Ok(Commit::Done)
        }
        other => {
            let _ = conn.execute_batch("ROLLBACK");
            other.map(|(outcome, _)| outcome)
        }
    }
}
