//! An operation's two trips on PostgreSQL (see `crate::transaction`): one statement enters the
//! turn and reads the session's head and every involved scope, one statement commits (the
//! version-checked write of `scope.rs`).
//!
//! A single statement sees one snapshot, so the begin needs no transaction. The commit is one
//! statement too: a data-modifying CTE bumps the session's version only if it still is the
//! version read at the begin (under READ COMMITTED, an UPDATE that waited for a concurrent
//! commit re-checks its condition on the new row, so exactly one of two racing commits wins)
//! and every write is applied only when that row was updated. An operation that stored blob
//! entries wraps the same statement in a transaction with the entries' rows and chunks.

use std::collections::BTreeMap;

use deadpool_postgres::{GenericClient, Object};

use super::scope::apply;
use super::{blobs, index, sessions};
use crate::store::{Commit, PluginWrites, Read, ScopeToRead, ScopeWrites, Snapshot, now_ms};
use crate::{Error, Result};

/// An operation's begin, one statement: enters turn $3 when the session is in another (the
/// next index, the runtime's token figure $4; an UPDATE that waited for another process's
/// re-checks the turn on the new row) and returns the head row (`space` -1, with whether it
/// entered the turn) and every storage (0) and metadata (1) key of the plugins $2. The head's version comes from the statement's snapshot, like the scopes, never from the
/// UPDATE: an UPDATE that waited for another process's commit sees that commit's row, and a
/// version from there paired with scopes from before it would let the commit pass its version
/// check over writes it never read (a lost update; the fleet test caught it). Only the turn
/// comes from the UPDATE.
const BEGIN: &str = "
    WITH entered AS (
        UPDATE sessions SET turn_id = $3, turn_index = turn_index + 1, total_tokens = COALESCE($4, total_tokens)
         WHERE id = $1 AND $3::text IS NOT NULL AND turn_id IS DISTINCT FROM $3
        RETURNING turn_id, turn_index
    )
    SELECT -1 AS space, NULL::text AS plugin, NULL::text AS key, NULL::bytea AS value,
           COALESCE((SELECT turn_id FROM entered), s.turn_id), COALESCE((SELECT turn_index FROM entered), s.turn_index),
           s.version, s.guidance, EXISTS (SELECT 1 FROM entered), s.project
      FROM sessions s WHERE s.id = $1
    UNION ALL
    SELECT 0, plugin, key, value, NULL, NULL, NULL, NULL, NULL, NULL FROM plugin_state
     WHERE session = $1 AND plugin = ANY($2)
    UNION ALL
    SELECT 1, plugin, key, convert_to(value, 'UTF8'), NULL, NULL, NULL, NULL, NULL, NULL FROM plugin_metadata
     WHERE session = $1 AND plugin = ANY($2)";

/// Enters `turn_id` (none: enters nothing) and reads the head and the scopes of `plugins` at
/// one version: one trip inside the current turn.
pub(super) async fn begin(
    client: &mut Object,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
) -> Result<Read> {
    read(client, session, turn_id, tokens, plugins, true).await
}

/// [`begin`] for an operation's re-run: in a transaction left open on `client` for
/// [`commit_leased`], first locks the session's row (`FOR NO KEY UPDATE`: every commit to
/// the session, a version-checked UPDATE of that row, now waits for this transaction), then
/// reads.
/// Expired observations are not collected here.
pub(super) async fn begin_leased(
    client: &Object,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
) -> Result<Read> {
    client.batch_execute("BEGIN").await?;
    let read = async {
        // `NO KEY`: the commits' UPDATE of the row waits, a row referring to the session (the
        // event log's) does not.
        let lock = client.prepare_cached("SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE").await?;
        if client.query_opt(&lock, &[&session]).await?.is_none() {
            return Err(Error::SessionNotFound(session.to_owned()));
        }
        read(client, session, turn_id, tokens, plugins, false).await
    }
    .await;
    if read.is_err() {
        let _ = client.batch_execute("ROLLBACK").await;
    }
    read
}

