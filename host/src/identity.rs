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
//!   both identities, unless the operator marks it as a new version of the same plugin by
//!   naming its digest (`upgrade = "sha256:…"` in its `[[plugin]]` table,
//!   [`PluginSpec::upgrade`]): then it takes over the name's data and its identity is recorded
//!   instead. An upgrade naming another digest is refused, so a component that changed again
//!   (a moved tag, a rebuilt file) never takes the data over unseen.

use crate::config::{PluginSource, PluginSpec};
use crate::error::{Error, Result};
use crate::store::{Claim, Db};

/// The identity of the component `spec` loads, whose hex SHA-256 is `sha256` ([`sha256`]).
pub(crate) fn of(spec: &PluginSpec, sha256: &str) -> String {
    match &spec.source {
        PluginSource::Embedded(name) => format!("embedded:{name}"),
        PluginSource::File(_) | PluginSource::Bytes(_) | PluginSource::Oci(_) => format!("sha256:{sha256}"),
    }
}

/// The hex SHA-256 of `bytes`, the component `spec` loads. An embedded component's is the one
/// recorded when it was built (`scratchpad_components`; the test suite checks it against the
/// bytes), so a start hashes none of the embedded megabytes.
pub(crate) fn sha256(spec: &PluginSpec, bytes: &[u8]) -> String {
    match &spec.source {
        PluginSource::Embedded(name) => match scratchpad_components::get(name) {
            Some(component) if component.wasm == bytes => component.sha256.to_owned(),
            _ => crate::digest::sha256_hex(bytes),
        },
        PluginSource::File(_) | PluginSource::Bytes(_) | PluginSource::Oci(_) => crate::digest::sha256_hex(bytes),
    }
}

/// Refuses a component that is not embedded under an embedded component's name, unless the
/// operator says it replaces it.
pub(crate) fn check_reserved(spec: &PluginSpec) -> Result<()> {
    let embedded = matches!(spec.source, PluginSource::Embedded(_));
    if embedded || spec.upgrade.is_some() || !crate::embedded::EMBEDDED.contains(&spec.name.as_str()) {
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
    for (spec, identity) in &plugins {
        if let Some(named) = spec.upgrade.as_ref().filter(|named| *named != identity) {
            return Err(Error::Load {
                plugin: spec.name.clone(),
                message: format!(
                    "its upgrade names the component {named}, but this component is {identity}; name this one in \
                     `upgrade` if it is the version you reviewed"
                ),
            });
        }
    }
    let claims: Vec<(String, String, bool)> =
        plugins.iter().map(|(spec, identity)| (spec.name.clone(), identity.clone(), spec.upgrade.is_some())).collect();
    let outcomes = db.claim_identities(claims).await?;
    for ((spec, identity), outcome) in plugins.into_iter().zip(outcomes) {
        if let Claim::Owned { identity: owner, recorded_at_ms } = outcome {
            return Err(Error::Load {
                plugin: spec.name.clone(),
                message: format!(
                    "the data stored under `{name}` in this database belongs to another component ({owner}, \
                     recorded at unix ms {recorded_at_ms}); this one is {identity}. If it is a new version of the \
                     same plugin, load it once with `upgrade = \"{identity}\"` in its [[plugin]] table; otherwise \
                     give it another name",
                    name = spec.name
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_component_is_known_by_its_recorded_digest_which_is_its_bytes_sha256() {
        for component in scratchpad_components::ALL {
            let spec = PluginSpec::embedded(component.name);
            assert_eq!(component.sha256, crate::digest::sha256_hex(component.wasm), "{}", component.name);
            assert_eq!(sha256(&spec, component.wasm), component.sha256);
            assert_eq!(of(&spec, component.sha256), format!("embedded:{}", component.name));
        }
        // Other bytes under an embedded name are hashed, never given the recorded digest.
        let other = b"\0asm\x0d\0\x01\0";
        assert_eq!(sha256(&PluginSpec::embedded("scratchpad"), other), crate::digest::sha256_hex(other));
        let file = PluginSpec::file("plugin.wasm");
        assert_eq!(of(&file, &sha256(&file, other)), format!("sha256:{}", crate::digest::sha256_hex(other)));
    }
}
