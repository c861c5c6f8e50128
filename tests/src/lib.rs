//! Shared helpers for the integration tests: real hosts over real SQLite files in temp dirs,
//! with the real built components.

use std::path::{Path, PathBuf};

use scratchpad_host::{Host, HostConfig, PluginSpec, TurnContext};
use tempfile::TempDir;

/// Paths of the test components built by `tests/build.rs`.
pub mod components {
    include!(concat!(env!("OUT_DIR"), "/test_components.rs"));
}

/// A temporary directory holding one database file.
pub struct Fixture {
    /// The directory; removed on drop.
    pub dir: TempDir,
}

impl Fixture {
    /// A fresh directory.
    pub fn new() -> Self {
        Fixture { dir: tempfile::tempdir().expect("creating a temp dir") }
    }

    /// The database file in it.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("scratchpad.db")
    }

    /// A host configuration on this fixture's database with the given plugins. Compiled
    /// components are cached in one directory shared by the test run.
    pub fn config(&self, plugins: Vec<PluginSpec>) -> HostConfig {
        HostConfig { database: self.db(), cache_dir: Some(shared_cache()), plugins, ..HostConfig::default() }
    }

    /// A host with the embedded default plugins.
    pub async fn host(&self) -> Host {
        self.open(HostConfig::default().plugins).await
    }

    /// A host with `plugins`.
    pub async fn open(&self, plugins: Vec<PluginSpec>) -> Host {
        Host::open(self.config(plugins)).await.expect("opening the host")
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

/// The compiled-component cache shared by every test of a run.
pub fn shared_cache() -> PathBuf {
    std::env::temp_dir().join("scratchpad-test-cache")
}

/// The probe component configured with tool prefix `prefix`, loaded as plugin `name`.
pub fn probe(name: &str, prefix: &str) -> PluginSpec {
    PluginSpec {
        name: name.to_owned(),
        ..PluginSpec::file(components::PROBE_PATH).with_config(serde_json::json!({ "prefix": prefix }))
    }
}

/// The embedded scratchpad plugin with `config`.
pub fn scratchpad(config: serde_json::Value) -> PluginSpec {
    PluginSpec::embedded("scratchpad").with_config(config)
}

/// Turn `turn` of `session`.
pub fn turn(session: &str, turn: &str) -> TurnContext {
    TurnContext::new(session, turn)
}

/// Every stored (plugin, key, value) of `session`, read straight from the SQLite file.
pub fn dump(db: &Path, session: &str) -> Vec<(String, String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).expect("opening the database");
    let mut stmt =
        conn.prepare("SELECT plugin, key, value FROM plugin_state WHERE session = ?1 ORDER BY plugin, key").unwrap();
    stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}
