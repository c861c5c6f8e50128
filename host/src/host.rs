//! [`Host`]: loads the plugins, owns the database, and runs every call atomically.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;
use tokio::sync::OwnedMutexGuard;

use crate::bindings::wit;
use crate::capabilities::call::PendingCheckpoint;
use crate::capabilities::scope::Scope;
use crate::capabilities::tokenizer::Tokenizer;
use crate::config::{HostConfig, check_unique_names};
use crate::error::{Error, Result};
use crate::grants::{Hook, Power};
use crate::names::ToolNames;
use crate::plugin::{self, LoadedPlugin, PluginSummary};
use crate::sandbox::{Sandbox, check_power, check_value};
use crate::sources::Sources;
use crate::store::{BlobEntry, Db, Location, PluginInit, SessionRecord, now_ms};
use crate::summarizer::Summarizer;
use crate::types::{Injection, Origin};

/// Longest session or turn id, in bytes.
const MAX_ID_BYTES: usize = 256;

/// A scratchpad host: plugins loaded into a sandbox, over one SQLite database.
///
/// `Host` is cheap to clone and safe to share across tasks. Calls on one session are
/// serialized; calls on different sessions run in parallel. Every hook or tool call of a
/// plugin is atomic: its storage writes are committed together when it returns, or not at
/// all. Several processes may open the same database file.
#[derive(Clone)]
pub struct Host {
    pub(crate) inner: Arc<Inner>,
}

/// How long the write of one plugin event may take before it is given up.
const EVENT_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// The most [`Host::read_observation`] reads at once: 1 MiB.
pub const MAX_OBSERVATION_READ: usize = 1 << 20;

pub(crate) struct Inner {
    pub(crate) db: Db,
    /// Where `db` lives.
    location: Location,
    pub(crate) sandbox: Sandbox,
    pub(crate) plugins: Vec<LoadedPlugin>,
    /// Each tool's plugin, by the tool's name.
    pub(crate) tool_owner: HashMap<String, usize>,
    /// The tools under their API names, which callers may use too.
    tool_names: ToolNames,
    /// The embedder's summarizer for rolling checkpoints, if it gave one.
    pub(crate) summarizer: Option<Arc<dyn Summarizer>>,
    /// Checkpoints asked for by committed calls, as (session, plugin, request), waiting for
    /// the end of their session's turn.
    pub(crate) checkpoint_requests: Mutex<Vec<(String, String, PendingCheckpoint)>>,
    /// What plugins may do with a project's search index.
    pub(crate) recall: crate::config::Recall,
    /// The longest a prompt waits for another writer's lock ([`HostConfig::turn_wait`]).
    pub(crate) turn_wait: std::time::Duration,
    locks: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
}

/// A plugin call's linear memory ([`Host::last_call_memory`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallMemory {
    /// Its size when the call's instance was made, in bytes.
    pub initial_bytes: u64,
    /// The most it reached during the call, in bytes.
    pub peak_bytes: u64,
}

/// One value a plugin published about a session (the `metadata` import).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MetadataEntry {
    /// The plugin that published it.
    pub plugin: String,
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: serde_json::Value,
}

/// One stored key of a plugin in a session (for `scratchpad show` and tests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StateEntry {
    /// The plugin that owns the key.
    pub plugin: String,
    /// The key.
    pub key: String,
    /// The value's bytes.
    pub value: Vec<u8>,
}

