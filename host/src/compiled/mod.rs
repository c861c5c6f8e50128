//! Where a plugin's compiled component comes from: compiled ahead of time (`ahead.rs`) when
//! the precompiled directory has it for the component's digest, else the on-disk compile cache
//! (`cache.rs`), else compiled now. Both directories hold the files `artifact.rs` reads.

pub(crate) mod ahead;
mod artifact;
mod cache;

use std::path::PathBuf;

use anyhow::Context;
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::config::HostConfig;

/// Where compiled components are found: the host's compile cache (read and written) and the
/// components compiled ahead of time (`ahead.rs`, read only).
#[derive(Clone, Debug)]
pub(crate) struct Dirs {
    pub(crate) cache: Option<PathBuf>,
    pub(crate) precompiled: Option<PathBuf>,
}

impl Dirs {
    pub(crate) fn of(config: &HostConfig) -> Self {
        Dirs { cache: config.cache_dir.clone(), precompiled: config.precompiled_dir.clone() }
    }
}

/// Loads `wasm`, whose hex SHA-256 is `digest`, compiled ahead of time when it is in
/// `dirs.precompiled`, else from the cache when it is there, else compiles it (and caches it).
pub(crate) fn load_component(engine: &Engine, wasm: &[u8], digest: &str, dirs: &Dirs) -> anyhow::Result<Component> {
    if let Some(dir) = &dirs.precompiled
        && let Some(component) = ahead::load(engine, digest, dir)
    {
        return Ok(component);
    }
    let Some(dir) = &dirs.cache else {
        return Component::new(engine, wasm).map_err(anyhow::Error::from).context("compiling the component");
    };
    cache::load(engine, wasm, digest, dir)
}
