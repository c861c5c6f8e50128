//! A plugin's scope in a session on PostgreSQL: its storage and metadata key spaces, written by
//! the one version-checked statement every commit (and a session's creation) runs, and dumped
//! for an export.

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;

use crate::store::{Commit, ScopeWrites, Writes, now_ms};
use crate::{Error, Result};

/// The version-checked commit: $1 session, $2 expected version, $3 the version's increment,
/// $4 now; then (plugin, key, value) arrays of storage sets, (plugin, key) of storage deletes,
/// and the same two for metadata. Returns whether the version matched and whether the session
/// exists.
const COMMIT: &str = "
    WITH head AS (
        UPDATE sessions SET version = version + $3, updated_at = $4 WHERE id = $1 AND version = $2 RETURNING id
    ), set_state AS (
        INSERT INTO plugin_state (session, plugin, key, value)
        SELECT $1, w.plugin, w.key, w.value FROM unnest($5::text[], $6::text[], $7::bytea[]) AS w(plugin, key, value)
         WHERE EXISTS (SELECT 1 FROM head)
        ON CONFLICT (session, plugin, key) DO UPDATE SET value = excluded.value
        RETURNING 1
    ), delete_state AS (
        DELETE FROM plugin_state s USING unnest($8::text[], $9::text[]) AS d(plugin, key)
         WHERE EXISTS (SELECT 1 FROM head) AND s.session = $1 AND s.plugin = d.plugin AND s.key = d.key
        RETURNING 1
    ), set_metadata AS (
        INSERT INTO plugin_metadata (session, plugin, key, value)
        SELECT $1, w.plugin, w.key, w.value FROM unnest($10::text[], $11::text[], $12::text[]) AS w(plugin, key, value)
         WHERE EXISTS (SELECT 1 FROM head)
        ON CONFLICT (session, plugin, key) DO UPDATE SET value = excluded.value
        RETURNING 1
    ), delete_metadata AS (
        DELETE FROM plugin_metadata s USING unnest($13::text[], $14::text[]) AS d(plugin, key)
         WHERE EXISTS (SELECT 1 FROM head) AND s.session = $1 AND s.plugin = d.plugin AND s.key = d.key
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM head),
           EXISTS (SELECT 1 FROM sessions WHERE id = $1),
           (SELECT count(*) FROM set_state) + (SELECT count(*) FROM delete_state)
         + (SELECT count(*) FROM set_metadata) + (SELECT count(*) FROM delete_metadata)";

/// Runs the commit statement: applies `calls`' writes and adds 1 to the session's version
/// (when `bump`), only if the version is `expected_version`.
pub(super) async fn apply(
    client: &impl GenericClient,
    session: &str,
    expected_version: i64,
    bump: bool,
    calls: &[(&str, &ScopeWrites)],
) -> Result<Commit> {
    let state = Arrays::of(calls.iter().map(|(plugin, writes)| (*plugin, &writes.state)));
    let metadata = Arrays::of(calls.iter().map(|(plugin, writes)| (*plugin, &writes.metadata)));
    // Metadata values were checked to be JSON, so they are UTF-8.
    let metadata_values: Vec<String> =
        metadata.set_values.iter().map(|v| String::from_utf8_lossy(v).into_owned()).collect();
    let commit = client.prepare_cached(COMMIT).await?;
    let row = client
        .query_one(
            &commit,
            &[
                &session,
                &expected_version,
                &i64::from(bump),
                &now_ms(),
                &state.set_plugins,
                &state.set_keys,
                &state.set_values,
                &state.delete_plugins,
                &state.delete_keys,
                &metadata.set_plugins,
                &metadata.set_keys,
                &metadata_values,
                &metadata.delete_plugins,
                &metadata.delete_keys,
            ],
        )
        .await?;
    match (row.get::<_, bool>(0), row.get::<_, bool>(1)) {
        (true, _) => Ok(Commit::Done),
        (false, true) => Ok(Commit::Conflict),
        (false, false) => Err(Error::SessionNotFound(session.to_owned())),
    }
}

/// One key space's writes as the column arrays the commit statement unnests. A key written by
/// two calls of one operation keeps the later write (one row per key, as the statement needs).
#[derive(Default)]
struct Arrays<'a> {
    set_plugins: Vec<&'a str>,
    set_keys: Vec<&'a str>,
    set_values: Vec<&'a [u8]>,
    delete_plugins: Vec<&'a str>,
    delete_keys: Vec<&'a str>,
}

impl<'a> Arrays<'a> {
    fn of(calls: impl Iterator<Item = (&'a str, &'a Writes)>) -> Self {
        let mut last: BTreeMap<(&str, &str), Option<&[u8]>> = BTreeMap::new();
        for (plugin, writes) in calls {
            for (key, value) in writes {
                last.insert((plugin, key.as_str()), value.as_deref());
            }
        }
        let mut arrays = Arrays::default();
        for ((plugin, key), value) in last {
            match value {
                Some(value) => {
                    arrays.set_plugins.push(plugin);
                    arrays.set_keys.push(key);
                    arrays.set_values.push(value);
                }
                None => {
                    arrays.delete_plugins.push(plugin);
                    arrays.delete_keys.push(key);
                }
            }
        }
        arrays
    }
}

/// Every stored pair of a session, as (plugin, key, value), ordered.
pub(super) async fn dump(client: &impl GenericClient, session: &str) -> Result<Vec<(String, String, Vec<u8>)>> {
    let stmt = client
        .prepare_cached("SELECT plugin, key, value FROM plugin_state WHERE session = $1 ORDER BY plugin, key")
        .await?;
    Ok(client.query(&stmt, &[&session]).await?.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
}

/// Every metadata pair of a session, as (plugin, key, JSON text), ordered.
pub(super) async fn dump_metadata(client: &impl GenericClient, session: &str) -> Result<Vec<(String, String, String)>> {
    let stmt = client
        .prepare_cached("SELECT plugin, key, value FROM plugin_metadata WHERE session = $1 ORDER BY plugin, key")
        .await?;
    Ok(client.query(&stmt, &[&session]).await?.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
}
