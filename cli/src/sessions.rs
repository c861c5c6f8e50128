//! Sessions a front end opens on first sight (the MCP server, the hook command): the agent's
//! own session id is the host's, and its working directory names the session's project.

use scratchpad_host::{Error, Host, Injection, Origin};

/// The session `id`, created in `project` when missing: its standing guidance. Read first,
/// since every turn of a hook opens a session that exists (a session's project is set when it
/// is created and never changes).
pub(crate) async fn open(host: &Host, id: &str, project: Option<&str>) -> Result<Vec<Injection>, Error> {
    match host.session(id).await {
        Ok(session) => return Ok(session.guidance),
        Err(Error::SessionNotFound(_)) => {}
        Err(other) => return Err(other),
    }
    match host.create_session_in(id, Origin::New, project).await {
        Ok(guidance) => Ok(guidance),
        // Created by another process in between.
        Err(Error::SessionExists(_)) => Ok(host.session(id).await?.guidance),
        Err(other) => Err(other),
    }
}

/// The project of an agent's working directory `cwd` (its checkout's root), or none when the
/// directory cannot name one (not absolute, gone, not UTF-8): the session then simply has no
/// project, and the agent's turn goes on.
pub(crate) fn project_of(cwd: Option<&str>) -> Option<String> {
    let cwd = cwd?;
    match scratchpad_host::project_of_dir(cwd) {
        Ok(project) => Some(project),
        Err(error) => {
            tracing::warn!(%error, "the session gets no project");
            None
        }
    }
}
