//! Looking inside a component without loading it into a host: what it imports and exports,
//! whether it implements the contract, which powers it asks for, whether its signature would
//! be accepted, and which tools it declares.

use std::sync::Arc;

use serde::Serialize;

use crate::capabilities::tokenizer::Tokenizer;
use crate::config::{Encoding, HostConfig, PluginSource, PluginSpec};
use crate::grants::Grants;
use crate::sandbox::Sandbox;
use crate::sources::Sources;
use crate::types::ToolSpec;

/// What `scratchpad inspect` reports about a component.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Inspection {
    /// What identifies the component: `sha256:` and the hex digest of its bytes.
    pub identity: String,
    /// Interfaces and functions the component imports.
    pub imports: Vec<String>,
    /// Interfaces and functions the component exports.
    pub exports: Vec<String>,
    /// The powers it asks for; `None` for a 0.1.0 component, which cannot ask.
    pub requested: Option<Vec<&'static str>>,
    /// Its signature as the configuration's policy sees it: `Ok(Some(publisher))` when
    /// verified, `Ok(None)` when the policy loads it unsigned, `Err` saying why it would be
    /// refused.
    pub signature: Result<Option<String>, String>,
    /// `Ok` with its tools when it loads as a plugin (given every power it asks for);
    /// otherwise why not.
    pub plugin: Result<Vec<ToolSpec>, String>,
}

/// Inspects the component `spec` names (a file, an OCI reference, bytes), configured as
/// `spec` says, under `config`'s publishers, lock file and compiled-component cache (the host's
/// cache: a component inspected after a host loaded it, or before, is compiled only once).
/// Nothing is refused for its signature or its powers: the report says what a host would do.
pub async fn inspect(spec: PluginSpec, config: &HostConfig) -> anyhow::Result<Inspection> {
    let sources = Sources::new(config);
    let unchecked = sources.get(&spec).await.map_err(|e| anyhow::anyhow!("{}: {e}", spec.name))?;
    let signature = sources.check(&spec, &unchecked);
    let bytes = unchecked.bytes;
    let dirs = crate::compiled::Dirs::of(config);
    let engine = crate::engine::build(64 << 20, 2, crate::InstanceAllocation::OnDemand)?;
    let sha256 = crate::digest::sha256_hex(&bytes);
    let (imports, exports) = match crate::compiled::load_component(&engine, &bytes, &sha256, &dirs) {
        Ok(component) => {
            let ty = component.component_type();
            (
                ty.imports(&engine).map(|(name, _)| name.to_owned()).collect(),
                ty.exports(&engine).map(|(name, _)| name.to_owned()).collect(),
            )
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    let identity = format!("sha256:{sha256}");
    let sandbox = Sandbox::new(engine, Arc::new(Tokenizer::new(Encoding::default())), 2)?;
    let spec = PluginSpec { source: PluginSource::Bytes(bytes), ..spec }.granting(Grants::ALL).unsigned();
    let loaded = crate::plugin::load(&sandbox, &sources, &spec, &dirs, 0).await;
    let requested = loaded.as_ref().ok().and_then(|loaded| loaded.requested.map(Grants::names));
    let plugin = loaded.map(|loaded| loaded.tools).map_err(|e| e.to_string());
    Ok(Inspection { identity, imports, exports, requested, signature, plugin })
}
