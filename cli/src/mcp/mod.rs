//! `scratchpad mcp`: an MCP server (official Rust SDK, `rmcp`), so any MCP client (Claude
//! Code, Claude Desktop, Goose, ...) can use the scratchpad with no code. On stdio it serves
//! one client on the `--session` session; with `--http ADDR` it serves many over Streamable
//! HTTP, each on the session its URL names (docs/mcp.md).
//!
//! One concern per file: `server` (the MCP handler of one connection), `stdio` (the stdio
//! front that answers bad input), `http`, `access` (token, Host, Origin), `batch` and `reply` (the
//! HTTP transport), `watch` (resource subscriptions), `logging` (log notifications),
//! `sampling` (checkpoints written by the client's model), `hook_tool` (agents' hook events
//! answered in-process).

// rmcp marks logging, sampling and resources/subscribe deprecated (SEP-2577: the 2026-07-28
// protocol replaces them); every protocol version this server negotiates uses them.
#![allow(deprecated)]

mod access;
mod batch;
mod hook_tool;
mod http;
pub(crate) mod logging;
mod reply;
mod sampling;
mod server;
mod stdio;
mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;

use scratchpad_host::{Host, HostConfig};

/// `scratchpad mcp`'s options.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct McpArgs {
    /// The session this server acts in (created when missing); over HTTP, the session of `/mcp`
    #[arg(long, default_value = "mcp")]
    pub(crate) session: String,
    /// Serve MCP over Streamable HTTP on this address (e.g. 127.0.0.1:8765; port 0: any free
    /// port) instead of stdio; clients connect to http://ADDR/mcp/{session}
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    /// With --http: a file whose first line is the bearer token every request must present
    /// (default: $SCRATCHPAD_MCP_TOKEN; required off loopback)
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) token_file: Option<PathBuf>,
    /// With --http: also accept this name in Host and Origin headers (repeatable)
    #[arg(long = "allowed-host", value_name = "NAME", requires = "http")]
    pub(crate) allowed_hosts: Vec<String>,
    /// Take the session id from this environment variable (e.g. CLAUDE_CODE_SESSION_ID, which
    /// Claude Code gives the MCP servers it starts) instead of --session
    #[arg(long, value_name = "VAR", conflicts_with = "session")]
    pub(crate) session_env: Option<String>,
    /// Offer the tools under API-safe names (`session.scratchpad` as `session_scratchpad`),
    /// for clients that pass MCP tool names to a model API as they are
    #[arg(long)]
    pub(crate) api_safe_names: bool,
    /// With --api-safe-names: the prefix the client shows this server's tools under (e.g.
    /// mcp__plugin_scratchpad_scratchpad__), so texts for the model name the tools that way
    #[arg(long, value_name = "PREFIX", default_value = "", requires = "api_safe_names")]
    pub(crate) tool_prefix: String,
    /// Offer every tool the plugins declare, not only those a turn offers: for clients that fix
    /// their tool list when they start (a tool called when its turn does not offer it refuses)
    #[arg(long)]
    pub(crate) declared_tools: bool,
    /// Run each tool call in the session's current turn (the one an agent's hooks entered,
    /// see `scratchpad hook`) instead of a turn of the connection's own
    #[arg(long)]
    pub(crate) follow_turn: bool,
    /// Take each tool call's session and turn from Codex's `_meta["x-codex-turn-metadata"]`
    /// (its `session_id` and `turn_id`; the session is created when missing). Stdio only: over
    /// HTTP a client's session is its URL's
    #[arg(long, conflicts_with = "http")]
    pub(crate) codex_turns: bool,
    /// Take each tool call's session and turn from its argument NAME (`{"session_id": S,
    /// "turn_id": T}`; the session is created when missing), which the agent's hook adds and
    /// which the tool never sees: for Gemini CLI, whose `BeforeTool` hook (`scratchpad hook
    /// --runtime gemini`) adds `scratchpad_turn`. A call without it does nothing and says why.
    /// Stdio only
    #[arg(long, value_name = "NAME", conflicts_with_all = ["http", "codex_turns"])]
    pub(crate) session_argument: Option<String>,
    /// Take a tool call's session and turn from its argument NAME when it has one (`{"session_id":
    /// S, "turn_id": T}`), which the agent's hook adds to a sub-agent's calls and the tool never
    /// sees: for Claude Code, which tells the server only the parent's session. S must be a
    /// sub-agent's session spawned from the server's session; a call without it acts as it
    /// would without this option. Stdio only
    #[arg(long, value_name = "NAME", conflicts_with_all = ["http", "codex_turns", "session_argument"])]
    pub(crate) agent_argument: Option<String>,
    /// Answer coding-agent hook events in this process, through the tool `hook` (not listed to
    /// the model; Claude Code's `mcp_tool` hooks call it, docs/claude-code.md) instead of a
    /// `scratchpad hook` process per event. Stdio only
    #[arg(long, conflicts_with = "http")]
    pub(crate) hook_tool: bool,
    /// The project the sessions it creates belong to, named by a directory: its git checkout's
    /// root, or itself (what recall keeps findings under) [default: the directory it runs in]
    #[arg(long, value_name = "DIR", conflicts_with = "no_project")]
    pub(crate) project: Option<std::path::PathBuf>,
    /// Create sessions in no project: nothing recalled, nothing kept for later sessions
    #[arg(long)]
    pub(crate) no_project: bool,
}

