//! `scratchpad ui`: a local web viewer of what the agent's memory holds, on the same database
//! (SQLite or PostgreSQL), read-only. The pages are in [`pages`]; this file serves them.
//!
//! Access, the Jupyter way: the server binds 127.0.0.1 by default and prints a URL with a
//! random token. A request must carry the token, in the URL (`?token=`) or in the cookie the
//! first such request sets (then it is redirected to the same URL without the token, so the
//! token leaves the address bar and never goes out in a `Referer`); anything else gets 401.
//! The `Host` header must name a loopback name or the bound address (DNS rebinding), and the
//! pages allow no inline script (`Content-Security-Policy`), so even text that escaped the
//! escaping could not run. Nothing here writes: the next prompt comes from
//! [`Host::preview_query`].

mod html;
mod pages;
mod project;
mod reader;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use scratchpad_host::{Host, HostConfig, PluginSpec};
use subtle::ConstantTimeEq;

/// `scratchpad ui`'s options.
#[derive(clap::Args)]
pub(crate) struct UiArgs {
    /// Where to listen; port 0 picks a free one. Off loopback, anyone who can reach the port
    /// and has the printed URL can read every session
    #[arg(long, default_value = "127.0.0.1:8377", value_name = "IP:PORT")]
    addr: SocketAddr,
}

type Body = Full<Bytes>;

struct Viewer {
    host: Host,
    plugins: Vec<PluginSpec>,
    token: String,
    cookie: String,
    allowed_hosts: Vec<String>,
}

/// Opens the host, binds, prints the URL (the first line of stdout) and serves until
/// interrupted.
pub(crate) async fn run(config: HostConfig, args: UiArgs) -> anyhow::Result<()> {
    let listener = match tokio::net::TcpListener::bind(args.addr).await {
        Ok(listener) => listener,
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "port {} on {} is in use; pick another with --addr {}:PORT (port 0 picks a free one)",
            args.addr.port(),
            args.addr.ip(),
            args.addr.ip()
        ),
        Err(error) => return Err(error).with_context(|| format!("listening on {}", args.addr)),
    };
    let local = listener.local_addr()?;
    let plugins = config.plugins.clone();
    let host = Host::open(config).await?;
    let token = new_token()?;
    let mut allowed_hosts = vec!["127.0.0.1".to_owned(), "localhost".to_owned(), "::1".to_owned()];
    allowed_hosts.push(local.ip().to_string());
    let viewer =
        Arc::new(Viewer { host, plugins, cookie: format!("scratchpad_ui_{}", local.port()), token, allowed_hosts });
    let shown = if local.ip().is_ipv6() { format!("[{}]:{}", local.ip(), local.port()) } else { local.to_string() };
    println!("http://{shown}/?token={}", viewer.token);
    use std::io::Write as _;
    std::io::stdout().flush()?;
    eprintln!("scratchpad ui: serving {} read-only; open the URL above (Ctrl-C stops)", viewer.host.database());
    crate::http_server::serve(listener, viewer, |viewer, request| async move { viewer.answer(request).await }).await
}

/// 128 random bits as hex.
fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the access token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The query string's pairs.
struct Params(Vec<(String, String)>);

impl Params {
    fn of(request: &Request<Incoming>) -> Params {
        Params(form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes()).into_owned().collect())
    }

    /// The first value of `name`.
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

