//! Host configuration: every default in one place, and the TOML file format.
//!
//! ```toml
//! database = "/var/lib/agent/scratchpad.db"  # default: $XDG_DATA_HOME/scratchpad/scratchpad.db
//! # database = "postgres://scratchpad@db.internal/agents"  # fleet mode: a PostgreSQL URL
//! cache_dir = "/var/cache/scratchpad"          # default: $XDG_CACHE_HOME/scratchpad
//! tokenizer = "cl100k_base"                    # or "o200k_base"
//! instance_allocation = "pooling"              # or "on-demand"
//! warm_instances = 2                           # per plugin, made ahead of their call
//! hot_session_bytes = 67108864                 # sessions' state kept in memory; 0: none
//! turn_wait_ms = 2000                          # longest a prompt waits for another writer's lock
//!
//! [limits]                 # defaults for every plugin
//! call_timeout_ms = 500
//! memory_bytes = 67108864
//! storage_quota_bytes = 8388608
//! output_bytes = 1048576
//! blob_quota_bytes = 1073741824
//! storage_max_keys = 1024
//! blob_max_ttl_seconds = 86400
//! index_quota_bytes = 33554432
//!
//! [recall]                 # what earlier sessions of a project left, recalled by the next
//! mode = "on"              # "read-only": recall, never index; "off": neither
//! exclude = ["/home/me/secret-repo"]   # projects never indexed nor recalled
//!
//! [subagents]              # a coding agent's sub-agents, each a session spawned from its parent's
//! copy = true              # it starts with a copy of the parent's state; false: empty
//!
//! [[plugin]]               # plugins in call order; without [[plugin]] the embedded defaults load
//! name = "scratchpad"      # no `path`: the embedded component of that name
//! [plugin.config]          # handed to the plugin as JSON
//! notesMaxChars = 8000
//!
//! [[plugin]]
//! name = "my-policy"
//! path = "plugins/my_policy.wasm"   # relative to the config file, or oci://HOST/REPO:TAG|@sha256:…
//! grants = ["inject", "storage"]    # the powers it may hold (docs/security.md); default: none
//! publisher = "acme"       # signed by this [[publisher]]'s key (default: any of them)
//! # allow_unsigned = true  # load it with no signature check at all
//! # upgrade = "sha256:…"   # once, when this new build (its digest) should keep the stored data
//! [plugin.limits]
//! call_timeout_ms = 250
//!
//! [[publisher]]            # a key third-party plugins may be signed with (ssh-keygen -Y sign)
//! name = "acme"
//! key = "ssh-ed25519 AAAAC3Nza… release@acme.example"   # or key_file = "acme.pub"
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::store::location::Location;
use crate::summarizer::Summarizer;

/// Sandbox limits for one plugin's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock deadline of one hook or tool call. Default 500 ms: a hook normally takes
    /// well under a millisecond, and wall-clock time on a loaded machine includes time the
    /// thread was not scheduled, so a tighter default would fail healthy plugins.
    pub call_timeout: Duration,
    /// Cap on the plugin's linear memory. Default 64 MiB.
    pub memory_bytes: u64,
    /// Cap on the bytes (keys + values) a plugin stores per session. Default 8 MiB.
    pub storage_quota_bytes: u64,
    /// Cap on what one call returns (injection texts, tool output). Default 1 MiB.
    pub output_bytes: u64,
    /// Cap on the bytes of a plugin's live (unexpired) offloaded observations per session, the
    /// blob store's quota. Default 1 GiB.
    pub blob_quota_bytes: u64,
    /// Cap on the keys (storage and metadata together) a plugin keeps per session. Default
    /// 1,024: every call reads its plugin's whole scope, so the count of keys, not only their
    /// bytes, is what a call costs.
    pub storage_max_keys: u64,
    /// Longest lifetime a plugin may give an offloaded observation, in seconds; a longer
    /// `ttl-seconds` is shortened to it. Default 86,400 (one day; the large-observation store's default TTL is
    /// one hour), so `gc` always reclaims what a plugin stored.
    pub blob_max_ttl_seconds: u64,
    /// Cap on the bytes a plugin keeps in one project's search index (the `index` import;
    /// every document counts its id, kind, title and text plus 64 bytes). Default 32 MiB.
    pub index_quota_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_millis(500),
            memory_bytes: 64 << 20,
            storage_quota_bytes: 8 << 20,
            output_bytes: 1 << 20,
            blob_quota_bytes: 1 << 30,
            storage_max_keys: 1024,
            blob_max_ttl_seconds: 86_400,
            index_quota_bytes: 32 << 20,
        }
    }
}

