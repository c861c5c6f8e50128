//! Sessions a front end opens on first sight (the MCP server, the hook command): the agent's
//! own session id is the host's.

use scratchpad_host::{Error, Host, Injection, Origin};

/// The session `id`, created when missing: its standing guidance. Read first, since every turn
/// of a hook opens a session that exists.
pub(crate) async fn open(host: &Host, id: &str) -> Result<Vec<Injection>, Error> {
    match host.session(id).await {
        Ok(session) => return Ok(session.guidance),
        Err(Error::SessionNotFound(_)) => {}
        Err(other) => return Err(other),
    }
    match host.create_session(id, Origin::New).await {
        Ok(guidance) => Ok(guidance),
        // Created by another process in between.
        Err(Error::SessionExists(_)) => Ok(host.session(id).await?.guidance),
        Err(other) => Err(other),
    }
}