impl McpArgs {
    /// The session: from --session-env's variable, else --session.
    fn session(&self) -> anyhow::Result<String> {
        match &self.session_env {
            Some(var) => std::env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| anyhow::anyhow!("--session-env {var}: the environment variable {var} is not set")),
            None => Ok(self.session.clone()),
        }
    }

    /// The project of the sessions this server creates: --project's (an error when it names no
    /// directory), else the working directory's when it names one.
    fn project(&self) -> anyhow::Result<Option<String>> {
        if self.no_project {
            return Ok(None);
        }
        match &self.project {
            Some(dir) => {
                let dir = std::path::absolute(dir)?;
                Ok(Some(scratchpad_host::project_of_dir(&dir).map_err(|e| anyhow::anyhow!("--project: {e}"))?))
            }
            None => Ok(std::env::current_dir().ok().and_then(|dir| scratchpad_host::project_of_dir(dir).ok())),
        }
    }
}

/// Serves MCP on stdio or HTTP until the client disconnects (stdio) or the process is
/// interrupted (HTTP).
pub(crate) async fn run(config: HostConfig, args: McpArgs) -> anyhow::Result<()> {
    if let Some(notice) = crate::plugin_version::mismatch() {
        eprintln!("{notice}");
    }
    let clients = sampling::SamplingClients::default();
    let config = config.with_summarizer(sampling::SamplingSummarizer { clients: clients.clone() });
    // The token and the bind address are checked before anything is opened, so a refused
    // start changes nothing.
    let token = match args.http {
        Some(addr) => {
            let token = access::Token::load(args.token_file.as_deref())?;
            access::check_bind(addr, token.as_ref())?;
            token
        }
        None => None,
    };
    let session = args.session()?;
    let project = args.project()?;
    let subagents = config.subagents;
    let host = Host::open(config).await?;
    let names = server::Names::new(&host, args.api_safe_names, &args.tool_prefix);
    if args.hook_tool && names.offers(&host, hook_tool::NAME) {
        anyhow::bail!("--hook-tool: a plugin's tool is offered as `{}` already", hook_tool::NAME);
    }
    let guidance = names.text.rewrite(&server::open_session(&host, &session, project.as_deref()).await?);
    let hook_tool = args.hook_tool.then(|| hook_tool::answering(names.text.clone(), subagents));
    let shared = server::Shared {
        host: host.clone(),
        sampling: clients,
        logs: logging::LogClients::start(),
        watcher: watch::Watcher::new(host),
        names,
        follow_turn: args.follow_turn,
        declared_tools: args.declared_tools,
        codex_turns: args.codex_turns,
        session_argument: args.session_argument.clone(),
        agent_argument: args.agent_argument.clone(),
        hook_tool,
        project,
    };
    match args.http {
        None => stdio::serve(shared, session, guidance).await,
        Some(addr) => {
            let options = http::HttpOptions {
                addr,
                token,
                allowed_hosts: access::allowed_hosts(addr, &args.allowed_hosts),
                default_session: session,
            };
            http::serve(shared, options).await
        }
    }
}