impl Viewer {
    async fn answer(&self, request: Request<Incoming>) -> Response<Body> {
        let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !self.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host_name(host))) {
            return plain(StatusCode::FORBIDDEN, "forbidden: the Host header names a host this viewer does not serve");
        }
        let params = Params::of(&request);
        if let Some(token) = params.get("token") {
            if !self.admits(token) {
                return unauthorized();
            }
            // Into the cookie, and out of the address bar.
            let rest: Vec<&(String, String)> = params.0.iter().filter(|(k, _)| k != "token").collect();
            let mut location = request.uri().path().to_owned();
            if !rest.is_empty() {
                location.push('?');
                location.push_str(
                    &form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(rest.iter().map(|(k, v)| (k, v)))
                        .finish(),
                );
            }
            let mut response = plain(StatusCode::SEE_OTHER, "");
            let headers = response.headers_mut();
            headers.insert(
                header::LOCATION,
                header::HeaderValue::from_str(&location).unwrap_or(header::HeaderValue::from_static("/")),
            );
            let cookie = format!("{}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie, self.token);
            headers.insert(header::SET_COOKIE, header::HeaderValue::from_str(&cookie).expect("hex and ASCII"));
            return response;
        }
        // The style sheet and the script hold no data: served to anyone (the 401 page uses them).
        if !request.uri().path().starts_with("/static/") && !self.cookie_admits(&request) {
            return unauthorized();
        }
        if request.method() != Method::GET {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "the viewer is read-only: GET only");
        }
        match self.route(request.uri().path(), &params).await {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!("viewer: {error:#}");
                html(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &html::page(
                        "error",
                        None,
                        &format!("<h1>Error</h1><pre>{}</pre>", html::esc(&format!("{error:#}"))),
                    ),
                )
            }
        }
    }

    async fn route(&self, path: &str, params: &Params) -> anyhow::Result<Response<Body>> {
        let param = |name: &str| params.get(name);
        let segments: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        let fragment = param("fragment").is_some();
        let page = match segments.as_slice() {
            [""] => Some(pages::sessions(&self.host, param("q").unwrap_or_default()).await?),
            ["s", id] => pages::session(&self.host, id).await?,
            ["s", session, "o", plugin, id] => {
                let offset = param("offset").and_then(|o| o.parse().ok()).unwrap_or(0);
                pages::observation(&self.host, session, plugin, id, offset, param("grep").unwrap_or_default()).await?
            }
            ["plugins"] => Some(pages::plugins(&self.host, &self.plugins).await?),
            ["p"] => {
                let (q, message) = (param("q").unwrap_or_default(), param("message").unwrap_or_default());
                project::project(&self.host, param("project").unwrap_or_default(), q, message).await?
            }
            ["stamp"] => {
                let stamp = match param("s") {
                    Some(id) => pages::session_stamp(&self.host, id).await?.unwrap_or_else(|| "gone".into()),
                    None => pages::sessions_stamp(&self.host).await?,
                };
                return Ok(plain(StatusCode::OK, &stamp));
            }
            ["metrics"] => {
                let mut response = plain(StatusCode::OK, &self.host.metrics().render());
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                );
                return Ok(response);
            }
            ["static", "viewer.css"] => return Ok(asset(html::CSS, "text/css; charset=utf-8")),
            ["static", "live.js"] => return Ok(asset(html::LIVE_JS, "text/javascript; charset=utf-8")),
            _ => None,
        };
        Ok(match page {
            Some(page) if fragment => html(StatusCode::OK, &page.main),
            Some(page) => html(StatusCode::OK, &html::page(&page.title, page.stamp.as_deref(), &page.main)),
            None => {
                let what = match segments.as_slice() {
                    ["s", id, ..] => format!("No session or entry here (session `{id}`)."),
                    _ => "Nothing here.".to_owned(),
                };
                html(
                    StatusCode::NOT_FOUND,
                    &html::page(
                        "not found",
                        None,
                        &format!("<h1>Not found</h1><p>{}</p><p><a href=\"/\">All sessions</a></p>", html::esc(&what)),
                    ),
                )
            }
        })
    }

    fn admits(&self, presented: &str) -> bool {
        presented.len() == self.token.len() && bool::from(presented.as_bytes().ct_eq(self.token.as_bytes()))
    }

    fn cookie_admits(&self, request: &Request<Incoming>) -> bool {
        request
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == self.cookie && self.admits(value))
    }
}

/// The host of a `Host` header (`name[:port]` or `[v6]:port`), without brackets or port.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority.split(':').next().unwrap_or_default()
}

/// Headers every answer carries: no caching, no sniffing, no referrer, no framing, and no
/// script but the viewer's own file.
fn secure(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, header::HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, header::HeaderValue::from_static("no-referrer"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; \
             img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    response
}

fn with_type(status: StatusCode, body: String, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    secure(response)
}

fn html(status: StatusCode, body: &str) -> Response<Body> {
    with_type(status, body.to_owned(), "text/html; charset=utf-8")
}

fn plain(status: StatusCode, body: &str) -> Response<Body> {
    with_type(status, body.to_owned(), "text/plain; charset=utf-8")
}

fn asset(body: &'static str, content_type: &'static str) -> Response<Body> {
    with_type(StatusCode::OK, body.to_owned(), content_type)
}

fn unauthorized() -> Response<Body> {
    html(
        StatusCode::UNAUTHORIZED,
        &html::page(
            "unauthorized",
            None,
            "<h1>Unauthorized</h1><p>This viewer needs its access token: open the URL <code>scratchpad ui</code> \
             printed when it started.</p>",
        ),
    )
}
