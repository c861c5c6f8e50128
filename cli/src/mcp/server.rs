//! One MCP client's connection to one session: the plugins' tools as MCP tools, the
//! scratchpad as the resource `scratchpad://session/{S}` (with subscriptions), the session
//! guidance as the prompt `session-guidance`, and `logging/setLevel`.
//!
//! Every connection acts in a turn of its own for its lifetime. A `tools/call` whose `_meta`
//! names a turn (`"scratchpad/turn": {"turn_id", "tokens_used"?, "context_window"?}`) acts in
//! that turn instead and then ends the model's step with `after_response`, so context-guard
//! sees the conversation's progress and asks for its checkpoints (written through the client's
//! model by sampling, see `sampling.rs`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use scratchpad_host::{Error, Host, ToolNames, ToolSpec, TurnContext};
use serde::Deserialize;

use super::logging::LogClients;
use super::sampling::SamplingClients;
use super::watch::Watcher;

/// The resource's one MIME type, in `resources/list` and `resources/read` alike.
pub(crate) const MIME_TYPE: &str = "text/markdown";
/// The prompt that carries the session guidance.
pub(crate) const GUIDANCE_PROMPT: &str = "session-guidance";

/// What every connection of one server process shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) host: Host,
    pub(crate) sampling: SamplingClients,
    pub(crate) logs: LogClients,
    pub(crate) watcher: Watcher,
    /// The names the client sees the tools under.
    pub(crate) names: Names,
    /// Run tool calls in the session's current turn.
    pub(crate) follow_turn: bool,
    /// Offer every declared tool.
    pub(crate) declared_tools: bool,
    /// Take each call's session and turn from Codex's turn metadata.
    pub(crate) codex_turns: bool,
    /// Take each call's session and turn from this argument, which the agent's hook added.
    pub(crate) session_argument: Option<String>,
    /// Take a call's session and turn from this argument when it has one: a sub-agent's
    /// session spawned from the connection's, which the agent's hook named.
    pub(crate) agent_argument: Option<String>,
    /// How hook events are answered through the unlisted tool `hook`, when it is served
    /// (`hook_tool.rs`).
    pub(crate) hook_tool: Option<crate::hook::Answering>,
    /// The project of the sessions it creates.
    pub(crate) project: Option<String>,
}

/// The turn Codex names in each `tools/call` (`_meta["x-codex-turn-metadata"]`; more fields are
/// sent and ignored), or a hook named in the call's `--session-argument`.
#[derive(Deserialize)]
struct CodexTurn {
    session_id: String,
    turn_id: String,
}

/// The result of a call that cannot say which session it acts in (`--session-argument`).
fn unnamed(why: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("scratchpad: {why}; nothing was done"))])
}

/// The tools' names as the client sees them ([`ToolNames`]).
#[derive(Clone, Default)]
pub(crate) struct Names {
    /// Offer API-safe names.
    api_safe: bool,
    /// The tool's name → the name the model sees, for texts.
    pub(crate) text: ToolNames,
}

impl Names {
    /// The names of `host`'s tools, API-safe when `api_safe`, behind `prefix` in texts.
    pub(crate) fn new(host: &Host, api_safe: bool, prefix: &str) -> Names {
        if !api_safe {
            return Names::default();
        }
        Names { api_safe, text: host.tool_names(prefix) }
    }

    /// The name the client is offered for `tool` (the host takes either name in calls).
    fn offered(&self, tool: ToolSpec) -> String {
        if self.api_safe { tool.api_name } else { tool.name }
    }

    /// Whether one of `host`'s declared tools is offered as `name`.
    pub(crate) fn offers(&self, host: &Host, name: &str) -> bool {
        host.plugins().into_iter().flat_map(|p| p.tools).any(|t| self.offered(t) == name)
    }
}

/// One client's connection, bound to one session.
pub(crate) struct Connection {
    shared: Shared,
    session: String,
    /// The session guidance, also the server's `instructions`.
    guidance: String,
    turn: TurnContext,
    /// This connection's key in the logging and sampling registries.
    key: u64,
    /// Subscriptions of this connection, ended when it is dropped.
    subscriptions: std::sync::Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        for task in self.subscriptions.lock().unwrap().drain(..) {
            task.abort();
        }
        self.shared.logs.remove(self.key);
        self.shared.sampling.remove(self.key);
    }
}

/// The session `id`, created when missing: its guidance, as text.
pub(crate) async fn open_session(host: &Host, id: &str, project: Option<&str>) -> Result<String, Error> {
    let guidance = crate::sessions::open(host, id, project).await?;
    Ok(scratchpad_host::Prompt::guidance(&guidance).render_system_only(""))
}