// The fixed bounds every plugin is held to, beside the configurable [`Limits`] (each is in
// docs/security.md).

/// Most tools one plugin may declare. The host lists, routes and serves every declared tool
/// on every start and in every turn, so a manifest must cost a bounded amount.
pub(crate) const MAX_TOOLS: usize = 128;
/// Longest tool description, in bytes (model APIs cap descriptions near 1,000 characters).
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 4 << 10;
/// Longest parameters schema of one tool, in bytes.
pub(crate) const MAX_SCHEMA_BYTES: usize = 16 << 10;
/// What one item of a returned list costs beyond its text, in bytes, as the output cap counts
/// it: the host stores, renders and serialises every item, so a million empty injections are
/// not free because their text is empty.
pub(crate) const ITEM_OVERHEAD_BYTES: usize = 64;

/// The default budget of the hot-session cache (`hot_session_bytes`).
pub(crate) const HOT_SESSION_BYTES: u64 = 64 << 20;

/// The default of [`HostConfig::turn_wait`] (`turn_wait_ms`).
pub const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The tokenizer behind the `tokens` capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Encoding {
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5; also what GoClaw uses for Claude estimates).
    #[default]
    Cl100kBase,
    /// OpenAI's o200k_base (GPT-4o and later).
    O200kBase,
}

impl Encoding {
    /// The encoding's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }
}

/// How plugin instances get their memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum InstanceAllocation {
    /// From a pool reserved when the host opens (wasmtime's pooling allocator): instantiation
    /// is a few microseconds, at the price of reserving `max_concurrent_calls` slots of
    /// virtual memory up front.
    #[default]
    Pooling,
    /// Mapped for each instance when it is created: nothing reserved, slower instantiation.
    OnDemand,
}

/// Where a plugin's component comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PluginSource {
    /// A first-party component embedded in the host, by name (see [`crate::embedded`]).
    Embedded(String),
    /// A `.wasm` component file. Its signature, if any, is the file beside it with `.sig`
    /// appended (what `ssh-keygen -Y sign` writes).
    File(PathBuf),
    /// A component in an OCI registry (`oci://HOST[:PORT]/REPO:TAG` or `…@sha256:DIGEST`),
    /// pulled, digest-checked, cached by digest and tag-pinned (see `scratchpad_supply`).
    Oci(scratchpad_supply::Reference),
    /// Component bytes held in memory.
    Bytes(Arc<[u8]>),
}

/// One plugin to load.
#[derive(Debug, Clone)]
pub struct PluginSpec {
    /// The plugin's name: scopes its storage, names it in errors. Unique per host.
    pub name: String,
    /// Where its component comes from.
    pub source: PluginSource,
    /// Its configuration, a JSON object handed to it through the `config` import.
    pub config: serde_json::Value,
    /// Its sandbox limits.
    pub limits: Limits,
    /// The digest (`sha256:…`) of a new version of the plugin that may take over the data
    /// another component stored under the same name, or a reserved embedded name. Default
    /// none. The first component loaded under a name in a database owns its data; the
    /// embedded components' names are reserved to them (see [`crate::identity`]).
    pub upgrade: Option<String>,
    /// The powers the operator grants it (see [`crate::grants`]). Default: an embedded
    /// component's own grants ([`crate::embedded::grants`]); none for any other.
    pub grants: crate::grants::Grants,
    /// Whose signature it must carry. Default for a component that is not embedded: one by
    /// any configured publisher ([`HostConfig::publishers`]).
    pub signature: SignaturePolicy,
}

