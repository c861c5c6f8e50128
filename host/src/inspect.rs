//! Looking inside a component file without loading it into a host: what it imports and
//! exports, whether it implements the contract, and which tools it declares.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::capabilities::tokens::Tokenizer;
use crate::config::{Encoding, PluginSource, PluginSpec};
use crate::sandbox::Sandbox;
use crate::types::ToolSpec;

/// What `scratchpad inspect` reports about a component.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// Interfaces and functions the component imports.
    pub imports: Vec<String>,
    /// Interfaces and functions the component exports.
    pub exports: Vec<String>,
    /// `Ok` when it loads as a plugin; otherwise why not.
    pub plugin: Result<Vec<ToolSpec>, String>,
}

/// Inspects the component `bytes`, configured with `config` (a JSON object). The component is
/// compiled once, through the compiled-component cache at `cache_dir` when given (the host's
/// cache: a component inspected after a host loaded it, or before, is compiled only once).
pub async fn inspect(
    name: &str,
    bytes: Arc<[u8]>,
    config: serde_json::Value,
    cache_dir: Option<&Path>,
) -> anyhow::Result<Inspection> {
    let engine = crate::engine::build(64 << 20, 2, crate::InstanceAllocation::OnDemand)?;
    let (imports, exports) = match crate::cache::load_component(&engine, &bytes, cache_dir) {
        Ok(component) => {
            let ty = component.component_type();
            (
                ty.imports(&engine).map(|(name, _)| name.to_owned()).collect(),
                ty.exports(&engine).map(|(name, _)| name.to_owned()).collect(),
            )
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    let sandbox = Sandbox::new(engine, Arc::new(Tokenizer::new(Encoding::default())), 2)?;
    let spec = PluginSpec { source: PluginSource::Bytes(bytes), ..PluginSpec::embedded(name).with_config(config) };
    let plugin =
        crate::plugin::load(&sandbox, &spec, cache_dir, 0).await.map(|loaded| loaded.tools).map_err(|e| e.to_string());
    Ok(Inspection { imports, exports, plugin })
}
