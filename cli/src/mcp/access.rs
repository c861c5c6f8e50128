//! Who may talk to the HTTP server: a bearer token (required off loopback), and the `Host` and
//! `Origin` values accepted, against DNS rebinding (a web page whose name resolves to
//! 127.0.0.1 must not reach a local server from the user's browser).
//!
//! The token comes from a file or an environment variable, never from a flag, whose value any
//! user can read in `ps`; it never appears in a message or a log.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context, bail};
use subtle::ConstantTimeEq;

/// The environment variable that may hold the token.
pub(crate) const TOKEN_ENV: &str = "SCRATCHPAD_MCP_TOKEN";

/// A bearer token every request must present.
pub(crate) struct Token(Vec<u8>);

impl Token {
    /// The token from `file` (its first line) or, without one, from `$SCRATCHPAD_MCP_TOKEN`.
    pub(crate) fn load(file: Option<&Path>) -> anyhow::Result<Option<Token>> {
        let text = match file {
            Some(path) => {
                std::fs::read_to_string(path).with_context(|| format!("reading the token file {}", path.display()))?
            }
            None => match std::env::var(TOKEN_ENV) {
                Ok(text) => text,
                Err(std::env::VarError::NotPresent) => return Ok(None),
                Err(std::env::VarError::NotUnicode(_)) => bail!("${TOKEN_ENV} is not UTF-8"),
            },
        };
        let token = text.lines().next().unwrap_or_default().trim();
        if token.len() < 16 {
            // Said without the value: a token is a secret even when it is a bad one.
            bail!("the bearer token must be at least 16 characters (it has {})", token.len());
        }
        Ok(Some(Token(token.as_bytes().to_vec())))
    }

    /// Whether an `Authorization` header value presents this token (`Bearer <token>`),
    /// compared in constant time.
    pub(crate) fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else { return false };
        let Some(presented) = value.strip_prefix(b"Bearer ").or_else(|| value.strip_prefix(b"bearer ")) else {
            return false;
        };
        presented.ct_eq(&self.0).into()
    }
}

/// Refuses to serve off loopback without a token.
pub(crate) fn check_bind(addr: SocketAddr, token: Option<&Token>) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && token.is_none() {
        bail!(
            "serving MCP on {addr}, which is not a loopback address, needs a bearer token: put it in a file \
             (--token-file FILE) or in ${TOKEN_ENV}"
        );
    }
    Ok(())
}

/// The `Host` names accepted: the loopback names, the address served on when it names one
/// host, and the operator's `--allowed-host` names.
pub(crate) fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !addr.ip().is_unspecified() && !addr.ip().is_loopback() {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(extra.iter().cloned());
    hosts
}

/// The browser `Origin`s accepted: pages served from the allowed hosts, on any port. A
/// request without `Origin` (every non-browser client) is not concerned.
pub(crate) fn allowed_origins(hosts: &[String]) -> Vec<String> {
    hosts
        .iter()
        .flat_map(|host| {
            let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.clone() };
            [format!("http://{host}:*"), format!("https://{host}:*")]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let token = Token(b"0123456789abcdef".to_vec());
        assert!(token.admits(Some(b"Bearer 0123456789abcdef")));
        assert!(!token.admits(Some(b"Bearer 0123456789abcdeX")));
        assert!(!token.admits(Some(b"Bearer 0123456789abcdef0")));
        assert!(!token.admits(Some(b"0123456789abcdef")));
        assert!(!token.admits(None));
    }

    #[test]
    fn off_loopback_a_token_is_required() {
        assert!(check_bind("127.0.0.1:0".parse().unwrap(), None).is_ok());
        let refused = check_bind("0.0.0.0:8080".parse().unwrap(), None).unwrap_err().to_string();
        assert!(refused.contains("needs a bearer token"), "{refused}");
        assert_eq!(allowed_origins(&["::1".into()]), ["http://[::1]:*", "https://[::1]:*"]);
    }
}