/// Whose signature a plugin's component must carry before the host compiles it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignaturePolicy {
    /// One by any configured publisher's key.
    AnyPublisher,
    /// One by the configured publisher of this name.
    Publisher(String),
    /// None: loaded without a check. Only ever by the operator's explicit choice
    /// (`allow_unsigned = true`, `--allow-unsigned`, [`PluginSpec::unsigned`]); the embedded
    /// components, built into the host, have this policy.
    Unsigned,
}

impl PluginSpec {
    /// The embedded first-party component `name` with an empty configuration.
    pub fn embedded(name: &str) -> Self {
        PluginSpec {
            name: name.to_owned(),
            source: PluginSource::Embedded(name.to_owned()),
            config: serde_json::json!({}),
            limits: Limits::default(),
            upgrade: None,
            grants: crate::embedded::grants(name),
            signature: SignaturePolicy::Unsigned,
        }
    }

    /// The component in `path`, named after the file's stem, with no powers granted and a
    /// publisher's signature required.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        PluginSpec::third_party(name, PluginSource::File(path))
    }

    /// The component `reference` names in an OCI registry, named after the repository's last
    /// segment, with no powers granted and a publisher's signature required.
    pub fn oci(reference: scratchpad_supply::Reference) -> Self {
        PluginSpec::third_party(reference.name().to_owned(), PluginSource::Oci(reference))
    }

    /// A component given as a file (`FILE.wasm`) or an OCI reference (`oci://…`), as the
    /// command line and configuration files accept them.
    pub fn parse_source(source: &str, base: &Path) -> Result<PluginSpec, String> {
        if source.starts_with(scratchpad_supply::Reference::SCHEME) {
            let reference = source.parse::<scratchpad_supply::Reference>().map_err(|e| e.to_string())?;
            return Ok(PluginSpec::oci(reference));
        }
        Ok(PluginSpec::file(base.join(source)))
    }

    /// A third-party component: nothing granted, a signature required.
    pub fn third_party(name: String, source: PluginSource) -> Self {
        PluginSpec {
            name,
            source,
            config: serde_json::json!({}),
            limits: Limits::default(),
            upgrade: None,
            grants: crate::grants::Grants::NONE,
            signature: SignaturePolicy::AnyPublisher,
        }
    }

    /// The same plugin granted `grants` (instead of its default grants).
    pub fn granting(mut self, grants: crate::grants::Grants) -> Self {
        self.grants = grants;
        self
    }

    /// The same plugin, loaded with no signature check: only for components the operator
    /// trusts by other means (built locally, say).
    pub fn unsigned(mut self) -> Self {
        self.signature = SignaturePolicy::Unsigned;
        self
    }

    /// The same plugin, required to carry the signature of the configured publisher `name`.
    pub fn signed_by(mut self, name: &str) -> Self {
        self.signature = SignaturePolicy::Publisher(name.to_owned());
        self
    }

    /// The same plugin with configuration `config`.
    pub fn with_config(mut self, config: serde_json::Value) -> Self {
        self.config = config;
        self
    }

    /// The same plugin with sandbox limits `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same plugin, allowed to take over the data another component stored under its
    /// name when it is the component of `digest` (`sha256:…`, what `scratchpad inspect` prints):
    /// a new version of the same plugin.
    pub fn upgrading_to(mut self, digest: &str) -> Self {
        self.upgrade = Some(digest.to_owned());
        self
    }
}