/// The begin's statement (and, when `collect` and the turn is new, the collection of expired
/// observations).
async fn read(
    client: &Object,
    session: &str,
    turn_id: Option<&str>,
    tokens: Option<u64>,
    plugins: &[ScopeToRead],
    collect: bool,
) -> Result<Read> {
    let names: Vec<&str> = plugins.iter().map(|p| p.plugin.as_str()).collect();
    let tokens = tokens.map(|t| t.min(i64::MAX as u64) as i64);
    let begin = client.prepare_cached(BEGIN).await?;
    let rows = client.query(&begin, &[&session, &names, &turn_id, &tokens]).await?;
    let (mut head, mut entered) = (None, false);
    let mut scopes: BTreeMap<&str, Snapshot> = BTreeMap::new();
    for row in &rows {
        let space: i32 = row.get(0);
        if space < 0 {
            head = Some(sessions::read_head(row, 4, 9));
            entered = row.get(8);
            continue;
        }
        let plugin: &str = row.get(1);
        let Some(&name) = names.iter().find(|n| **n == plugin) else { continue };
        scopes.entry(name).or_default().space_mut(space.into()).insert(row.get(2), row.get(3));
    }
    let head = head.ok_or_else(|| Error::SessionNotFound(session.to_owned()))?;
    if entered && collect {
        // The large-observation store: expired observations go at the start of every turn (a second trip, once a
        // turn; kept out of the begin statement, which would otherwise lock the observations
        // table in every operation).
        blobs::collect_at_turn_start(client, now_ms() as u64).await?;
    }
    let snapshots = plugins.iter().map(|p| (p.index, scopes.remove(p.plugin.as_str()).unwrap_or_default())).collect();
    Ok(Read { head, snapshots })
}

/// Commits `calls` if the session is still at `expected_version`: one trip without blob
/// entries, a transaction with them.
pub(super) async fn commit(
    client: &mut Object,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    if calls.iter().all(|call| call.blobs.is_empty() && call.index.is_empty()) {
        let writes: Vec<(&str, &ScopeWrites)> = calls.iter().map(|call| (call.plugin.as_str(), &call.writes)).collect();
        return apply(&*client, session, expected_version, true, &writes).await;
    }
    let tx = client.transaction().await?;
    if write(&tx, tx.client(), session, expected_version, calls).await? == Commit::Conflict {
        return Ok(Commit::Conflict);
    }
    tx.commit().await?;
    Ok(Commit::Done)
}

/// [`commit`] inside the transaction [`begin_leased`] opened on `client`, which then ends:
/// committed when the writes were (with no calls, only the turn the begin entered), rolled
/// back otherwise.
pub(super) async fn commit_leased(
    client: &Object,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    let outcome = match calls.is_empty() {
        true => Ok(Commit::Done),
        false => write(client, client, session, expected_version, calls).await,
    };
    match outcome {
        Ok(Commit::Done) => {
            client.batch_execute("COMMIT").await?;
            Ok(Commit::Done)
        }
        other => {
            let _ = client.batch_execute("ROLLBACK").await;
            other
        }
    }
}

/// Inside the caller's transaction: the version-checked write of every call's scope writes,
/// then its blob entries and index writes.
async fn write(
    client: &impl GenericClient,
    copying: &tokio_postgres::Client,
    session: &str,
    expected_version: i64,
    calls: &[PluginWrites],
) -> Result<Commit> {
    let writes: Vec<(&str, &ScopeWrites)> = calls.iter().map(|call| (call.plugin.as_str(), &call.writes)).collect();
    if apply(client, session, expected_version, true, &writes).await? == Commit::Conflict {
        return Ok(Commit::Conflict);
    }
    // The version check above locked the session's row: its project is the one the calls saw.
    let project: Option<String> = if calls.iter().any(|call| !call.index.is_empty()) {
        client.query_one("SELECT project FROM sessions WHERE id = $1", &[&session]).await?.get(0)
    } else {
        None
    };
    for call in calls {
        for blob in &call.blobs {
            blobs::insert(client, copying, session, &blob.entry(&call.plugin), &blob.content.bytes).await?;
        }
        if let (Some(project), false) = (&project, call.index.is_empty()) {
            index::apply(client, project, &call.plugin, &call.index).await?;
        }
    }
    Ok(Commit::Done)
}
