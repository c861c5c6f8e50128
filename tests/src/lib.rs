//! Shared helpers for the integration tests: real hosts over real SQLite files in temp dirs
//! (or fresh databases on a real PostgreSQL server), with the real built components.

use std::path::{Path, PathBuf};

use scratchpad_host::{Error, Host, HostConfig, Limits, Location, PluginSpec, ToolErrorKind, TurnContext};
use tempfile::TempDir;

pub use observations_plugin::fixtures::big_log;

pub mod agents;
pub mod dist;
pub mod npm_registry;
pub mod postgres;
pub mod process;
pub mod registry;
pub mod runtimes;
pub mod scripted;
pub mod setup;
pub mod third_party;

/// The name the test harness knows a test by, for re-running it alone in a child process
/// (`--exact NAME`): its path below the test binary's crate, from the test's `module_path!()`.
pub fn test_name(module_path: &str, test: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, module)) => format!("{module}::{test}"),
        None => test.to_owned(),
    }
}

/// The built `scratchpad` CLI, `target/<profile>/scratchpad` beside the test binary's `deps/`:
/// `cargo test --workspace` builds it for the CLI crate's own tests; alone, build it first.
pub fn scratchpad_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let binary = exe.parent().and_then(Path::parent).expect("target/<profile>/deps").join("scratchpad");
    assert!(binary.is_file(), "{} is missing: run `cargo build -p scratchpad-cli` first", binary.display());
    binary
}

/// Asserts that a host using the compile cache `cache` (`$XDG_CACHE_HOME/scratchpad`) compiled
/// none of the embedded components: a package's precompiled ones were loaded instead. Other
/// components (a test's probe) may be cached, each under its own digest.
pub fn assert_no_embedded_component_compiled(cache: &Path) {
    let compiled: Vec<String> = std::fs::read_dir(cache)
        .map(|entries| entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    for component in scratchpad_components::ALL {
        assert!(
            !compiled.iter().any(|name| name.starts_with(component.sha256)),
            "the embedded `{}` was compiled: {compiled:?}",
            component.name
        );
    }
}

/// Asserts that `out` is the whole output of `scratchpad demo`: a rejected append, the large
/// observation offloaded and read back, and the scratchpad injected after the host restarted.
/// Every test that runs a built `scratchpad` (the workspace's, an installed crate, a package)
/// checks its demo with this.
pub fn assert_demo_output(out: &str) {
    assert!(out.contains("rejected"), "the demo shows no rejected append:\n{out}");
    assert!(out.contains("the observations plugin offloads it") && out.contains("scratchpad_id"), "{out}");
    assert!(out.contains("→ scratchpad_read") && out.contains("LAST_CRITICAL_EVENT"), "{out}");
    let after_restart = out.split("Restarting the host").nth(1).expect("the demo restarts the host");
    for needle in
        ["[Session Scratchpad - your persistent working memory]", "## Plan", "## Notes", "## Refs", "what's next?"]
    {
        assert!(after_restart.contains(needle), "missing {needle:?} after the restart:\n{after_restart}");
    }
}

/// What the README's Node example (`bindings/node/test/example.mjs`) prints, on every platform
/// its addon is built for.
pub const NODE_EXAMPLE_OUTPUT: &str = "Plan set.\n\
                                       Usage: notes 0/4000 chars; plan 18/2000 chars; refs 0/50 items\n\
                                       [Session Scratchpad - your persistent working memory]\n\
                                       ## Plan\n\
                                       1. Fix X\n\
                                       2. Test Y\n\
                                       [End Scratchpad]\n\
                                       \n\
                                       continue\n";

/// The committed file of the first-party component `name` (`components/wasm/`, the bytes the
/// host embeds), for the tests that want a file.
pub fn first_party(name: &str) -> PathBuf {
    let component = scratchpad_components::get(name).unwrap_or_else(|| panic!("no first-party component `{name}`"));
    runtimes::root().join("components/wasm").join(component.file)
}

/// Paths of the test components built by `tests/build.rs`.
pub mod components {
    include!(concat!(env!("OUT_DIR"), "/test_components.rs"));
}

/// Runs each listed test, an `async fn name(fx: Fixture)` of the calling file, on both
/// storage backends: as `sqlite::name` on a SQLite file and `postgres::name` on a fresh
/// database of the test process's PostgreSQL server.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                super::$name($crate::Fixture::on("sqlite")).await
            })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                super::$name($crate::Fixture::on("postgres")).await
            })*
        }
    };
}

/// A temporary directory and one fresh database: a file in the directory, or (with
/// [`Fixture::postgres`]) a new database on the test run's PostgreSQL server.
pub struct Fixture {
    /// The directory; removed on drop.
    pub dir: TempDir,
    /// The database the fixture's hosts open.
    pub database: Location,
}

