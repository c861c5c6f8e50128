//! Looking inside a component file without loading it into a host: what it imports and
//! exports, whether it implements the contract, and which tools it declares.

use std::sync::Arc;

use serde::Serialize;
use wasmtime::component::Component;

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

/// Inspects the component `bytes`, configured with `config` (a JSON object).
pub async fn inspect(name: &str, bytes: Arc<[u8]>, config: serde_json::Value) -> anyhow::Result<Inspection> {
    let engine = crate::engine::build(64 << 20, 2, crate::InstanceAllocation::OnDemand)?;
    let (imports, exports) = match Component::new(&engine, &bytes) {
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
        crate::plugin::load(&sandbox, &spec, None, 0).await.map(|loaded| loaded.tools).map_err(|e| e.to_string());
    Ok(Inspection { imports, exports, plugin })
}
