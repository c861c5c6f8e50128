//! The `plugin_identities` table: which component owns each plugin name's stored data.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::Result;
use crate::db::now_ms;

/// What the database says about a name a plugin is loaded under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The name was free, or already this component's: it is recorded as this component's.
    Granted,
    /// Another component owns the name's data.
    Owned {
        /// The recorded identity.
        identity: String,
        /// When it was recorded, Unix ms.
        recorded_at_ms: i64,
    },
}

/// For each `(name, identity, upgrade)`, records `identity` as the owner of `name` when the
/// name is free (or `upgrade` says the component replaces the recorded one), in one
/// transaction, so host processes starting together agree on the first owner. Returns one
/// [`Claim`] per entry.
pub(crate) fn claim(conn: &mut Connection, claims: &[(String, String, bool)]) -> Result<Vec<Claim>> {
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