/// Everything [`crate::Host::open`] needs.
#[derive(Clone)]
pub struct HostConfig {
    /// Where the data lives: a SQLite file, or a PostgreSQL server's URL (fleet mode).
    /// Default: the file `$XDG_DATA_HOME/scratchpad/scratchpad.db`.
    pub database: Location,
    /// Where compiled components are cached. Default: `$XDG_CACHE_HOME/scratchpad`.
    /// `None` disables the cache (every start compiles).
    pub cache_dir: Option<PathBuf>,
    /// A directory of the embedded components compiled ahead of time
    /// ([`crate::precompiled`]), loaded instead of compiling them when they fit this engine and
    /// CPU. Trusted like the host's own binary: only a package's own files belong there.
    /// Default none (the `scratchpad` CLI and the Python and Node bindings set it to
    /// `precompiled/` beside their binary or library when there is one; the CLI else to
    /// `share/scratchpad/precompiled` under its prefix, where its wheel installs them).
    pub precompiled_dir: Option<PathBuf>,
    /// The tokenizer. Default: cl100k_base.
    pub tokenizer: Encoding,
    /// The plugins, in call order. Default: the embedded first-party components.
    pub plugins: Vec<PluginSpec>,
    /// The keys third-party plugins may be signed with. Default: none.
    pub publishers: Vec<scratchpad_supply::signature::Publisher>,
    /// Where tags of OCI plugin sources are pinned to the digest they first resolved to.
    /// Default: `plugins.lock` beside the config file, else in `$XDG_DATA_HOME/scratchpad`.
    pub lock_file: PathBuf,
    /// How many plugin instances may run at once; further calls wait. Default 64.
    pub max_concurrent_calls: u32,
    /// How instances get their memory. Default: a pool.
    pub instance_allocation: InstanceAllocation,
    /// Fresh instances of each plugin made ahead of their call, so a call does not wait for
    /// instantiation (each still serves exactly one call). Default 2; 0 instantiates in the
    /// call.
    pub warm_instances: u32,
    /// Bytes of recently used sessions' plugin state kept in memory, so an operation on a
    /// session whose state is provably unchanged skips the database read of its begin (SQLite
    /// only: see `docs/embedding.md`). Default 64 MiB; 0 keeps nothing and reads every time.
    pub hot_session_bytes: u64,
    /// The longest a prompt's injection ([`Host::before_query`](crate::Host::before_query))
    /// waits for another process's write lock on the database before it fails with
    /// [`Error::Busy`](crate::Error::Busy), so a person's turn goes on without it instead of
    /// stalling for the busy timeout (30 s). Coding agents' hooks are bounded by it as a
    /// whole. Default 2 s ([`TURN_WAIT`]).
    pub turn_wait: std::time::Duration,
    /// The embedding runtime's summarizer, which writes the rolling checkpoints plugins ask
    /// for (the context-pressure policy; see [`crate::checkpoints`]). Default: none, and plugins are told so
    /// (`checkpoints.available`); set it in code, as only the runtime has a model.
    pub summarizer: Option<Arc<dyn Summarizer>>,
    /// What plugins may do with a project's search index (recall). Default: everything, for
    /// every project.
    pub recall: Recall,
    /// How the sessions of a coding agent's sub-agents are spawned from their parent's.
    pub subagents: Subagents,
}

/// How a coding agent's sub-agent (Claude Code's `Agent` tool) becomes a session: spawned from
/// its parent's session, which is [`Origin::Spawn`](crate::Origin::Spawn) with `copy` set from
/// here. The host only keeps the setting: the runtime's integration spawns the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Subagents {
    /// The spawned session starts with a copy of the parent's state (each plugin that copies
    /// on a requested copy: the scratchpad's plan, notes and refs); false: it starts empty.
    /// Default true: the runtime's model cannot ask for the copy itself, and a sub-agent
    /// works on a part of its parent's plan.
    pub copy: bool,
}

impl Default for Subagents {
    fn default() -> Self {
        Subagents { copy: true }
    }
}

