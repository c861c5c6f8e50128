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
    let blobs = || calls.iter().flat_map(|call| &call.blobs);
    let large = blobs().map(|blob| blob.content.bytes.len()).sum::<usize>() >= HASH_BESIDE_BYTES;
    let written = std::thread::scope(|scope| {
        // The entries' SHA-256 (computed once, kept with the observation) on a second thread
        // while their content is written: for a large observation both take about as long.
        if large {
            scope.spawn(|| blobs().for_each(|blob| _ = blob.content.sha256()));
        }
        contents.write(blobs().map(|blob| (blob.id.as_str(), &blob.content.bytes[..])))
    })?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
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
        apply(&tx, &call.plugin, session, &call.writes)?;
        for blob in &call.blobs {
            blobs::insert_entry(&tx, session, &blob.entry(&call.plugin))?;
        }
        // A call writes to the index only when its session has a project (the import refuses
        // otherwise); a project is never changed, so it is the one the call saw.
        if let (Some(project), false) = (&project, call.index.is_empty()) {
            index::apply(&tx, project, &call.plugin, &call.index)?;
        }
    }
    tx.execute("UPDATE sessions SET version = version + 1, updated_at = ?2 WHERE id = ?1", params![session, now_ms()])?;
    tx.commit()?;
    written.keep();
    Ok(Commit::Done)
}
