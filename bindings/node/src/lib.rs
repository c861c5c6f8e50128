//! The scratchpad host as a Node.js addon (`NativeHost`). The same host as in Rust, with every
//! limit: this module is thin on purpose. It takes and returns JSON text for structured values,
//! and `index.js` gives them JavaScript shapes, checks argument types and raises the error
//! classes, so the API lives in one place. A call runs like a JavaScript `async` function, on
//! the JavaScript thread between its waits ([`executor`]).
//!
//! A host error reaches JavaScript as an `Error` whose message is [`ERROR_PREFIX`] followed by
//! JSON (`{"class", "message", "attributes"}`); `index.js` turns it into its class.

use std::sync::Mutex;

use napi::bindgen_prelude::{AsyncBlock, AsyncBlockBuilder, Buffer, Result, ToNapiValue, Unknown};
use napi::{Env, Error, Status};
use napi_derive::napi;
use scratchpad_embedding as embedding;
use scratchpad_host::{Host, Observation, ToolCall, ToolNames, TurnContext};
use serde_json::{Value, json};

mod executor;

/// What starts the message of an error `index.js` turns into one of its classes.
const ERROR_PREFIX: &str = "scratchpad-error:";

/// An error `index.js` raises as `class`, with `attributes` (`code` among them) on it.
fn thrown(status: Status, class: &str, message: &str, attributes: Value) -> Error {
    let detail = json!({ "class": class, "message": message, "attributes": attributes });
    Error::new(status, format!("{ERROR_PREFIX}{detail}"))
}

/// A host error for `index.js`.
fn raise(error: scratchpad_host::Error) -> Error {
    let raised = embedding::raised(&error);
    let attributes: serde_json::Map<String, Value> =
        raised.attributes.into_iter().map(|(name, text)| (name.to_owned(), Value::String(text))).collect();
    thrown(Status::GenericFailure, raised.class.name(), &raised.message, Value::Object(attributes))
}

/// A malformed argument (`index.js` checks types first): a configuration file that does not
/// read, a plugin reference that does not parse.
fn invalid(message: String) -> Error {
    thrown(Status::InvalidArg, "ScratchpadError", &message, json!({ "code": "invalid-input" }))
}

/// Runs `work` on this (the JavaScript) thread until it waits ([`executor`]): its value when it
/// did not wait, else a promise of it (`index.js` awaits either). The methods take what the work
/// needs (the host's handle included) before calling this, so a call made before `close`
/// finishes.
fn answer<'env, T: ToNapiValue + Send + 'static>(
    env: &'env Env,
    work: impl Future<Output = std::result::Result<T, scratchpad_host::Error>> + Send + 'static,
) -> Result<Unknown<'env>> {
    executor::run(env, async move { work.await.map_err(raise) })
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("{what}: {e}")))
}

fn to_json(value: impl serde::Serialize) -> String {
    serde_json::to_string(&value).expect("host values serialize")
}

/// Opens the database at `location` (a SQLite path or a `postgres://` URL) with the
/// configuration file `config` (TOML, optional) and more component files or `oci://`
/// references `plugins`.
#[napi]
pub async fn open(location: String, config: Option<String>, plugins: Vec<String>) -> Result<NativeHost> {
    let host_config = embedding::config(&location, config.as_deref(), &plugins).map_err(invalid)?;
    let host = Host::open(host_config).await.map_err(raise)?;
    Ok(NativeHost { host: Mutex::new(Some(host)) })
}

/// A host over one database, with its plugins loaded; `close` lets it go.
#[napi]
pub struct NativeHost {
    host: Mutex<Option<Host>>,
}

#[napi]
impl NativeHost {
    /// The host (a cheap handle), or the error of a closed one. Calls already running keep
    /// their handle and finish.
    fn host(&self) -> Result<Host> {
        let host = self.host.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        host.clone().ok_or_else(|| {
            let message = "the host is closed; open another with Host.open";
            thrown(Status::GenericFailure, "ScratchpadError", message, json!({ "code": "closed" }))
        })
    }

    /// Lets the host go: the database connections close once the calls still running end.
    #[napi]
    pub fn close(&self) {
        self.host.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    }