/// The operator's say over recall: what plugins may do with the search index of a session's
/// project (the `index` import).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recall {
    /// Index and search, search only, or neither.
    pub mode: RecallMode,
    /// Projects that opted out: their sessions have no index at all, as if they had no
    /// project. Each is a project key as the sessions carry it (for a coding agent, the
    /// checkout's root directory).
    pub exclude: Vec<String>,
}

/// What plugins may do with a project's search index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RecallMode {
    /// Keep documents and search them.
    #[default]
    On,
    /// Search what is kept, never keep anything new (read-only mode).
    ReadOnly,
    /// Nothing: every session is as if it had no project.
    Off,
}

impl std::fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConfig")
            .field("database", &self.database)
            .field("cache_dir", &self.cache_dir)
            .field("precompiled_dir", &self.precompiled_dir)
            .field("tokenizer", &self.tokenizer)
            .field("plugins", &self.plugins)
            .field("publishers", &self.publishers.iter().map(|p| &p.name).collect::<Vec<_>>())
            .field("lock_file", &self.lock_file)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("instance_allocation", &self.instance_allocation)
            .field("warm_instances", &self.warm_instances)
            .field("hot_session_bytes", &self.hot_session_bytes)
            .field("turn_wait", &self.turn_wait)
            .field("summarizer", &self.summarizer.as_ref().map(|_| "…"))
            .field("subagents", &self.subagents)
            .finish()
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            database: Location::Sqlite(data_dir().join("scratchpad.db")),
            cache_dir: Some(cache_dir()),
            precompiled_dir: None,
            tokenizer: Encoding::default(),
            plugins: crate::embedded::DEFAULT_PLUGINS.iter().map(|n| PluginSpec::embedded(n)).collect(),
            publishers: Vec::new(),
            lock_file: data_dir().join("plugins.lock"),
            max_concurrent_calls: 64,
            instance_allocation: InstanceAllocation::default(),
            warm_instances: 2,
            hot_session_bytes: HOT_SESSION_BYTES,
            turn_wait: TURN_WAIT,
            summarizer: None,
            recall: Recall::default(),
            subagents: Subagents::default(),
        }
    }
}

impl HostConfig {
    /// The default configuration with the database at `location`: a path (a SQLite file) or a
    /// `postgres://` URL.
    pub fn with_database(location: impl Into<Location>) -> Self {
        HostConfig { database: location.into(), ..HostConfig::default() }
    }

    /// The same configuration with the runtime's `summarizer` for rolling checkpoints.
    pub fn with_summarizer(mut self, summarizer: impl Summarizer) -> Self {
        self.summarizer = Some(Arc::new(summarizer));
        self
    }

    /// Reads a TOML config file (format in the module docs) over the defaults. Every problem
    /// found is reported in one error, so a user fixes them in one pass.
    pub fn from_toml_file(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading config file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut config =
            Self::from_toml_str(&text, base).with_context(|| format!("in config file {}", path.display()))?;
        config.lock_file = base.join("plugins.lock");
        Ok(config)
    }

