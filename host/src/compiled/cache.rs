//! The on-disk cache of compiled components, so a restart does not recompile.
//!
//! An entry is keyed by the SHA-256 of the component's bytes and by the engine's
//! compatibility hash (wasmtime version, target, compiler settings): a changed component or a
//! different engine simply misses. An entry is the compiled artifact followed by its length and
//! its CRC-32, checked before wasmtime sees it: wasmtime checks an artifact's header, not its
//! code, and running changed machine code is undefined behaviour, so an entry cut short or
//! changed (a power loss before the data reached the disk, a bad disk, a stray write) is never
//! loaded but recompiled and replaced. The checksum finds damage, not tampering: whoever can
//! write the directory can write a matching checksum, which is why it must stay the host's own.
//! Entries are written to a temporary file and renamed into place, so a crash never leaves a
//! half-written entry under its name. The cache only saves time: when it cannot be read or
//! written, the component is compiled and used from memory.

use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};
use wasmtime::Engine;
use wasmtime::component::Component;

/// What follows the artifact in an entry: its length (8 bytes) and its CRC-32 (4 bytes),
/// little-endian.
const TRAILER_BYTES: u64 = 12;

/// Loads `wasm`, whose hex SHA-256 is `digest`, from the cache in `dir` when it is there,
/// else compiles it (and caches it).
pub(super) fn load(engine: &Engine, wasm: &[u8], digest: &str, dir: &Path) -> anyhow::Result<Component> {
    let path = entry_path(engine, digest, dir);
    match check_entry(&path) {
        Ok(false) => {}
        // SAFETY: the file was written by `Component::serialize` of an engine with the same
        // compatibility hash (it is in the file name) into the host's own cache directory,
        // entries are renamed into place whole and never changed in place, and its bytes are
        // the ones written: their checksum matches. Wasmtime reads the artifact and ignores
        // the trailer after it; it also checks the header and refuses an incompatible
        // artifact, which falls through to a recompile.
        Ok(true) => match unsafe { super::artifact::deserialize(engine, &path) } {
            Ok(component) => return Ok(component),
            Err(error) => tracing::warn!(path = %path.display(), %error, "discarding a bad cache entry"),
        },
        Err(error) => {
            tracing::warn!(path = %path.display(), error = %format!("{error:#}"), "discarding a bad cache entry")
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

/// Whether there is an entry at `path`; an error when it cannot be read or is not whole (its
/// length or checksum is not its artifact's). Read in blocks, never held whole in memory.
fn check_entry(path: &Path) -> anyhow::Result<bool> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error).context("opening it"),
    };
    let size = file.metadata().context("reading its size")?.len();
    let Some(artifact) = size.checked_sub(TRAILER_BYTES) else { bail!("{size} bytes, fewer than its trailer") };
    let (mut crc, mut read) = (crc32fast::Hasher::new(), 0);
    let mut block = vec![0u8; 256 << 10];
    let mut bytes = (&mut file).take(artifact);
    loop {
        let n = bytes.read(&mut block).context("reading it")?;
        if n == 0 {
            break;
        }
        crc.update(&block[..n]);
        read += n as u64;
    }
    if read != artifact {
        bail!("it ended while being read");
    }
    let mut trailer = [0u8; TRAILER_BYTES as usize];
    file.read_exact(&mut trailer).context("reading its trailer")?;
    if trailer != self::trailer(artifact, crc.finalize()) {
        bail!("its length or checksum is not its artifact's (cut short or changed)");
    }
    Ok(true)
}

/// The trailer of an artifact of `len` bytes with CRC-32 `crc`.
fn trailer(len: u64, crc: u32) -> [u8; TRAILER_BYTES as usize] {
    let mut trailer = [0u8; TRAILER_BYTES as usize];
    trailer[..8].copy_from_slice(&len.to_le_bytes());
    trailer[8..].copy_from_slice(&crc.to_le_bytes());
    trailer
}