    /// The loaded tools as a model sees them: `prefix` + each tool's API name.
    #[napi]
    pub fn tool_names(&self, prefix: String) -> Result<NativeToolNames> {
        Ok(NativeToolNames { names: self.host()?.tool_names(&prefix) })
    }

    /// The loaded plugins and their tools, as JSON.
    #[napi]
    pub fn plugins(&self) -> Result<String> {
        Ok(to_json(self.host()?.plugins()))
    }

    /// Creates `session` in `project` (refused when it exists): the standing guidance, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn create_session<'env>(
        &self,
        env: &'env Env,
        session: String,
        project: Option<String>,
    ) -> Result<Unknown<'env>> {
        let host = self.host()?;
        let origin = scratchpad_host::Origin::New;
        answer(env, async move { host.create_session_in(&session, origin, project.as_deref()).await.map(to_json) })
    }

    /// `session`, created in `project` when missing: its standing guidance, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn open_session<'env>(
        &self,
        env: &'env Env,
        session: String,
        project: Option<String>,
    ) -> Result<Unknown<'env>> {
        let host = self.host()?;
        answer(env, async move { embedding::open_session(&host, &session, project.as_deref()).await.map(to_json) })
    }

    /// The documents of `project` matching `query`, at most `limit` per plugin, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn recall_search<'env>(
        &self,
        env: &'env Env,
        project: String,
        query: String,
        limit: u32,
    ) -> Result<Unknown<'env>> {
        let host = self.host()?;
        answer(env, async move { host.recall_search(&project, &query, limit).await.map(to_json) })
    }

    /// The injections a new session of `project` would receive in its first prompt for
    /// `message`, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn recall_preview<'env>(&self, env: &'env Env, project: String, message: String) -> Result<Unknown<'env>> {
        let host = self.host()?;
        answer(env, async move { host.preview_new_session(&project, &message).await.map(|p| to_json(p.injections)) })
    }

    /// The tools offered in `turn` (JSON), as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn tools<'env>(&self, env: &'env Env, turn: String) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.tools(&turn).await.map(to_json) })
    }

    /// Calls tool `name` with `arguments` (JSON text): its output text.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        turn: String,
        name: String,
        arguments: String,
    ) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.call_tool(&turn, &name, &arguments).await.map(|out| out.content) })
    }

    /// The arguments (JSON text) to run the agent's tool call with, after every plugin's
    /// `before-tool-call`.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn before_tool_call<'env>(
        &self,
        env: &'env Env,
        turn: String,
        name: String,
        arguments: String,
        step: u32,
    ) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.before_tool_call(&turn, &ToolCall::new(name, arguments, step)).await })
    }

    /// What the model should see instead of the tool's `result`, if anything.
    #[napi(ts_return_type = "string | null | Promise<string | null>")]
    #[allow(clippy::too_many_arguments)]
    pub fn after_tool_result<'env>(
        &self,
        env: &'env Env,
        turn: String,
        name: String,
        arguments: String,
        step: u32,
        result: Buffer,
        metadata: String,
    ) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        let metadata: Value = parse("metadata", &metadata)?;
        let observation = Observation::bytes(result.to_vec()).with_metadata(metadata);
        let call = ToolCall::new(name, arguments, step);
        answer(
            env,
            async move { host.after_tool_result(&turn, &call, &observation).await.map(|view| view.replacement) },
        )
    }

    /// Every plugin's `after-response` on the turn's final reply.
    #[napi(ts_return_type = "void | Promise<void>")]
    pub fn after_response<'env>(&self, env: &'env Env, turn: String, text: String) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.after_response(&turn, &text).await })
    }

    /// The injections for the user's `message`, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn before_query<'env>(&self, env: &'env Env, turn: String, message: String) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.before_query(&turn, &message).await.map(|prompt| to_json(prompt.injections)) })
    }

    /// The warnings to give the model before compacting, as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn before_compaction<'env>(&self, env: &'env Env, turn: String) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.before_compaction(&turn).await.map(to_json) })
    }

    /// Tells the plugins the conversation was compacted.
    #[napi(ts_return_type = "void | Promise<void>")]
    pub fn after_compaction<'env>(&self, env: &'env Env, turn: String) -> Result<Unknown<'env>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        answer(env, async move { host.after_compaction(&turn).await })
    }

    /// The session and every plugin's stored state (text values as text), as JSON.
    #[napi(ts_return_type = "string | Promise<string>")]
    pub fn show<'env>(&self, env: &'env Env, session: String) -> Result<Unknown<'env>> {
        let host = self.host()?;
        answer(env, async move { embedding::show(&host, &session).await.map(to_json) })
    }

    /// For the package's benchmark (`bench.mjs`): `op` `n` times, timed in Rust with no
    /// JavaScript in between (see `scratchpad_embedding::time_in_rust`): each call's
    /// nanoseconds.
    #[napi(ts_return_type = "Promise<number[]>")]
    pub fn time_in_rust(
        &self,
        env: &Env,
        op: String,
        turn: String,
        argument: String,
        n: u32,
    ) -> Result<AsyncBlock<Vec<f64>>> {
        let (host, turn) = (self.host()?, parse::<TurnContext>("turn", &turn)?);
        AsyncBlockBuilder::new(async move {
            let times = embedding::time_in_rust(&host, &op, &turn, &argument, n).await.map_err(raise)?;
            Ok(times.into_iter().map(|ns| ns as f64).collect())
        })
        .build(env)
    }
}