    /// Parses TOML config text; relative paths are resolved against `base`.
    pub fn from_toml_str(text: &str, base: &Path) -> anyhow::Result<Self> {
        let file: FileConfig = toml::from_str(text).context("the file is not valid config TOML")?;
        let mut problems = Vec::new();
        let mut config = HostConfig::default();
        if let Some(db) = file.database {
            config.database = match Location::parse(&db) {
                Location::Sqlite(path) => Location::Sqlite(base.join(path)),
                url => url,
            };
        }
        if let Some(dir) = file.cache_dir {
            config.cache_dir = Some(base.join(dir));
        }
        if let Some(tokenizer) = file.tokenizer {
            config.tokenizer = tokenizer;
        }
        if let Some(allocation) = file.instance_allocation {
            config.instance_allocation = allocation;
        }
        if let Some(n) = file.warm_instances {
            config.warm_instances = n;
        }
        if let Some(n) = file.hot_session_bytes {
            config.hot_session_bytes = n;
        }
        if let Some(ms) = file.turn_wait_ms {
            if ms == 0 {
                problems.push("turn_wait_ms must be at least 1".to_owned());
            }
            config.turn_wait = std::time::Duration::from_millis(ms);
        }
        if let Some(n) = file.max_concurrent_calls {
            if n == 0 {
                problems.push("max_concurrent_calls must be at least 1".to_owned());
            }
            config.max_concurrent_calls = n;
        }
        if let Some(recall) = file.recall {
            config.recall.mode = recall.mode.unwrap_or_default();
            for project in recall.exclude {
                match crate::project::check_project(&project) {
                    Ok(()) => config.recall.exclude.push(project),
                    Err(error) => problems.push(format!("recall.exclude: {error}")),
                }
            }
        }
        if let Some(subagents) = file.subagents {
            config.subagents.copy = subagents.copy.unwrap_or(config.subagents.copy);
        }
        let defaults = file.limits.apply(Limits::default(), "limits", &mut problems);
        if !file.plugin.is_empty() {
            config.plugins.clear();
        }
        for publisher in file.publisher {
            match publisher.read(base) {
                Ok(publisher) => config.publishers.push(publisher),
                Err(problem) => problems.push(problem),
            }
        }
        for (i, plugin) in file.plugin.into_iter().enumerate() {
            let at = format!("plugin[{i}] (`{}`)", plugin.name);
            let spec = match &plugin.path {
                Some(path) => match PluginSpec::parse_source(path, base) {
                    Ok(spec) => spec,
                    Err(problem) => {
                        problems.push(format!("{at}.path: {problem}"));
                        continue;
                    }
                },
                None if crate::embedded::component(&plugin.name).is_some() => PluginSpec::embedded(&plugin.name),
                None => {
                    problems.push(format!(
                        "{at}: no `path` given and no embedded component is named `{}` (embedded: {})",
                        plugin.name,
                        crate::embedded::EMBEDDED.join(", ")
                    ));
                    continue;
                }
            };
            let config_json = match plugin.config {
                None => serde_json::json!({}),
                Some(table) => serde_json::to_value(table).expect("TOML tables convert to JSON"),
            };
            let limits = plugin.limits.apply(defaults, &format!("{at}.limits"), &mut problems);
            let grants = match plugin.grants {
                None => spec.grants,
                Some(names) => crate::grants::Grants::parse(&names).unwrap_or_else(|problem| {
                    problems.push(format!("{at}.grants: {problem}"));
                    crate::grants::Grants::NONE
                }),
            };
            let upgrade = match plugin.upgrade {
                None => None,
                Some(toml::Value::String(digest)) if crate::digest::is_digest(&digest) => Some(digest),
                Some(other) => {
                    problems.push(format!(
                        "{at}.upgrade: name the new component's digest, `upgrade = \"sha256:<64 hex digits>\"` \
                         (an inspection of the component shows it), not {other}"
                    ));
                    None
                }
            };
            let signature = match (plugin.allow_unsigned, plugin.publisher) {
                (true, Some(_)) => {
                    problems.push(format!("{at}: `allow_unsigned = true` and `publisher` contradict each other"));
                    continue;
                }
                (true, None) => SignaturePolicy::Unsigned,
                (false, Some(name)) => SignaturePolicy::Publisher(name),
                (false, None) => spec.signature,
            };
            config.plugins.push(PluginSpec {
                name: plugin.name,
                config: config_json,
                limits,
                upgrade,
                grants,
                signature,
                ..spec
            });
        }
        for plugin in &config.plugins {
            if let SignaturePolicy::Publisher(name) = &plugin.signature
                && !config.publishers.iter().any(|p| &p.name == name)
            {
                problems.push(format!(
                    "plugin `{}`: publisher `{name}` is not configured (add a [[publisher]] table named `{name}`)",
                    plugin.name
                ));
            }
        }
        if let Err(duplicate) = check_unique_names(&config.plugins) {
            problems.push(duplicate);
        }
        if !problems.is_empty() {
            bail!("{} problem(s):\n  - {}", problems.len(), problems.join("\n  - "));
        }
        Ok(config)
    }
}

