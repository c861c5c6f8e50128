//! Components compiled ahead of time, shipped beside the host so that a fresh install's first
//! start loads the embedded components instead of compiling them (about a second of CPU).
//!
//! [`write`] compiles every embedded component with the host's engine configuration for a
//! target and a fixed set of CPU features — on x86-64 Haswell's (2013: AVX2, BMI, LZCNT), on
//! other architectures their baseline — into `<sha256 of the component>.cwasm`. The packages
//! of `cargo xtask dist` carry them beside the `scratchpad` binary, the Node addon and the
//! Python extension (`precompiled/`; the CLI wheel in `share/scratchpad/precompiled`), which
//! point [`HostConfig::precompiled_dir`](crate::HostConfig::precompiled_dir) there.
//!
//! The host takes one when it is there for the component's digest (`compiled/ahead.rs`).
//! Wasmtime checks the artifact before using it — its wasmtime version, target, compiler
//! settings and wasm features must match this engine's, and this CPU must have every feature it
//! was compiled for — and any mismatch (an older CPU, another build) falls back to the compile
//! cache, as without the directory. The directory is trusted like the binary beside it: a compiled artifact is
//! machine code, so only a package's own files belong there (docs/security.md).

use std::path::{Path, PathBuf};

use anyhow::Context;
use wasmtime::Engine;

use crate::compiled::ahead::file_name;
use crate::config::InstanceAllocation;

/// Compiles every embedded component for `target` (a target triple; default this host's)
/// into `dir`; the files written.
pub fn write(dir: &Path, target: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    let triple = target.map_or_else(|| target_lexicon::Triple::host().to_string(), str::to_owned);
    let mut config = crate::engine::config(64 << 20, 1, InstanceAllocation::OnDemand)?;
    // An explicit target: the compiler then assumes no feature of this machine's CPU.
    config.target(&triple).map_err(anyhow::Error::from).with_context(|| format!("target `{triple}`"))?;
    if triple.starts_with("x86_64") {
        // SAFETY: a preset of CPU features. Code compiled with it is only ever loaded after
        // wasmtime has checked that the CPU running it has each of them (`compiled/ahead.rs`).
        unsafe {
            config.cranelift_flag_enable("haswell");
        }
    }
    // Fails for a target this build's compiler has no backend for.
    let engine =
        Engine::new(&config).map_err(anyhow::Error::from).with_context(|| format!("compiling for `{triple}`"))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for component in scratchpad_components::ALL {
        let compiled = engine
            .precompile_component(component.wasm)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("compiling `{}` for {triple}", component.name))?;
        let path = dir.join(file_name(component.sha256));
        std::fs::write(&path, compiled).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::ahead::load;
    use crate::compiled::{Dirs, load_component};
    use crate::digest::sha256_hex;

    fn entries(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, Iterator::count)
    }

    #[test]
    fn the_embedded_components_load_precompiled_and_anything_else_there_is_compiled_instead() {
        let (precompiled, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let written = write(precompiled.path(), None).unwrap();
        assert_eq!(written.len(), crate::embedded::EMBEDDED.len());
        // The engine a host runs, not the one that compiled them.
        let engine = crate::engine::build(64 << 20, 4, InstanceAllocation::Pooling).unwrap();
        let dirs = Dirs { cache: Some(cache.path().to_owned()), precompiled: Some(precompiled.path().to_owned()) };
        for name in crate::embedded::EMBEDDED {
            let wasm = crate::embedded::component(name).unwrap();
            let digest = sha256_hex(wasm);
            assert!(load(&engine, &digest, precompiled.path()).is_some(), "{name} loads");
            load_component(&engine, wasm, &digest, &dirs).unwrap();
        }
        assert_eq!(entries(cache.path()), 0, "nothing was compiled, so nothing was cached");

        // Compiled by an engine configured otherwise (another build), or not compiled at all:
        // wasmtime refuses the file and the host compiles the component, caching it.
        let wasm = crate::embedded::component("scratchpad").unwrap();
        let digest = sha256_hex(wasm);
        let path = precompiled.path().join(file_name(&digest));
        let other = Engine::new(wasmtime::Config::new().wasm_component_model(true)).unwrap();
        std::fs::write(&path, other.precompile_component(wasm).unwrap()).unwrap();
        assert!(load(&engine, &digest, precompiled.path()).is_none());
        load_component(&engine, wasm, &digest, &dirs).unwrap();
        assert_eq!(entries(cache.path()), 1, "compiled and cached");
        std::fs::write(&path, b"not a compiled component").unwrap();
        assert!(load(&engine, &digest, precompiled.path()).is_none());
        load_component(&engine, wasm, &digest, &Dirs { cache: None, ..dirs })
            .expect("a bad file falls back to compiling");
    }

    #[cfg(unix)]
    #[test]
    fn a_precompiled_file_or_directory_other_users_can_change_is_not_loaded() {
        use std::os::unix::fs::PermissionsExt;
        let precompiled = tempfile::tempdir().unwrap();
        write(precompiled.path(), None).unwrap();
        let engine = crate::engine::build(64 << 20, 4, InstanceAllocation::OnDemand).unwrap();
        let digest = sha256_hex(crate::embedded::component("scratchpad").unwrap());
        let (dir, file) = (precompiled.path(), precompiled.path().join(file_name(&digest)));
        let mode =
            |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        mode(dir, 0o755);
        mode(&file, 0o644);
        assert!(load(&engine, &digest, dir).is_some(), "private: loaded");
        mode(&file, 0o666);
        assert!(load(&engine, &digest, dir).is_none(), "a file anyone may write is not loaded");
        mode(&file, 0o644);
        mode(dir, 0o777);
        assert!(load(&engine, &digest, dir).is_none(), "nor one in a directory anyone may write to");
        mode(dir, 0o755);
        // Owned by another user: giving a file away needs root, as the suite runs here.
        std::os::unix::fs::chown(&file, Some(65534), None).expect("this test runs as root, to give a file away");
        assert!(load(&engine, &digest, dir).is_none(), "nor one another user owns");
    }
}