impl Fixture {
    /// A fresh directory with a SQLite database file in it.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("creating a temp dir");
        let database = Location::Sqlite(dir.path().join("scratchpad.db"));
        Fixture { dir, database }
    }

    /// A fresh directory and a fresh, empty database on the PostgreSQL server of this test
    /// process (started on first use).
    pub fn postgres() -> Self {
        let dir = tempfile::tempdir().expect("creating a temp dir");
        Fixture { dir, database: Location::parse(&postgres::server().fresh_database()) }
    }

    /// A fixture on `backend`: `"sqlite"` or `"postgres"`.
    pub fn on(backend: &str) -> Self {
        match backend {
            "sqlite" => Fixture::new(),
            "postgres" => Fixture::postgres(),
            other => panic!("unknown backend `{other}`"),
        }
    }

    /// The database as a `--db` argument: the file's path or the server's URL (with its
    /// password: `Location`'s `Display` hides it).
    pub fn database_arg(&self) -> String {
        match &self.database {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => url.clone(),
        }
    }

    /// Runs `sql` on the fixture's database behind the host's back (to damage it, say).
    pub fn execute(&self, sql: &str) {
        match &self.database {
            Location::Sqlite(path) => rusqlite::Connection::open(path)
                .expect("opening the database")
                .execute_batch(sql)
                .expect("the SQL runs"),
            Location::Postgres(url) => {
                postgres::server().psql(database_name(url), sql);
            }
        }
    }

    /// Removes the stored content of observation `id` from byte `from` on, behind the host's
    /// back: the end of its content file (SQLite), or its chunks from the one holding `from`
    /// (PostgreSQL, whose chunks are 64 KiB).
    pub fn damage_observation(&self, id: &str, from: u64) {
        match &self.database {
            Location::Sqlite(_) => {
                let file =
                    std::fs::File::options().write(true).open(self.observation_file(id)).expect("the content file");
                file.set_len(from).expect("truncating the content file");
            }
            Location::Postgres(_) => {
                self.execute(&format!("DELETE FROM observation_chunks WHERE id = '{id}' AND seq >= {}", from / 65536));
            }
        }
    }

    /// The content file of observation `id` in a SQLite fixture (the database's
    /// `-observations` directory).
    pub fn observation_file(&self, id: &str) -> PathBuf {
        self.dir.path().join("scratchpad.db-observations").join(id)
    }

    /// The content files a SQLite fixture holds (none on PostgreSQL).
    pub fn observation_files(&self) -> usize {
        match std::fs::read_dir(self.dir.path().join("scratchpad.db-observations")) {
            Ok(files) => files.count(),
            Err(_) => 0,
        }
    }

    /// The SQLite database file of a [`Fixture::new`] (tests that look inside the file).
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("scratchpad.db")
    }

    /// A host configuration on this fixture's database with the given plugins. Compiled
    /// components are cached in one directory shared by the test run.
    pub fn config(&self, plugins: Vec<PluginSpec>) -> HostConfig {
        HostConfig {
            database: self.database.clone(),
            cache_dir: Some(shared_cache()),
            plugins,
            ..HostConfig::default()
        }
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

/// The compiled-component cache shared by every test of a run. It lives in this crate's build
/// directory under `target/`, not in a world-writable temp dir: the host loads cache entries
/// as trusted compiled code.
pub fn shared_cache() -> PathBuf {
    PathBuf::from(concat!(env!("OUT_DIR"), "/component-cache"))
}

/// A component built from this repository for the tests, loaded as a trusted one: without a
/// signature check and granted whatever it asks for (the grants and signature checks have
/// their own tests, `grants.rs` and `oci_registry.rs`).
pub fn trusted(path: impl Into<PathBuf>) -> PluginSpec {
    PluginSpec::file(path).unsigned().granting(scratchpad_host::Grants::ALL)
}

/// `sha256:<hex>` of the component file at `path`: its identity, as an upgrade names it.
pub fn digest_of(path: impl AsRef<std::path::Path>) -> String {
    use sha2::Digest as _;
    let bytes = std::fs::read(path.as_ref()).expect("reading a component");
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The probe component configured with tool prefix `prefix`, loaded as plugin `name`.
pub fn probe(name: &str, prefix: &str) -> PluginSpec {
    PluginSpec {
        name: name.to_owned(),
        ..trusted(components::PROBE_PATH).with_config(serde_json::json!({ "prefix": prefix }))
    }
}

/// The embedded scratchpad plugin with `config`, and a 5 s call deadline instead of the
/// default 500 ms: the deadline is wall-clock time, and the behaviour tests check behaviour, not
/// speed, on a loaded 2-core machine running many tests at once (deadlines are tested with
/// the probe component).
pub fn scratchpad(config: serde_json::Value) -> PluginSpec {
    let limits = Limits { call_timeout: std::time::Duration::from_secs(5), ..Limits::default() };
    PluginSpec::embedded("scratchpad").with_config(config).with_limits(limits)
}

/// Turn `turn` of `session`.
pub fn turn(session: &str, turn: &str) -> TurnContext {
    TurnContext::new(session, turn)
}

/// A database the test helpers read straight from, bypassing the host: a SQLite file (a path)
/// or a fixture's [`Location`] (a file or a PostgreSQL database, read with `psql`).
pub trait StoredAt {
    /// Where the data is.
    fn location(&self) -> Location;
}

impl StoredAt for Path {
    fn location(&self) -> Location {
        Location::Sqlite(self.to_owned())
    }
}

impl StoredAt for PathBuf {
    fn location(&self) -> Location {
        Location::Sqlite(self.clone())
    }
}

impl StoredAt for Location {
    fn location(&self) -> Location {
        self.clone()
    }
}

/// The database name at the end of a PostgreSQL URL.
fn database_name(url: &str) -> &str {
    let path = url.rsplit('/').next().expect("a URL has a path");
    path.split('?').next().unwrap_or(path)
}

/// Rows of `sql` on the PostgreSQL database at `url`, each cell hex-decoded (the query
/// selects every column through `encode(…, 'hex')`).
fn hex_rows(url: &str, sql: &str) -> Vec<Vec<Vec<u8>>> {
    let out = postgres::server().psql(database_name(url), sql);
    out.lines()
        .filter(|l| !l.is_empty())
        .map(|line| line.split('|').map(|cell| hex::decode(cell).expect("hex from encode()")).collect())
        .collect()
}

/// Every stored (plugin, key, value) of `session`, read straight from the database.
pub fn dump(db: &(impl StoredAt + ?Sized), session: &str) -> Vec<(String, String, Vec<u8>)> {
    match db.location() {
        Location::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("opening the database");
            let mut stmt = conn
                .prepare("SELECT plugin, key, value FROM plugin_state WHERE session = ?1 ORDER BY plugin, key")
                .unwrap();
            stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
        }
        Location::Postgres(url) => {
            let session = hex::encode(session);
            let sql = format!(
                "SELECT encode(convert_to(plugin, 'UTF8'), 'hex'), encode(convert_to(key, 'UTF8'), 'hex'), \
                 encode(value, 'hex') FROM plugin_state \
                 WHERE session = convert_from(decode('{session}', 'hex'), 'UTF8') ORDER BY plugin, key"
            );
            let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
            hex_rows(&url, &sql)
                .into_iter()
                .map(|mut row| {
                    let value = row.pop().unwrap();
                    let key = text(row.pop().unwrap());
                    (text(row.pop().unwrap()), key, value)
                })
                .collect()
        }
    }
}

/// The scratchpad plugin's value under `key` in `session`, read straight from the database.
pub fn stored(db: &(impl StoredAt + ?Sized), session: &str, key: &str) -> Option<String> {
    dump(db, session)
        .into_iter()
        .find(|(plugin, k, _)| plugin == "scratchpad" && k == key)
        .map(|(_, _, value)| String::from_utf8(value).expect("stored text is UTF-8"))
}

/// The kind and message of a tool's refusal; panics on success or on any other error.
pub fn refusal<T: std::fmt::Debug>(result: scratchpad_host::Result<T>) -> (ToolErrorKind, String) {
    match result {
        Err(Error::Tool { error, .. }) => (error.kind, error.message),
        other => panic!("expected a tool error, got {other:?}"),
    }
}

/// Every row of every table of the database, as text, in a fixed order: equal dumps mean
/// byte-for-byte equal stored state (sessions, every plugin's keys, observations).
/// [`dump_all`] without the sessions' event logs (`plugin_events`): everything a plugin or a
/// caller stored. A failed plugin call adds its event by design and keeps nothing else; a
/// test checks the event with `Host::events`.
pub fn dump_state(db: &(impl StoredAt + ?Sized)) -> String {
    dump_all(db).lines().filter(|line| !line.starts_with("plugin_events:")).map(|line| format!("{line}\n")).collect()
}

pub fn dump_all(db: &(impl StoredAt + ?Sized)) -> String {
    match db.location() {
        Location::Sqlite(path) => dump_all_sqlite(&path),
        Location::Postgres(url) => {
            let tables = postgres::server().psql(
                database_name(&url),
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
            );
            let mut out = String::new();
            for table in tables.lines().filter(|t| !t.is_empty()) {
                let sql = format!("SELECT row_to_json(t)::text AS row FROM {table} t ORDER BY 1");
                for row in postgres::server().psql(database_name(&url), &sql).lines() {
                    out.push_str(&format!("{table}: {row}\n"));
                }
            }
            out
        }
    }
}

fn dump_all_sqlite(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("opening the database");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = String::new();
    for table in tables {
        let columns = conn.prepare(&format!("SELECT * FROM {table}")).unwrap().column_count();
        let order: Vec<String> = (1..=columns).map(|i| i.to_string()).collect();
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY {}", order.join(", "))).unwrap();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let values: Vec<String> = (0..columns).map(|i| show_value(row.get_ref(i).unwrap())).collect();
            out.push_str(&format!("{table}: {}\n", values.join(" | ")));
        }
    }
    out
}

fn show_value(value: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(x) => format!("{x:?}"),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => format!("{text:?}"),
            Err(_) => format!("x'{}'", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()),
        },
    }
}
