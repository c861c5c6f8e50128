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
use wasmtime::Engine;
use wasmtime::component::Component;

/// Loads `wasm`, whose hex SHA-256 is `digest`, from the cache in `dir` when it is there,
/// else compiles it (and caches it).
pub(super) fn load(engine: &Engine, wasm: &[u8], digest: &str, dir: &Path) -> anyhow::Result<Component> {
    let path = entry_path(engine, digest, dir);
    if path.exists() {
        // SAFETY: the file was written by `Component::serialize` of an engine with the same
        // compatibility hash (it is in the file name) into the host's own cache directory,
        // and entries are renamed into place whole. Wasmtime additionally checks the header
        // and refuses an incompatible or corrupt artifact, which falls through to a recompile.
        match unsafe { super::artifact::deserialize(engine, &path) } {
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

/// The cache entry of the component with hex SHA-256 `digest`, compiled by `engine`.
fn entry_path(engine: &Engine, digest: &str, dir: &Path) -> PathBuf {
    let mut compat = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compat);
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    use crate::config::InstanceAllocation;
    use crate::digest::sha256_hex as digest;

    fn engine() -> Engine {
        crate::engine::build(64 << 20, 4, InstanceAllocation::OnDemand).unwrap()
    }

    fn inode(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().ino()
    }

    #[test]
    fn a_cached_component_is_loaded_not_recompiled_and_a_corrupt_entry_is_replaced() {
        let (engine, dir) = (engine(), tempfile::tempdir().unwrap());
        let wasm = crate::embedded::component("scratchpad").unwrap();
        load(&engine, wasm, &digest(wasm), dir.path()).unwrap();
        let entry = entry_path(&engine, &digest(wasm), dir.path());
        let first = inode(&entry);
        assert!(std::fs::read(&entry).unwrap().starts_with(b"\x7fELF"), "the entry is a compiled artifact");

        // A hit deserializes the entry: it is not written again.
        load(&engine, wasm, &digest(wasm), dir.path()).unwrap();
        assert_eq!(inode(&entry), first, "a cache hit leaves the entry alone");

        // A corrupt entry is refused by wasmtime, recompiled, and replaced whole.
        std::fs::write(&entry, b"not a compiled component").unwrap();
        let corrupt = inode(&entry);
        load(&engine, wasm, &digest(wasm), dir.path()).expect("a corrupt entry falls back to compiling");
        assert_ne!(inode(&entry), corrupt);
        assert!(std::fs::read(&entry).unwrap().starts_with(b"\x7fELF"));
    }

    #[test]
    fn another_component_or_engine_misses() {
        let (engine, dir) = (engine(), tempfile::tempdir().unwrap());
        let a = crate::embedded::component("scratchpad").unwrap();
        let b = crate::embedded::component("observations").unwrap();
        assert_ne!(entry_path(&engine, &digest(a), dir.path()), entry_path(&engine, &digest(b), dir.path()));
        let pooled = crate::engine::build(64 << 20, 4, InstanceAllocation::Pooling).unwrap();
        let other = Engine::new(wasmtime::Config::new().wasm_component_model(true).epoch_interruption(false)).unwrap();
        assert_eq!(
            entry_path(&engine, &digest(a), dir.path()),
            entry_path(&pooled, &digest(a), dir.path()),
            "same compiler settings"
        );
        assert_ne!(
            entry_path(&engine, &digest(a), dir.path()),
            entry_path(&other, &digest(a), dir.path()),
            "other compiler settings"
        );
    }
}
