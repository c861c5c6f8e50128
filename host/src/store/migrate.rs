//! `scratchpad migrate`: copies a store (an embedded SQLite file, usually) into another
//! (PostgreSQL, usually), then verifies the copy.
//!
//! Each session is copied whole in one transaction of the target, parents before children;
//! a session already in the target is left as it is (a migration never overwrites), so a run
//! that stopped half way is finished by running it again, and a run after the fleet started
//! using the target reports the sessions that changed there since. Every session is then read back from the target and its
//! checksum (its row, every key, metadata pair, checkpoint, live observation and its bytes)
//! compared with the source's; each observation's content is checked against its SHA-256.

use std::collections::{BTreeSet, HashSet};

use sha2::{Digest, Sha256};

use super::{Db, Location, SessionExport};
use crate::{Error, Result};

/// What a migration copied and verified.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct MigrationReport {
    /// Sessions in the source.
    pub sessions: u64,
    /// Sessions written by this run (the others were in the target already).
    pub copied: u64,
    /// Storage keys across the sessions.
    pub state_keys: u64,
    /// Metadata pairs across the sessions.
    pub metadata_keys: u64,
    /// Checkpoints across the sessions.
    pub checkpoints: u64,
    /// Live observations across the sessions.
    pub observations: u64,
    /// Their bytes.
    pub observation_bytes: u64,
    /// Sessions copied by an earlier run that have changed in the target since (the target's
    /// version is kept: a migration never overwrites).
    pub changed_in_target: u64,
    /// Plugin identities in the source.
    pub identities: u64,
    /// SHA-256 over every session's checksum, in session order: equal for source and target.
    pub checksum: String,
}

/// Copies the store at `from` into the one at `to` (created if needed) and verifies the copy;
/// safe to run again (see the module docs).
pub async fn migrate(from: &Location, to: &Location) -> Result<MigrationReport> {
    if from == to {
        return Err(Error::invalid("migration", "the source and the target are the same database"));
    }
    if let Some(path) = from.path().filter(|p| !p.exists()) {
        return Err(Error::invalid("migration source", format!("there is no database at {}", path.display())));
    }
    let source = Db::open(from).await?;
    let target = Db::open(to).await?;
    copy(&source, &target).await
}

/// Copies every session of `from` into `to` and verifies the copy (see the module docs).
pub(crate) async fn copy(from: &Db, to: &Db) -> Result<MigrationReport> {
    let mut report = MigrationReport::default();
    let identities = from.identities().await?;
    report.identities = identities.len() as u64;
    to.import_identities(identities).await?;
    let mut total = Sha256::new();
    for id in parents_first(from).await? {
        let source = from.export_session(&id).await?.ok_or_else(|| Error::SessionNotFound(id.clone()))?;
        let expected = checksums(&source);
        report.sessions += 1;
        report.state_keys += source.state.len() as u64;
        report.metadata_keys += source.metadata.len() as u64;
        report.checkpoints += source.checkpoints.len() as u64;
        report.observations += source.observations.len() as u64;
        report.observation_bytes += source.observations.iter().map(|(_, c)| c.len() as u64).sum::<u64>();
        let copied_now = to.import_session(source).await?;
        if copied_now {
            report.copied += 1;
        }
        let copied = to.export_session(&id).await?.ok_or_else(|| Error::SessionNotFound(id.clone()))?;
        for (entry, content) in &copied.observations {
            if hex::encode(Sha256::digest(content)) != entry.sha256 {
                return Err(mismatch(&id, &format!("observation {}'s content does not match its SHA-256", entry.id)));
            }
        }
        if let Some(((part, _), _)) = expected.iter().zip(checksums(&copied)).find(|(a, b)| a.1 != b.1) {
            if copied_now {
                return Err(mismatch(&id, &format!("its {part} differ from the source's")));
            }
            // Copied by an earlier run and used in the target since: the target's is kept.
            report.changed_in_target += 1;
        }
        for (_, sum) in &expected {
            total.update(sum);
        }
    }
    report.checksum = hex::encode(total.finalize());
    Ok(report)
}

fn mismatch(session: &str, what: &str) -> Error {
    Error::Other(anyhow::anyhow!("verifying session `{session}` in the target: {what}"))
}

/// The source's session ids, each after its parent.
async fn parents_first(db: &Db) -> Result<Vec<String>> {
    let mut pending: Vec<(String, Option<String>)> = db
        .sessions()
        .await?
        .into_iter()
        .map(|s| {
            let parent = s.origin.parent().map(str::to_owned);
            (s.id, parent)
        })
        .collect();
    let known: HashSet<String> = pending.iter().map(|(id, _)| id.clone()).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut order = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|(id, parent)| {
            let ready = parent.as_ref().is_none_or(|p| done.contains(p) || !known.contains(p));
            if ready {
                done.insert(id.clone());
                order.push(id.clone());
            }
            !ready
        });
        if pending.len() == before {
            return Err(Error::Other(anyhow::anyhow!("the source's sessions have a parent cycle")));
        }
    }
    Ok(order)
}

/// A session's checksums, one per part (its row, storage keys, metadata, checkpoints,
/// observations), each over every stored field, length-prefixed.
fn checksums(session: &SessionExport) -> [(&'static str, Vec<u8>); 5] {
    fn json<T: serde::Serialize>(value: &T) -> Vec<u8> {
        serde_json::to_vec(value).expect("stored records serialize")
    }
    fn digest<'a>(fields: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
        let mut hash = Sha256::new();
        for field in fields {
            hash.update((field.len() as u64).to_le_bytes());
            hash.update(field);
        }
        hash.finalize().to_vec()
    }
    let row = [json(&session.record), json(&(&session.parent, session.version, &session.guidance_json))];
    let state = session.state.iter().flat_map(|(p, k, v)| [p.as_bytes(), k.as_bytes(), v.as_slice()]);
    let entries: Vec<Vec<u8>> = session.observations.iter().map(|(entry, _)| json(entry)).collect();
    let observations =
        entries.iter().zip(&session.observations).flat_map(|(entry, (_, content))| [entry.as_slice(), content]);
    [
        ("session row", digest(row.iter().map(Vec::as_slice))),
        ("storage keys", digest(state)),
        ("metadata", digest([json(&session.metadata).as_slice()])),
        ("checkpoints", digest([json(&session.checkpoints).as_slice()])),
        ("observations", digest(observations)),
    ]
}