impl Host {
    /// Opens the database and loads every configured plugin.
    ///
    /// Fails with [`Error::Load`] naming the plugin when one cannot be loaded (not a
    /// component, wrong contract, bad configuration) or when two plugins declare the same
    /// tool.
    pub async fn open(config: HostConfig) -> Result<Host> {
        check_unique_names(&config.plugins).map_err(|message| Error::Load { plugin: "config".into(), message })?;
        let max_memory = config.plugins.iter().map(|p| p.limits.memory_bytes).max().unwrap_or(1 << 20);
        // Pool slots for the instances of running calls and for those made ahead of them.
        let warm = config.warm_instances as usize;
        let slots = config.max_concurrent_calls.saturating_add(config.warm_instances * config.plugins.len() as u32);
        let engine = crate::engine::build(max_memory, slots, config.instance_allocation)?;
        let tokenizer = Arc::new(Tokenizer::new(config.tokenizer));
        let mut sandbox = Sandbox::new(engine, tokenizer, config.max_concurrent_calls)?;
        sandbox.summarizer_available = config.summarizer.is_some();
        let db = Db::open_with(&config.database, config.hot_session_bytes).await?;

        for spec in &config.plugins {
            crate::identity::check_reserved(spec)?;
        }
        let mut plugins: Vec<LoadedPlugin> = Vec::with_capacity(config.plugins.len());
        let mut tool_owner = HashMap::new();
        // API name → the tool declaring it, and that tool's plugin.
        let mut api_owner: HashMap<String, (String, usize)> = HashMap::new();
        let sources = Sources::new(&config);
        let dirs = crate::compiled::Dirs::of(&config);
        for spec in &config.plugins {
            let loaded = plugin::load(&sandbox, &sources, spec, &dirs, warm).await?;
            for tool in &loaded.tools {
                if let Some((other, owner)) = api_owner.get(&tool.api_name) {
                    let owner: &LoadedPlugin = &plugins[*owner];
                    let message = if *other == tool.name {
                        format!(
                            "it declares the tool `{other}`, which plugin `{}` already declares; tool names must be \
                             unique across plugins",
                            owner.info.name
                        )
                    } else {
                        let collision = crate::names::ToolNameError::Collision {
                            first: other.clone(),
                            second: tool.name.clone(),
                            api_name: tool.api_name.clone(),
                        };
                        format!("{collision} (`{other}` is plugin `{}`'s)", owner.info.name)
                    };
                    return Err(Error::Load { plugin: spec.name.clone(), message });
                }
                tool_owner.insert(tool.name.clone(), plugins.len());
                api_owner.insert(tool.api_name.clone(), (tool.name.clone(), plugins.len()));
            }
            plugins.push(loaded);
        }
        let tool_names = ToolNames::new(plugins.iter().flat_map(|p| p.tools.iter().map(|t| t.name.as_str())), "")
            .expect("every tool's API name was checked unique above");
        let identities = config.plugins.iter().zip(&plugins).map(|(spec, p)| (spec, p.identity.clone())).collect();
        crate::identity::claim(&db, identities).await?;
        tracing::info!(database = %config.database, plugins = plugins.len(), "host ready");
        let inner = Inner {
            db,
            location: config.database.clone(),
            sandbox,
            plugins,
            tool_owner,
            tool_names,
            summarizer: config.summarizer.clone(),
            checkpoint_requests: Mutex::new(Vec::new()),
            recall: config.recall.clone(),
            turn_wait: config.turn_wait,
            locks: Mutex::new(HashMap::new()),
        };
        let host = Host { inner: Arc::new(inner) };
        for index in 0..host.inner.plugins.len() {
            host.warm_up(index).await;
        }
        Ok(host)
    }

    /// Where the host's data lives (a SQLite file or a PostgreSQL server; shown without a
    /// password).
    pub fn database(&self) -> &Location {
        &self.inner.location
    }

    /// The longest a prompt waits for another writer's lock ([`HostConfig::turn_wait`]).
    pub fn turn_wait(&self) -> std::time::Duration {
        self.inner.turn_wait
    }

    /// The host's counters and histograms since it opened, for an operator to scrape
    /// ([`Metrics::render`](crate::Metrics::render); docs/metrics.md).
    pub fn metrics(&self) -> &crate::Metrics {
        &self.inner.db.metrics
    }

