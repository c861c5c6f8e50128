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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::config::InstanceAllocation;
    use crate::{Host, HostConfig, Location, Origin, PluginSpec, TurnContext};

    /// A host of the scratchpad component on the database in `dir`, compiling into `cache`.
    async fn host(dir: &Path, cache: PathBuf) -> Host {
        Host::open(HostConfig {
            database: Location::Sqlite(dir.join("s.db")),
            cache_dir: Some(cache),
            precompiled_dir: None,
            plugins: vec![PluginSpec::embedded("scratchpad")],
            lock_file: dir.join("plugins.lock"),
            instance_allocation: InstanceAllocation::OnDemand,
            warm_instances: 0,
            ..HostConfig::default()
        })
        .await
        .expect("the host opens")
    }

    /// Sets the session's plan through the component, as a model's tool call does.
    async fn set_plan(host: &Host, plan: &str) {
        let arguments = serde_json::json!({ "action": "set_plan", "content": plan }).to_string();
        let output = host.call_tool(&TurnContext::new("s", plan), "session.scratchpad", &arguments).await.unwrap();
        assert!(output.content.contains("Plan set"), "{}", output.content);
    }

    /// The one entry in `cache`, and its bytes.
    fn entry(cache: &Path) -> (PathBuf, Vec<u8>) {
        let entries: Vec<PathBuf> = std::fs::read_dir(cache).unwrap().map(|e| e.unwrap().path()).collect();
        let [entry] = &entries[..] else { panic!("one entry: {entries:?}") };
        (entry.clone(), std::fs::read(entry).unwrap())
    }

    #[tokio::test]
    async fn a_host_whose_compile_cache_is_damaged_or_unwritable_compiles_and_its_calls_work() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let first = host(dir.path(), cache.clone()).await;
        first.create_session("s", Origin::New).await.unwrap();
        set_plan(&first, "1. cache").await;
        drop(first);
        let (path, whole) = entry(&cache);

        let mut flipped = whole.clone();
        flipped[whole.len() / 2] ^= 0xff;
        for (what, damaged) in [("cut short", whole[..whole.len() / 3].to_vec()), ("a byte flipped", flipped)] {
            std::fs::write(&path, damaged).unwrap();
            set_plan(&host(dir.path(), cache.clone()).await, what).await;
            assert_eq!(entry(&cache), (path.clone(), whole.clone()), "{what}: compiled again and rewritten whole");
        }

        // A cache directory that cannot be made (its parent is a file): compiled, used, not kept.
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        set_plan(&host(dir.path(), file.join("cache")).await, "unwritable").await;
        assert!(!file.join("cache").exists());
    }
}