fn store(component: &Component, path: &Path) -> anyhow::Result<()> {
    // Hosts in one process may write the same entry at once: each writes its own file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut bytes = component.serialize()?;
    bytes.extend_from_slice(&trailer(bytes.len() as u64, crc32fast::hash(&bytes)));
    let name = path.file_name().expect("cache entries have a file name").to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp{}-{}", std::process::id(), WRITES.fetch_add(1, Ordering::Relaxed)));
    let written = std::fs::write(&tmp, bytes)
        .with_context(|| format!("writing {}", tmp.display()))
        .and_then(|()| std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display())));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
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

    /// The offset and size of the section `name` of a little-endian ELF64 file.
    fn elf_section(elf: &[u8], name: &str) -> (usize, usize) {
        let at = |offset: usize, len: usize| {
            elf[offset..offset + len].iter().rev().fold(0usize, |n, &b| (n << 8) | usize::from(b))
        };
        let (table, entry_size, count, names) = (at(0x28, 8), at(0x3a, 2), at(0x3c, 2), at(0x3e, 2));
        let header = |i: usize| table + i * entry_size;
        let strings = at(header(names) + 0x18, 8);
        let wanted = format!("{name}\0");
        (0..count)
            .map(header)
            .find(|&h| elf[strings + at(h, 4)..].starts_with(wanted.as_bytes()))
            .map(|h| (at(h + 0x18, 8), at(h + 0x20, 8)))
            .unwrap_or_else(|| panic!("no {name} section"))
    }

    #[test]
    fn an_entry_cut_short_or_with_changed_bytes_is_never_loaded_but_compiled_again_and_rewritten() {
        let (engine, dir) = (engine(), tempfile::tempdir().unwrap());
        let wasm = crate::embedded::component("scratchpad").unwrap();
        load(&engine, wasm, &digest(wasm), dir.path()).unwrap();
        let entry = entry_path(&engine, &digest(wasm), dir.path());
        let whole = std::fs::read(&entry).unwrap();
        assert!(check_entry(&entry).unwrap(), "a fresh entry passes its check");
        let artifact = whole.len() - TRAILER_BYTES as usize;
        // SAFETY: as in `load`; the entry was just written by this engine and checked.
        // Read into memory (as on Windows) wasmtime ignores the trailer too.
        assert!(unsafe { Component::deserialize(&engine, &whole) }.is_ok());

        // Wasmtime alone takes an artifact whose machine code changed: it checks the header.
        let (text, size) = elf_section(&whole, ".text");
        let mut changed = whole.clone();
        changed[text + size / 2] ^= 0xff;
        // SAFETY: the component is only deserialized, never instantiated or run.
        assert!(
            unsafe { Component::deserialize(&engine, &changed[..artifact]) }.is_ok(),
            "wasmtime would load changed code"
        );

        let old_format = whole[..artifact].to_vec();
        for (what, damaged) in [
            ("cut in half", whole[..whole.len() / 2].to_vec()),
            ("a byte of its code flipped", changed),
            ("its last byte cut", whole[..whole.len() - 1].to_vec()),
            ("cut to nothing", Vec::new()),
            ("with no trailer", old_format),
        ] {
            std::fs::write(&entry, &damaged).unwrap();
            let before = inode(&entry);
            assert!(check_entry(&entry).is_err(), "{what}: the check finds it");
            load(&engine, wasm, &digest(wasm), dir.path()).unwrap_or_else(|e| panic!("{what}: {e:#}"));
            // A loaded entry is left alone (the test above): a new file means it was compiled.
            assert_ne!(inode(&entry), before, "{what}: compiled again, not loaded");
            assert!(check_entry(&entry).unwrap(), "{what}: rewritten whole");
            assert_eq!(std::fs::read(&entry).unwrap().len(), whole.len(), "{what}");
        }
    }

    #[test]
    fn a_cache_that_cannot_be_written_costs_only_the_cache() {
        let (engine, dir) = (engine(), tempfile::tempdir().unwrap());
        let wasm = crate::embedded::component("scratchpad").unwrap();

        // Its directory cannot be made: a regular file is where its parent should be (root
        // writes anywhere a mode would forbid).
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let cache = file.join("cache");
        load(&engine, wasm, &digest(wasm), &cache).expect("compiled in memory");
        assert!(!cache.exists());

        // Its entry's name is taken by a directory: neither read nor replaced, no file left.
        let cache = dir.path().join("cache");
        let entry = entry_path(&engine, &digest(wasm), &cache);
        std::fs::create_dir_all(&entry).unwrap();
        load(&engine, wasm, &digest(wasm), &cache).expect("compiled in memory");
        assert!(entry.is_dir());
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1, "no temporary file left behind");
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
