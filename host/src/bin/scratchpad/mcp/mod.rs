//! `scratchpad mcp --session S`: an MCP server on stdio (official Rust SDK, `rmcp`), so any
//! MCP client (Claude Code, Claude Desktop, Goose, ...) can use the scratchpad with no code.
//!
//! One session per server process, created when missing; every request acts in one turn of
//! that session for the life of the process. The plugins' tools are the MCP tools, and the
//! scratchpad's contents are the resource `scratchpad://session/{S}`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use scratchpad_host::{Error, Host, Origin, TurnContext};

struct Server {
    host: Host,
    session: String,
    turn: TurnContext,
    guidance: String,
}

impl Server {
    fn uri(&self) -> String {
        format!("scratchpad://session/{}", self.session)
    }
}

fn internal(error: Error) -> McpError {
    McpError::internal_error(error.to_string(), None)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build());
        info.server_info = Implementation::new("scratchpad", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(self.guidance.clone());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = Vec::new();
        for spec in self.host.tools(&self.turn).await.map_err(internal)? {
            let schema: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&spec.parameters).unwrap_or_default();
            tools.push(Tool::new(spec.name, spec.description, Arc::new(schema)));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        match self.host.call_tool(&self.turn, &request.name, &arguments).await {
            Ok(output) => Ok(CallToolResult::success(vec![ContentBlock::text(output.content)]).into()),
            // A tool's refusal is a result the model reads and corrects, not a protocol error.
            Err(Error::Tool { error, .. }) => {
                let text = format!("{}: {}", error.kind.as_str(), error.message);
                Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
            }
            Err(Error::UnknownTool(name)) => Err(McpError::invalid_params(format!("no tool named `{name}`"), None)),
            Err(other) => Err(internal(other)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resource = Resource::new(self.uri(), "scratchpad")
            .with_description(format!("The scratchpad of session {}: notes, plan and refs", self.session))
            .with_mime_type("text/markdown");
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
        let text = self.host.render_scratchpad(&self.session).await.map_err(internal)?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}

/// Serves MCP on stdio for `session` until the client disconnects.
pub(crate) async fn run(host: Host, session: String) -> anyhow::Result<()> {
    let guidance = match host.create_session(&session, Origin::New).await {
        Ok(guidance) => guidance,
        Err(Error::SessionExists(_)) => host.session(&session).await?.guidance,
        Err(other) => return Err(other.into()),
    };
    let guidance = guidance.into_iter().map(|i| i.text).collect::<Vec<_>>().join("\n\n");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let turn = TurnContext::new(&session, format!("mcp-{}-{}", now.as_millis(), std::process::id()));
    let server = Server { host, session, turn, guidance };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