    /// The loaded plugins, in call order.
    pub fn plugins(&self) -> Vec<PluginSummary> {
        self.inner.plugins.iter().map(LoadedPlugin::summary).collect()
    }

    /// The loaded plugins' tools as a model sees them: `prefix` + each tool's API name
    /// ([`ToolNames`]), for texts that name tools ([`ToolNames::rewrite`]) and for calls made
    /// under those names. Every method taking a tool's name takes its API name too.
    pub fn tool_names(&self, prefix: &str) -> ToolNames {
        if prefix.is_empty() {
            return self.inner.tool_names.clone();
        }
        let tools = self.inner.tool_names.iter().map(|(tool, _)| tool);
        ToolNames::new(tools, prefix).expect("API names stay unique behind a common prefix")
    }

    /// The plugin owning the tool called `name` (its own name or its API name), and the
    /// tool's own name.
    pub(crate) fn find_tool<'a>(&'a self, name: &'a str) -> Option<(usize, &'a str)> {
        let own = if self.inner.tool_owner.contains_key(name) { name } else { self.inner.tool_names.tool(name)? };
        Some((self.inner.tool_owner[own], own))
    }

    /// Tokens in `text` with the host's tokenizer.
    pub fn count_tokens(&self, text: &str) -> u32 {
        self.inner.sandbox.tokenizer.count(text)
    }

    /// Creates session `id`, in no project, and returns the plugins' standing guidance for it
    /// (a spawned or forked session is in its parent's project): [`Host::create_session_in`].
    pub async fn create_session(&self, id: &str, origin: Origin) -> Result<Vec<Injection>> {
        self.create_session_in(id, origin, None).await
    }

    /// Creates session `id` in `project` and returns the plugins' standing guidance for it.
    ///
    /// The project (a key: [`check_project`](crate::check_project); a coding agent's comes from
    /// its working directory, [`project_of_dir`](crate::project_of_dir)) is what recall keeps
    /// the session's findings under and finds earlier sessions' by. `None` for a spawned or
    /// forked session means its parent's project; for a new one, no project: it recalls
    /// nothing and is recalled by nothing.
    ///
    /// Every plugin's `before-session-create` runs first; then the session row, the guidance,
    /// the state copied from the parent (for each plugin that asked) and the hooks' own
    /// writes are committed in one transaction. A duplicate id, a missing parent or a bad
    /// project key changes nothing.
    pub async fn create_session_in(&self, id: &str, origin: Origin, project: Option<&str>) -> Result<Vec<Injection>> {
        check_id("session id", id)?;
        if let Some(project) = project {
            crate::project::check_project(project)?;
        }
        let _guard = self.lock(id).await;
        let parent = origin.parent().map(str::to_owned);
        let exists = self.inner.db.session_exists(id).await?;
        let parent_exists = match &parent {
            Some(p) => self.inner.db.session_exists(p).await?,
            None => true,
        };
        if exists {
            return Err(Error::SessionExists(id.to_owned()));
        }
        if !parent_exists {
            return Err(Error::SessionNotFound(origin.parent().unwrap_or_default().to_owned()));
        }
        let project = match (project, &parent) {
            (Some(project), _) => Some(project.to_owned()),
            (None, Some(parent)) => self.inner.db.session(parent).await?.and_then(|record| record.project),
            (None, None) => None,
        };

        let info = wit::SessionInfo { session_id: id.to_owned(), origin: to_wit_origin(&origin) };
        let mut guidance = Vec::new();
        let mut inits = Vec::new();
        for loaded in &self.inner.plugins {
            if !loaded.info.grants.calls(Hook::BeforeSessionCreate, false) {
                continue;
            }
            let scope = Scope::new(Default::default(), &loaded.info.limits);
            let hook = "before-session-create";
            let (setup, call) = self
                .inner
                .sandbox
                .call(
                    || None,
                    &loaded.pre,
                    &loaded.info,
                    scope,
                    None,
                    hook,
                    |p, store| {
                        let info = info.clone();
                        Box::pin(
                            async move { p.scratchpad_plugin_hooks().call_before_session_create(store, &info).await },
                        )
                    },
                )
                .await?;
            check_value(&loaded.info, &loaded.tools, hook, &setup)?;
            let inherit = setup.inherit_parent_state && origin.parent().is_some();
            check_power(&loaded.info, hook, (!setup.injections.is_empty()).then_some(Power::Guidance))?;
            check_power(&loaded.info, hook, inherit.then_some(Power::Storage))?;
            guidance.extend(setup.injections.into_iter().map(|i| from_wit_injection(&loaded.info.name, i)));
            inits.push(PluginInit { plugin: loaded.info.name.clone(), inherit, writes: call.scope.into_writes() });
        }
        self.inner.db.create_session(id, &origin, project.as_deref(), &guidance, inits).await?;
        Ok(guidance)
    }

    /// The session `id` as stored.
    pub async fn session(&self, id: &str) -> Result<SessionRecord> {
        check_id("session id", id)?;
        self.inner.db.session(id).await?.ok_or_else(|| Error::SessionNotFound(id.to_owned()))
    }

    /// Every session, oldest first.
    pub async fn sessions(&self) -> Result<Vec<SessionRecord>> {
        self.inner.db.sessions().await
    }

    /// Every key every plugin stores for session `id`.
    pub async fn state(&self, id: &str) -> Result<Vec<StateEntry>> {
        self.session(id).await?;
        let rows = self.inner.db.state(id).await?;
        Ok(rows.into_iter().map(|(plugin, key, value)| StateEntry { plugin, key, value }).collect())
    }

    /// What the plugins published about session `id` (the `metadata` import; the context-pressure policy's
    /// `flushActioned`, say), ordered by plugin and key.
    pub async fn metadata(&self, id: &str) -> Result<Vec<MetadataEntry>> {
        self.session(id).await?;
        let rows = self.inner.db.metadata(id).await?;
        Ok(rows
            .into_iter()
            .map(|(plugin, key, value)| {
                let value = serde_json::from_str(&value).unwrap_or(serde_json::Value::String(value));
                MetadataEntry { plugin, key, value }
            })
            .collect())
    }

    /// Every offloaded observation of session `id` (any plugin, any turn), oldest first.
    pub async fn observations(&self, id: &str) -> Result<Vec<BlobEntry>> {
        self.session(id).await?;
        self.inner.db.blob_list(None, id, None).await
    }

    /// Up to `len` bytes (at most [`MAX_OBSERVATION_READ`]) of the offloaded observation `id`
    /// of `plugin` in session `id`, from byte `offset`; `None` when there is no such entry.
    /// Reads only what the range needs, so a reader pages a large entry without loading it.
    pub async fn read_observation(
        &self,
        session: &str,
        plugin: &str,
        id: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        check_id("session id", session)?;
        self.inner.db.blob_read(plugin, session, id, offset, len.min(MAX_OBSERVATION_READ)).await
    }

    /// The event log of session `id`, oldest first: its plugins' failed calls and the writes
    /// their storage quota refused, the newest
    /// [`MAX_EVENTS_PER_SESSION`](crate::MAX_EVENTS_PER_SESSION) kept. Diagnostics for
    /// people: no plugin can read them.
    pub async fn events(&self, id: &str) -> Result<Vec<crate::PluginEvent>> {
        self.session(id).await?;
        self.inner.db.events(id).await
    }

    /// How many events each plugin has in the sessions' logs, by kind: what went wrong with each plugin lately, across sessions (each log keeps its
    /// newest [`MAX_EVENTS_PER_SESSION`](crate::MAX_EVENTS_PER_SESSION)).
    pub async fn event_counts(&self) -> Result<Vec<crate::EventCount>> {
        let counts = self.inner.db.event_counts().await?;
        Ok(counts
            .into_iter()
            .map(|(plugin, kind, count)| crate::EventCount { plugin, kind: crate::EventKind::parse(&kind), count })
            .collect())
    }

    /// Appends an event to `session`'s log before the failed operation returns (a process that
    /// ends right after, like a hook's, keeps it). The call it describes already has its
    /// outcome: the write gets at most [`EVENT_WRITE_TIMEOUT`] (a failure may come from a
    /// database that is not answering), and a failure to record is logged, never returned.
    pub(crate) async fn record_event(
        &self,
        session: &str,
        plugin: &str,
        hook: &str,
        kind: crate::EventKind,
        message: &str,
    ) {
        let mut end = message.len().min(crate::MAX_EVENT_MESSAGE);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let event = crate::PluginEvent {
            plugin: plugin.to_owned(),
            hook: hook.to_owned(),
            kind,
            message: message[..end].to_owned(),
            at_ms: now_ms(),
        };
        match tokio::time::timeout(EVENT_WRITE_TIMEOUT, self.inner.db.record_event(session, event)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(session, "recording a plugin event: {error}"),
            Err(_) => tracing::warn!(session, "recording a plugin event: no answer from the database in time"),
        }
    }

    /// Removes every expired observation now (the host also does it at the start of every
    /// turn); returns how many.
    pub async fn gc(&self) -> Result<u32> {
        self.inner.db.blob_gc(None, now_ms() as u64).await
    }

    /// Linear memory of plugin `name`'s last call, read from the call's resource limiter.
    pub fn last_call_memory(&self, name: &str) -> Option<CallMemory> {
        let plugin = &self.inner.plugins[self.plugin_index(name)?];
        let (initial_bytes, peak_bytes) = *plugin.last_memory.lock().unwrap();
        Some(CallMemory { initial_bytes, peak_bytes })
    }

    /// The position of plugin `name` in the host's order.
    pub(crate) fn plugin_index(&self, name: &str) -> Option<usize> {
        self.inner.plugins.iter().position(|p| p.info.name == name)
    }

    /// Serializes calls on one session within this process.
    pub(crate) async fn lock(&self, session: &str) -> OwnedMutexGuard<()> {
        let mutex = {
            let mut locks = self.inner.locks.lock().unwrap();
            if locks.len() > 1024 {
                locks.retain(|_, weak| weak.strong_count() > 0);
            }
            match locks.get(session).and_then(Weak::upgrade) {
                Some(mutex) => mutex,
                None => {
                    let mutex = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(session.to_owned(), Arc::downgrade(&mutex));
                    mutex
                }
            }
        };
        mutex.lock_owned().await
    }
}

pub(crate) fn check_id(what: &'static str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid(what, "must not be empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(Error::invalid(what, format!("is {} bytes long; the limit is {MAX_ID_BYTES}", id.len())));
    }
    if id.chars().any(char::is_control) {
        return Err(Error::invalid(what, "must not contain control characters"));
    }
    Ok(())
}

fn to_wit_origin(origin: &Origin) -> wit::Origin {
    match origin {
        Origin::New => wit::Origin::New,
        Origin::Spawn { parent, copy } => {
            wit::Origin::Spawn(wit::SpawnOrigin { parent: parent.clone(), copy_requested: *copy })
        }
        Origin::Fork { parent } => wit::Origin::Fork(parent.clone()),
    }
}

pub(crate) fn from_wit_injection(plugin: &str, injection: wit::Injection) -> Injection {
    use crate::types::Placement;
    let placement = match injection.placement {
        wit::Placement::PrependSystem => Placement::PrependSystem,
        wit::Placement::AppendSystem => Placement::AppendSystem,
        wit::Placement::PrependContext => Placement::PrependContext,
        wit::Placement::AppendContext => Placement::AppendContext,
    };
    Injection { plugin: plugin.to_owned(), placement, text: injection.text }
}