impl Connection {
    pub(crate) fn new(shared: Shared, session: String, guidance: String) -> Self {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let turn = TurnContext::new(&session, format!("mcp-{}-{}", now.as_micros(), std::process::id()));
        let key = shared.logs.key();
        Connection { shared, session, guidance, turn, key, subscriptions: std::sync::Mutex::new(Vec::new()) }
    }

    fn uri(&self) -> String {
        format!("scratchpad://session/{}", self.session)
    }

    /// The turn a sub-agent's call names in the argument `name` (`value`): a session spawned
    /// from this connection's; else why the call acts in none.
    async fn subagent_turn(&self, name: &str, value: serde_json::Value) -> Result<Result<TurnContext, String>, Error> {
        let turn = match serde_json::from_value::<CodexTurn>(value) {
            Ok(turn) => turn,
            Err(e) => return Ok(Err(format!("`{name}` names no session and turn: {e}"))),
        };
        let spawned = match self.shared.host.session(&turn.session_id).await {
            Ok(record) => record.origin.parent() == Some(self.session.as_str()),
            Err(Error::SessionNotFound(_) | Error::InvalidInput { .. }) => false,
            Err(other) => return Err(other),
        };
        if !spawned {
            return Ok(Err(format!("`{name}` names `{}`, no sub-agent of this session", turn.session_id)));
        }
        Ok(Ok(TurnContext::new(turn.session_id, turn.turn_id)))
    }

    /// The session of the sub-agent whose turn `turn` is, for a call naming its parent's
    /// `session` and its own turn (Codex): the session spawned from `session` whose current turn
    /// its hooks made `turn`. `None` for `session`'s own turn, or when no sub-agent has it.
    async fn sub_agent_in_turn(&self, session: &str, turn: &str) -> Result<Option<String>, Error> {
        let host = &self.shared.host;
        if host.session(session).await?.turn_id.as_deref() == Some(turn) {
            return Ok(None);
        }
        let sessions = host.sessions().await?;
        let spawned =
            sessions.into_iter().find(|s| s.origin.parent() == Some(session) && s.turn_id.as_deref() == Some(turn));
        Ok(spawned.map(|s| s.id))
    }

    /// The turn a tool call without a named turn acts in: the session's current one with
    /// `follow_turn` (once a turn started), else the connection's.
    async fn current_turn(&self) -> Result<TurnContext, Error> {
        if self.shared.follow_turn
            && let Some(turn_id) = self.shared.host.session(&self.session).await?.turn_id
        {
            return Ok(TurnContext::new(&self.session, turn_id));
        }
        Ok(self.turn.clone())
    }
}

fn internal(error: Error) -> McpError {
    McpError::internal_error(error.to_string(), None)
}

/// The turn a `tools/call` names in its `_meta`, if it names one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetaTurn {
    turn_id: String,
    #[serde(default)]
    tokens_used: Option<u64>,
    #[serde(default)]
    context_window: Option<u64>,
}