pub(crate) fn check_unique_names(plugins: &[PluginSpec]) -> Result<(), String> {
    for (i, a) in plugins.iter().enumerate() {
        if a.name.is_empty() {
            return Err(format!("plugin #{} has an empty name", i + 1));
        }
        if plugins[..i].iter().any(|b| b.name == a.name) {
            return Err(format!("two plugins are named `{}`; plugin names must be unique", a.name));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    database: Option<String>,
    cache_dir: Option<PathBuf>,
    tokenizer: Option<Encoding>,
    max_concurrent_calls: Option<u32>,
    instance_allocation: Option<InstanceAllocation>,
    warm_instances: Option<u32>,
    hot_session_bytes: Option<u64>,
    turn_wait_ms: Option<u64>,
    #[serde(default)]
    limits: FileLimits,
    #[serde(default)]
    plugin: Vec<FilePlugin>,
    #[serde(default)]
    publisher: Vec<FilePublisher>,
    recall: Option<FileRecall>,
    subagents: Option<FileSubagents>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSubagents {
    copy: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRecall {
    mode: Option<RecallMode>,
    #[serde(default)]
    exclude: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePlugin {
    name: String,
    path: Option<String>,
    upgrade: Option<toml::Value>,
    grants: Option<Vec<String>>,
    #[serde(default)]
    allow_unsigned: bool,
    publisher: Option<String>,
    config: Option<toml::Table>,
    #[serde(default)]
    limits: FileLimits,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePublisher {
    name: String,
    key: Option<String>,
    key_file: Option<PathBuf>,
}

impl FilePublisher {
    /// The publisher's key, given inline or in a file relative to the config file.
    fn read(self, base: &Path) -> Result<scratchpad_supply::signature::Publisher, String> {
        let at = format!("publisher `{}`", self.name);
        let key = match (self.key, self.key_file) {
            (Some(key), None) => key,
            (None, Some(file)) => std::fs::read_to_string(base.join(&file))
                .map_err(|e| format!("{at}: reading key_file {}: {e}", base.join(&file).display()))?,
            _ => return Err(format!("{at}: give exactly one of `key` (an OpenSSH public key line) and `key_file`")),
        };
        scratchpad_supply::signature::Publisher::parse(&self.name, key.trim()).map_err(|e| format!("{at}: {e}"))
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    call_timeout_ms: Option<u64>,
    memory_bytes: Option<u64>,
    storage_quota_bytes: Option<u64>,
    output_bytes: Option<u64>,
    blob_quota_bytes: Option<u64>,
    storage_max_keys: Option<u64>,
    blob_max_ttl_seconds: Option<u64>,
    index_quota_bytes: Option<u64>,
}

impl FileLimits {
    fn apply(self, mut limits: Limits, at: &str, problems: &mut Vec<String>) -> Limits {
        let mut positive = |name: &str, value: Option<u64>| -> Option<u64> {
            match value {
                Some(0) => {
                    problems.push(format!("{at}.{name} must be greater than 0"));
                    None
                }
                other => other,
            }
        };
        if let Some(ms) = positive("call_timeout_ms", self.call_timeout_ms) {
            limits.call_timeout = Duration::from_millis(ms);
        }
        if let Some(bytes) = positive("memory_bytes", self.memory_bytes) {
            limits.memory_bytes = bytes;
        }
        if let Some(bytes) = positive("storage_quota_bytes", self.storage_quota_bytes) {
            limits.storage_quota_bytes = bytes;
        }
        if let Some(bytes) = positive("output_bytes", self.output_bytes) {
            limits.output_bytes = bytes;
        }
        if let Some(bytes) = positive("blob_quota_bytes", self.blob_quota_bytes) {
            limits.blob_quota_bytes = bytes;
        }
        if let Some(keys) = positive("storage_max_keys", self.storage_max_keys) {
            limits.storage_max_keys = keys;
        }
        if let Some(seconds) = positive("blob_max_ttl_seconds", self.blob_max_ttl_seconds) {
            limits.blob_max_ttl_seconds = seconds;
        }
        if let Some(bytes) = positive("index_quota_bytes", self.index_quota_bytes) {
            limits.index_quota_bytes = bytes;
        }
        limits
    }
}

/// `$XDG_DATA_HOME/scratchpad`, falling back to `~/.local/share/scratchpad` (`~` is the home
/// directory: `$HOME`, or the profile directory on Windows).
pub fn data_dir() -> PathBuf {
    xdg_dir("XDG_DATA_HOME", ".local/share").join("scratchpad")
}

/// `$XDG_CACHE_HOME/scratchpad`, falling back to `~/.cache/scratchpad`.
pub fn cache_dir() -> PathBuf {
    xdg_dir("XDG_CACHE_HOME", ".cache").join("scratchpad")
}

fn xdg_dir(var: &str, fallback: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        _ => std::env::home_dir().unwrap_or_else(|| PathBuf::from(".")).join(fallback),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_agents_copy_their_parents_state_unless_the_file_says_not_to() {
        let copy = |text: &str| HostConfig::from_toml_str(text, Path::new("/")).unwrap().subagents.copy;
        assert!(copy(""));
        assert!(copy("[subagents]"));
        assert!(!copy("[subagents]\ncopy = false"));
        let err = HostConfig::from_toml_str("[subagents]\nfork = true", Path::new("/")).unwrap_err();
        assert!(format!("{err:#}").contains("unknown field `fork`"), "{err:#}");
    }

    #[test]
    fn every_problem_in_a_config_file_is_reported_at_once() {
        let text = r#"
            [limits]
            call_timeout_ms = 0
            [[plugin]]
            name = "nowhere"
            [[plugin]]
            name = "x"
            path = "x.wasm"
            [plugin.limits]
            memory_bytes = 0
        "#;
        let err = HostConfig::from_toml_str(text, Path::new("/")).unwrap_err().to_string();
        assert!(err.starts_with("3 problem(s)"), "{err}");
        assert!(err.contains("limits.call_timeout_ms must be greater than 0"), "{err}");
        assert!(err.contains("no embedded component is named `nowhere`"), "{err}");
        assert!(err.contains("plugin[1] (`x`).limits.memory_bytes"), "{err}");
    }

    #[test]
    fn plugin_paths_are_relative_to_the_config_file_and_limits_inherit_the_defaults() {
        let text = r#"
            [limits]
            call_timeout_ms = 250
            [[plugin]]
            name = "mine"
            path = "mine.wasm"
            [plugin.config]
            budget = 3
        "#;
        let config = HostConfig::from_toml_str(text, Path::new("/etc/agent")).unwrap();
        assert_eq!(config.plugins.len(), 1);
        let plugin = &config.plugins[0];
        assert!(matches!(&plugin.source, PluginSource::File(p) if p == Path::new("/etc/agent/mine.wasm")));
        assert_eq!(plugin.config, serde_json::json!({"budget": 3}));
        assert_eq!(plugin.limits.call_timeout, Duration::from_millis(250));
        assert_eq!(plugin.limits.memory_bytes, Limits::default().memory_bytes);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = HostConfig::from_toml_str("databse = \"x\"", Path::new("/")).unwrap_err();
        assert!(format!("{err:#}").contains("unknown field `databse`"), "{err:#}");
    }
}
