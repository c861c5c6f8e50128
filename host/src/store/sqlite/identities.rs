//! The `plugin_identities` table: which component owns each plugin name's stored data.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::Result;
use crate::store::{Claim, now_ms};

/// For each `(name, identity, upgrade)`, records `identity` as the owner of `name` when the
/// name is free (or `upgrade` says the component replaces the recorded one), in one
/// transaction, so host processes starting together agree on the first owner. Returns one
/// [`Claim`] per entry.
pub(crate) fn claim(conn: &mut Connection, claims: &[(String, String, bool)]) -> Result<Vec<Claim>> {
    // Names already recorded for these identities (every start but the first) are only read:
    // a host starts without waiting for another process's write lock.
    let mut recorded = conn.prepare_cached("SELECT identity FROM plugin_identities WHERE name = ?1")?;
    let mut held = true;
    for (name, identity, _) in claims {
        let owner: Option<String> = recorded.query_row([name], |r| r.get(0)).optional()?;
        held &= owner.as_ref() == Some(identity);
    }
    drop(recorded);
    if held {
        return Ok(vec![Claim::Granted; claims.len()]);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut outcomes = Vec::with_capacity(claims.len());
    for (name, identity, upgrade) in claims {
        let recorded: Option<(String, i64)> = tx
            .query_row("SELECT identity, recorded_at FROM plugin_identities WHERE name = ?1", [name], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let outcome = match recorded {
            Some((owner, _)) if owner == *identity => Claim::Granted,
            Some((owner, recorded_at_ms)) if !upgrade => Claim::Owned { identity: owner, recorded_at_ms },
            _ => {
                tx.execute(
                    "INSERT INTO plugin_identities (name, identity, recorded_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (name) DO UPDATE SET identity = excluded.identity, recorded_at = excluded.recorded_at",
                    params![name, identity, now_ms()],
                )?;
                Claim::Granted
            }
        };
        outcomes.push(outcome);
    }
    // Nothing is kept when a claim is refused: the host does not open.
    if outcomes.iter().all(|c| *c == Claim::Granted) {
        tx.commit()?;
    }
    Ok(outcomes)
}

/// Every recorded identity, as (name, identity, recorded at), by name.
pub(crate) fn list(conn: &Connection) -> Result<Vec<(String, String, i64)>> {
    let mut stmt = conn.prepare("SELECT name, identity, recorded_at FROM plugin_identities ORDER BY name")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Records identities copied from another store; a name already recorded keeps its owner.
pub(crate) fn import(conn: &mut Connection, identities: &[(String, String, i64)]) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (name, identity, recorded_at) in identities {
        tx.execute(
            "INSERT INTO plugin_identities (name, identity, recorded_at) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING",
            params![name, identity, recorded_at],
        )?;
    }
    tx.commit()?;
    Ok(())
}
