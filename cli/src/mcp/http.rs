//! `scratchpad mcp --http ADDR`: MCP over Streamable HTTP with the official SDK's transport
//! (rmcp's `StreamableHttpService`, served by hyper), beside stdio.
//!
//! Each client names its session in the URL: `/mcp/{session}` (`/mcp` is the `--session`
//! one). Every session gets its own rmcp service, so MCP sessions (`Mcp-Session-Id`) of one
//! scratchpad session never see another's; several clients may share a session, each with its
//! own MCP session. Before anything reaches rmcp or the database, a request must present the
//! bearer token (when one is configured) and come with an accepted `Host` and `Origin`
//! (rmcp checks those again), so a refused request changes nothing.
//!
//! `GET /metrics`, behind the same checks, is the host's metrics in the Prometheus text format
//! (docs/metrics.md).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::access::{self, Token};
use super::batch;
use super::reply::{self, Body, refuse};
use super::server::{Connection, Shared, open_session};

/// The largest request body accepted (a tool call's arguments, a batch of them).
const MAX_BODY: usize = 4 << 20;

type Service = StreamableHttpService<Connection, LocalSessionManager>;

/// How the HTTP server is reached and guarded.
pub(crate) struct HttpOptions {
    pub(crate) addr: SocketAddr,
    pub(crate) token: Option<Token>,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) default_session: String,
}

struct Router {
    shared: Shared,
    token: Option<Token>,
    allowed_hosts: Vec<String>,
    config: StreamableHttpServerConfig,
    default_session: String,
    services: Mutex<HashMap<String, Service>>,
}

/// Serves until the process is interrupted. Prints the URL it serves on (with the port the
/// system chose for port 0) as the first line of stdout.
pub(crate) async fn serve(shared: Shared, options: HttpOptions) -> anyhow::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(options.addr).await.with_context(|| format!("listening on {}", options.addr))?;
    let local = listener.local_addr()?;
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(access::allowed_origins(&options.allowed_hosts))
        .enforce_origin_validation();
    config.max_request_body_bytes = MAX_BODY;
    let router = Arc::new(Router {
        shared,
        token: options.token,
        allowed_hosts: options.allowed_hosts,
        config,
        default_session: options.default_session,
        services: Mutex::new(HashMap::new()),
    });
    println!("http://{local}/mcp");
    use std::io::Write as _;
    std::io::stdout().flush()?;
    tracing::info!("MCP over Streamable HTTP on http://{local}/mcp/{{session}}");
    crate::http_server::serve(listener, router, |router, request| async move { router.route(request).await }).await
}

impl Router {
    async fn route(&self, request: Request<Incoming>) -> Response<Body> {
        if let Some(token) = &self.token {
            let presented = request.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes());
            if !token.admits(presented) {
                let mut response =
                    refuse(StatusCode::UNAUTHORIZED, -32001, "unauthorized: send `Authorization: Bearer <token>`");
                response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
                return response;
            }
        }
        if let Err(message) = self.check_host_and_origin(&request) {
            return refuse(StatusCode::FORBIDDEN, -32600, &message);
        }
        let path = request.uri().path();
        if path == "/metrics" {
            return match *request.method() {
                Method::GET => reply::metrics(self.shared.host.metrics().render()),
                _ => refuse(StatusCode::METHOD_NOT_ALLOWED, -32600, "the metrics are read with GET"),
            };
        }
        let session = match path.strip_prefix("/mcp") {
            Some("" | "/") => self.default_session.clone(),
            Some(rest) if rest.starts_with('/') && !rest[1..].contains('/') => rest[1..].to_owned(),
            _ => return refuse(StatusCode::NOT_FOUND, -32600, "not found: MCP is served at /mcp/{session}"),
        };
        let service = match self.service(&session).await {
            Ok(service) => service,
            Err(response) => return response,
        };
        if request.method() != Method::POST {
            return service.handle(request).await;
        }
        // POST bodies are read here so a JSON-RPC batch can be told apart (rmcp takes one
        // message per request).
        let (parts, body) = request.into_parts();
        let bytes = match Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, -32600, "the request body is too large"),
        };
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return batch::handle(&service, parts, bytes).await;
        }
        service.handle(Request::from_parts(parts, Full::new(bytes))).await
    }

    /// The rmcp service of `session`, created (with the session) on first use.
    async fn service(&self, session: &str) -> Result<Service, Response<Body>> {
        if let Some(service) = self.services.lock().unwrap().get(session) {
            return Ok(service.clone());
        }
        let guidance = match open_session(&self.shared.host, session, self.shared.project.as_deref()).await {
            Ok(guidance) => guidance,
            Err(scratchpad_host::Error::InvalidInput { .. }) => {
                return Err(refuse(StatusCode::BAD_REQUEST, -32602, &format!("`{session}` is not a valid session id")));
            }
            Err(error) => return Err(refuse(StatusCode::INTERNAL_SERVER_ERROR, -32603, &error.to_string())),
        };
        let (shared, name) = (self.shared.clone(), session.to_owned());
        let factory = move || Ok(Connection::new(shared.clone(), name.clone(), guidance.clone()));
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), self.config.clone());
        Ok(self.services.lock().unwrap().entry(session.to_owned()).or_insert(service).clone())
    }

    /// `Host` must name an allowed host; `Origin`, when a browser sends one, too.
    fn check_host_and_origin(&self, request: &Request<Incoming>) -> Result<(), String> {
        let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !self.allowed(authority_host(host)) {
            return Err("forbidden: the Host header names a host this server does not serve".into());
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
            if !authority.is_some_and(|a| self.allowed(authority_host(a))) {
                return Err("forbidden: requests from this Origin are refused (DNS rebinding protection)".into());
            }
        }
        Ok(())
    }

    fn allowed(&self, host: &str) -> bool {
        !host.is_empty() && self.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host))
    }
}

/// The host of `host[:port]` or `[v6]:port`, without brackets.
fn authority_host(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}