/// Tools and the names a model sees for them (`scratchpad_host::ToolNames`).
#[napi]
pub struct NativeToolNames {
    names: ToolNames,
}

#[napi]
impl NativeToolNames {
    /// The model-visible names of `tools` behind `prefix`; two tools with one API name, or an
    /// empty name, throw.
    #[napi(factory)]
    pub fn create(tools: Vec<String>, prefix: String) -> Result<NativeToolNames> {
        let names = ToolNames::new(tools.iter().map(String::as_str), &prefix).map_err(|e| invalid(e.to_string()))?;
        Ok(NativeToolNames { names })
    }

    /// The name the model sees for `tool`, or null.
    #[napi]
    pub fn model_name(&self, tool: String) -> Option<String> {
        self.names.model_name(&tool).map(str::to_owned)
    }

    /// The tool behind a model-visible `name`, or null.
    #[napi]
    pub fn tool(&self, name: String) -> Option<String> {
        self.names.tool(&name).map(str::to_owned)
    }

    /// `text` with each whole-word mention of a tool named as the model sees it.
    #[napi]
    pub fn rewrite(&self, text: String) -> String {
        self.names.rewrite(&text)
    }

    /// Every tool and its model-visible name, as JSON (`[[tool, name]]`).
    #[napi]
    pub fn items(&self) -> String {
        to_json(self.names.iter().collect::<Vec<_>>())
    }
}

/// The project of the directory `dir` (absolute): the root of its git checkout (a linked
/// worktree's main checkout), else the directory itself.
#[napi]
pub fn project_of_dir(dir: String) -> Result<String> {
    scratchpad_host::project_of_dir(dir).map_err(raise)
}

/// Throws unless `key` may name a project.
#[napi]
pub fn check_project(key: String) -> Result<()> {
    scratchpad_host::check_project(&key).map_err(raise)
}

/// `name` as model APIs accept it (`session.scratchpad` → `session_scratchpad`).
#[napi]
pub fn api_tool_name(name: String) -> Result<String> {
    scratchpad_host::api_tool_name(&name).map_err(|e| invalid(e.to_string()))
}

/// The texts of one placement of a prompt (its injections as JSON), joined.
#[napi]
pub fn prompt_text(injections: String, placement: String) -> Result<String> {
    let prompt = embedding::prompt(&injections).map_err(invalid)?;
    Ok(prompt.text(embedding::placement(&placement).map_err(invalid)?))
}

/// A prompt (its injections as JSON) rendered around `system` and `message`, as JSON
/// (`{system, user}`).
#[napi]
pub fn render_prompt(injections: String, system: String, message: String) -> Result<String> {
    Ok(to_json(embedding::prompt(&injections).map_err(invalid)?.render(&system, &message)))
}

/// A prompt (its injections as JSON) rendered into `system` alone, for a call with no user
/// message.
#[napi]
pub fn render_system_only(injections: String, system: String) -> Result<String> {
    Ok(embedding::prompt(&injections).map_err(invalid)?.render_system_only(&system))
}
