//! Sessions a front end opens on first sight (the MCP server, the hook command): the agent's
//! own session id is the host's.

use scratchpad_host::{Error, Host, Injection, Origin};

/// The session `id`, created when missing: its standing guidance.
pub(crate) async fn open(host: &Host, id: &str) -> Result<Vec<Injection>, Error> {
    match host.create_session(id, Origin::New).await {
        Ok(guidance) => Ok(guidance),
        Err(Error::SessionExists(_)) => Ok(host.session(id).await?.guidance),
        Err(other) => Err(other),
    }
}
