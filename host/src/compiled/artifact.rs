//! Reading a compiled component (`.cwasm`, as `Component::serialize` and
//! `Engine::precompile_component` write it) from a file into an engine: what the compile cache
//! and the precompiled directory share.

use std::path::Path;

#[cfg(not(unix))]
use anyhow::Context;
use wasmtime::Engine;
use wasmtime::component::Component;

/// The compiled component in the file at `path`.
///
/// # Safety
///
/// As [`Component::deserialize_file`]: the file must have been written by
/// [`Component::serialize`] or [`Engine::precompile_component`] (wasmtime checks its header,
/// version, settings and target, not that its code is what a component compiles to).
pub(crate) unsafe fn deserialize(engine: &Engine, path: &Path) -> anyhow::Result<Component> {
    // Mapped, on Unix: only the pages used are read.
    #[cfg(unix)]
    let component = unsafe { Component::deserialize_file(engine, path) };
    // Read, on Windows: a mapped file can be neither replaced nor deleted while the process
    // runs (the cache's rename of a fresh entry, an upgrade of the package that shipped it),
    // and wine cannot map one at all ("failed change pages to `PAGE_READONLY`").
    #[cfg(not(unix))]
    let component = {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        unsafe { Component::deserialize(engine, bytes) }
    };
    component.map_err(anyhow::Error::from)
}