impl ServerHandler for Connection {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_logging()
            .build();
        let mut info = ServerConfig::new(capabilities);
        info.server_info = Implementation::new("scratchpad", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(format!(
            "{}\n\n(The prompt `{GUIDANCE_PROMPT}` carries this guidance; the resource `{}` is the scratchpad.)",
            self.guidance,
            self.uri()
        ));
        info
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let peer = context.peer;
        let sampling = peer.peer_info().is_some_and(|info| info.capabilities.sampling.is_some());
        if sampling {
            self.shared.sampling.register(self.key, &self.session, peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let specs = match self.shared.declared_tools {
            true => self.shared.host.plugins().into_iter().flat_map(|p| p.tools).collect(),
            false => self.shared.host.tools(&self.turn).await.map_err(internal)?,
        };
        let mut tools = Vec::new();
        for spec in specs {
            let schema: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&spec.parameters).unwrap_or_default();
            let names = &self.shared.names;
            let description = names.text.rewrite(&spec.description);
            tools.push(Tool::new(names.offered(spec), description, Arc::new(schema)));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(answering) = &self.shared.hook_tool
            && request.name == super::hook_tool::NAME
        {
            let arguments = request.arguments.unwrap_or_default();
            return Ok(super::hook_tool::call(&self.shared.host, answering, arguments).await.into());
        }
        let named = match context.meta.get("scratchpad/turn") {
            Some(value) => Some(serde_json::from_value::<MetaTurn>(value.clone()).map_err(|e| {
                McpError::invalid_params(
                    format!("`_meta.scratchpad/turn` must be {{\"turn_id\": str, \"tokens_used\"?: int, \"context_window\"?: int}}: {e}"),
                    None,
                )
            })?),
            None => None,
        };
        let codex = match context.meta.get("x-codex-turn-metadata") {
            Some(value) if self.shared.codex_turns => {
                Some(serde_json::from_value::<CodexTurn>(value.clone()).map_err(|e| {
                    McpError::invalid_params(
                        format!("`_meta.x-codex-turn-metadata` names no session and turn: {e}"),
                        None,
                    )
                })?)
            }
            _ => None,
        };
        let mut arguments = request.arguments.unwrap_or_default();
        let codex = match &self.shared.session_argument {
            Some(name) => match arguments.remove(name).map(serde_json::from_value::<CodexTurn>) {
                Some(Ok(turn)) => Some(turn),
                // The agent's hook did not run: the call acts in no session rather than in a
                // shared one, and the model reads why.
                Some(Err(e)) => return Ok(unnamed(format!("`{name}` names no session and turn: {e}")).into()),
                None => {
                    return Ok(
                        unnamed(format!("the call has no `{name}`: the agent's hook did not name its session")).into()
                    );
                }
            },
            None => codex,
        };
        let agent = match &self.shared.agent_argument {
            Some(name) => match arguments.remove(name) {
                Some(value) => match self.subagent_turn(name, value).await.map_err(internal)? {
                    Ok(turn) => Some(turn),
                    Err(why) => return Ok(unnamed(why).into()),
                },
                None => None,
            },
            None => None,
        };
        let turn = match (&named, codex, agent) {
            (Some(meta), _, _) => TurnContext {
                session_id: self.session.clone(),
                turn_id: meta.turn_id.clone(),
                tokens_used: meta.tokens_used,
                context_window: meta.context_window,
            },
            (None, Some(codex), _) => {
                let project = self.shared.project.as_deref();
                crate::sessions::open(&self.shared.host, &codex.session_id, project).await.map_err(internal)?;
                let sub_agent = match self.shared.codex_turns {
                    true => self.sub_agent_in_turn(&codex.session_id, &codex.turn_id).await.map_err(internal)?,
                    false => None,
                };
                TurnContext::new(sub_agent.unwrap_or(codex.session_id), codex.turn_id)
            }
            (None, None, Some(agent)) => agent,
            (None, None, None) => self.current_turn().await.map_err(internal)?,
        };
        let arguments = serde_json::Value::Object(arguments).to_string();
        let result = match self.shared.host.call_tool(&turn, &request.name, &arguments).await {
            Ok(output) => {
                CallToolResult::success(vec![ContentBlock::text(self.shared.names.text.rewrite(&output.content))])
            }
            // A tool's refusal is a result the model reads and corrects, not a protocol error.
            Err(Error::Tool { error, .. }) => {
                let text = format!("{}: {}", error.kind.as_str(), error.message);
                CallToolResult::error(vec![ContentBlock::text(self.shared.names.text.rewrite(&text))])
            }
            Err(Error::UnknownTool(name)) => {
                return Err(McpError::invalid_params(format!("no tool named `{name}`"), None));
            }
            Err(other) => return Err(internal(other)),
        };
        if named.is_some() {
            // The model's step ended: plugins record it, and context-guard may ask for a
            // checkpoint, which the client's model writes. A failed checkpoint keeps the
            // turn's hooks and the tool's result; the client hears of it as a log message.
            if let Err(error) = self.shared.host.after_response(&turn, "").await {
                tracing::warn!(session = %self.session, "after the tool call: {error}");
            }
        }
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resource = Resource::new(self.uri(), "scratchpad")
            .with_description(format!("The scratchpad of session {}: notes, plan and refs", self.session))
            .with_mime_type(MIME_TYPE);
        Ok(ListResourcesResult::with_all_items(vec![resource]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != self.uri() {
            return Err(McpError::resource_not_found(format!("no resource `{}`", request.uri), None));
        }
        let text = self.shared.host.render_scratchpad(&self.session).await.map_err(internal)?;
        let contents = ResourceContents::text(text, request.uri).with_mime_type(MIME_TYPE);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != self.uri() {
            return Err(McpError::resource_not_found(format!("no resource `{}`", request.uri), None));
        }
        let task = self.shared.watcher.subscribe(&self.session, request.uri, context.peer);
        self.subscriptions.lock().unwrap().push(task);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != self.uri() {
            return Err(McpError::resource_not_found(format!("no resource `{}`", request.uri), None));
        }
        for task in self.subscriptions.lock().unwrap().drain(..) {
            task.abort();
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let description = format!("The standing guidance of session {}, for the system prompt", self.session);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(GUIDANCE_PROMPT, Some(description), None)]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != GUIDANCE_PROMPT {
            return Err(McpError::invalid_params(
                format!("no prompt named `{}`; this server has `{GUIDANCE_PROMPT}`", request.name),
                None,
            ));
        }
        let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, self.guidance.clone())])
            .with_description(format!("Session {}'s guidance", self.session));
        Ok(result.into())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shared.logs.set_level(self.key, &context.peer, request.level);
        Ok(())
    }
}
