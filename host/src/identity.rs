//! What identifies a plugin, and which component owns the data stored under a plugin name.
//!
//! A plugin's storage, metadata and offloaded observations are scoped by its *name*, and a
//! name is only a label an operator (or a file name, with `--plugin`) gives. So a name is
//! bound to the component that first stored under it in a database:
//!
//! - An embedded component is identified as `embedded:<name>`, and the embedded names
//!   (`scratchpad`, `observations`, `context-guard`) are reserved to them: a file that calls
//!   itself `scratchpad.wasm` does not get the built-in scratchpad's notes.
//! - A component from a file or from bytes is identified by the SHA-256 of its bytes.
//! - The first component loaded under a name records its identity in the database
//!   (`plugin_identities`). A different component under that name is refused at load, naming
//!   both identities, unless the operator marks it as a new version of the same plugin
//!   (`upgrade = true` in its `[[plugin]]` table, [`PluginSpec::upgrade`]): then it takes over
//!   the name's data and its identity is recorded instead.

use sha2::{Digest, Sha256};

use crate::config::{PluginSource, PluginSpec};
use crate::error::{Error, Result};
use crate::store::{Claim, Db};

/// The identity of the component `spec` loads, whose bytes are `bytes`.
pub(crate) fn of(spec: &PluginSpec, bytes: &[u8]) -> String {
    match &spec.source {
        PluginSource::Embedded(name) => format!("embedded:{name}"),
        PluginSource::File(_) | PluginSource::Bytes(_) => format!("sha256:{}", hex::encode(Sha256::digest(bytes))),
    }
}

/// Refuses a component that is not embedded under an embedded component's name, unless the
/// operator says it replaces it.
pub(crate) fn check_reserved(spec: &PluginSpec) -> Result<()> {
    let embedded = matches!(spec.source, PluginSource::Embedded(_));
    if embedded || spec.upgrade || !crate::embedded::EMBEDDED.contains(&spec.name.as_str()) {
        return Ok(());
    }
    Err(Error::Load {
        plugin: spec.name.clone(),
        message: format!(
            "the name `{}` is reserved for the embedded component of that name, whose data it would read; load \
             this file under another name (`[[plugin]] name = \"my-{}\"` with its `path`)",
            spec.name, spec.name
        ),
    })
}

/// Binds each plugin's name to its identity in the database, or refuses the first plugin
/// whose name another component owns. `plugins` holds `(spec, identity)` pairs.
pub(crate) async fn claim(db: &Db, plugins: Vec<(&PluginSpec, String)>) -> Result<()> {
    let claims: Vec<(String, String, bool)> =
        plugins.iter().map(|(spec, identity)| (spec.name.clone(), identity.clone(), spec.upgrade)).collect();
    let outcomes = db.claim_identities(claims).await?;
    for ((spec, identity), outcome) in plugins.into_iter().zip(outcomes) {
        if let Claim::Owned { identity: owner, recorded_at_ms } = outcome {
            return Err(Error::Load {
                plugin: spec.name.clone(),
                message: format!(
                    "the data stored under `{name}` in this database belongs to another component ({owner}, \
                     recorded at unix ms {recorded_at_ms}); this one is {identity}. If it is a new version of the \
                     same plugin, load it once with `upgrade = true` in its [[plugin]] table; otherwise give it \
                     another name",
                    name = spec.name
                ),
            });
        }
    }
    Ok(())
}
