//! The on-disk cache of compiled components, so a restart does not recompile.
//!
//! An entry is keyed by the SHA-256 of the component's bytes and by the engine's
//! compatibility hash (wasmtime version, target, compiler settings): a changed component or a
//! different engine simply misses. Entries are written to a temporary file and renamed into
//! place, so a crash never leaves a half-written entry; an entry that fails to load is
//! recompiled and replaced.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Compiles `wasm`, or loads its compiled form from `cache_dir` when it is there.
pub(crate) fn load_component(engine: &Engine, wasm: &[u8], cache_dir: Option<&Path>) -> anyhow::Result<Component> {
    let Some(dir) = cache_dir else {
        return Component::new(engine, wasm).map_err(anyhow::Error::from).context("compiling the component");
    };
    let path = entry_path(engine, wasm, dir);
    if path.exists() {
        // SAFETY: the file was written by `Component::serialize` of an engine with the same
        // compatibility hash (it is in the file name) into the host's own cache directory,
        // and entries are renamed into place whole. Wasmtime additionally checks the header
        // and refuses an incompatible or corrupt artifact, which falls through to a recompile.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok(component),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "discarding a bad cache entry")
            }
        }
    }
    let component = Component::new(engine, wasm).map_err(anyhow::Error::from).context("compiling the component")?;
    if let Err(error) = store(&component, &path) {
        tracing::warn!(path = %path.display(), error = %format!("{error:#}"), "could not cache the compiled component");
    }
    Ok(component)
}

fn entry_path(engine: &Engine, wasm: &[u8], dir: &Path) -> PathBuf {
    let mut compat = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compat);
    let digest = hex::encode(Sha256::digest(wasm));
    dir.join(format!("{digest}-{:016x}.cwasm", compat.finish()))
}

fn store(component: &Component, path: &Path) -> anyhow::Result<()> {
    let dir = path.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let bytes = component.serialize()?;
    let tmp = dir.join(format!(".{}.tmp{}", path.file_name().unwrap().to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}
