//! Sub-agents as sessions of their own (Claude Code's `Agent` tool, Codex's `spawn_agent`). A
//! sub-agent's events carry its parent's session id and its own `agent_id`; the hook acts on
//! them in the session `{parent}:subagent:{agent_id}`, spawned from the parent's — the session
//! notepad's spawn:
//!
//! - `SubagentStart` spawns it ([`Origin::Spawn`], in the parent's project), with a copy of the
//!   parent's state when the host configuration's `[subagents] copy` asks for one (the
//!   default), begins its turn and answers with its guidance and scratchpad, which Claude Code
//!   adds to the sub-agent's requests only.
//! - Its tools' events act in it ([`own`]); a call of the scratchpad's own tools names it in the
//!   dialect's agent argument, so the MCP server, told only the parent's session, acts in it too
//!   (Claude Code); Codex's MCP calls name the sub-agent's turn, which the server follows.
//! - `SubagentStop` ends its turn (`after_response`) and hands back what it saved. The notepad
//!   is the sub-session's own working state and the parent's notepad records the delegated
//!   work: the notes the sub-agent added are appended to the parent's notes under a line naming
//!   the sub-agent's session, or, when they do not fit the parent's budget, that line alone, a
//!   reference to the session (`scratchpad show SESSION`).
//!
//! An event about a sub-agent the hook cannot place (no `agent_id`, an agent that never
//! started) is [`Unplaced`]: one line on stderr and nothing stored, and the sub-agent goes on as
//! it would without the plugin.

use scratchpad_host::{Error, Host, Origin, Prompt, TurnContext};

use super::answer::Answer;
use super::event::{Event, Kind};
use super::ledger::{self, NotesMark};
use super::{Hook, join, new_turn_id};

/// What joins a parent's session id and its sub-agent's id into the sub-agent's session id.
const SEPARATOR: &str = ":subagent:";

/// The session of sub-agent `agent` of session `parent`: named so a reader sees the parent.
pub(crate) fn session_of(parent: &str, agent: &str) -> String {
    format!("{parent}{SEPARATOR}{agent}")
}

/// An event about a sub-agent the hook cannot place: nothing is done and the agent goes on.
#[derive(Debug)]
pub(crate) struct Unplaced(pub(crate) String);

impl std::fmt::Display for Unplaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; nothing was done", self.0)
    }
}

impl std::error::Error for Unplaced {}

/// `event` as its sub-agent's own, with the parent's session: the session is the sub-agent's,
/// and the transcript (the parent's) is dropped. An event of no sub-agent comes back as it is.
/// A sub-agent's event other than its start must name an agent whose session was spawned
/// from this parent's.
pub(crate) async fn own(host: &Host, mut event: Event) -> anyhow::Result<(Event, Option<String>)> {
    let is_subagent_event = matches!(event.kind, Kind::SubagentStart | Kind::SubagentStop { .. });
    let agent = match (event.agent_id.as_deref(), is_subagent_event) {
        (Some(""), _) | (None, true) => {
            return Err(Unplaced(format!("{} names no `agent_id`", event.name)).into());
        }
        (None, false) => return Ok((event, None)),
        (Some(agent), _) => agent.to_owned(),
    };
    let parent = std::mem::take(&mut event.session_id);
    let session = session_of(&parent, &agent);
    if !matches!(event.kind, Kind::SubagentStart) {
        let spawned = match host.session(&session).await {
            Ok(record) => record.origin.parent() == Some(parent.as_str()),
            Err(Error::SessionNotFound(_)) => false,
            Err(other) => return Err(other.into()),
        };
        if !spawned {
            return Err(Unplaced(format!(
                "{} of sub-agent `{agent}`, which session `{parent}` never started",
                event.name
            ))
            .into());
        }
    }
    event.session_id = session;
    event.transcript_path = None;
    Ok((event, Some(parent)))
}

impl Hook<'_> {
    /// `SubagentStart`: the sub-agent's session spawned from `parent` (kept when it exists: an
    /// agent continued), its turn begun, and its guidance and scratchpad for its requests.
    pub(super) async fn start_subagent(&self, parent: &str) -> anyhow::Result<Answer> {
        let session = self.event.session_id.as_str();
        crate::sessions::open(&self.host, parent, self.project().as_deref()).await?;
        let origin = Origin::Spawn { parent: parent.to_owned(), copy: self.answering.subagents.copy };
        let guidance = match self.host.create_session_in(session, origin, None).await {
            Ok(guidance) => guidance,
            Err(Error::SessionExists(_)) => self.host.session(session).await?.guidance,
            Err(other) => return Err(other.into()),
        };
        // The agent's own turn id when it sends one (Codex: the one its MCP calls name).
        let turn_id = self.event.turn_id.clone().unwrap_or_else(new_turn_id);
        ledger::with(&self.ledger, |l| l.enter(&turn_id))?;
        let turn = TurnContext::new(session, &turn_id);
        let prompt = self.host.before_query(&turn, "").await?;
        // What the sub-agent already holds (a copy of the parent's notes) is not handed back.
        let notes = self.notes(&turn).await?;
        ledger::with(&self.ledger, |l| l.notes_handed = notes.as_deref().map(NotesMark::of))?;
        // Its system prompt is its kind's, without the MCP server's instructions: the guidance
        // comes here, whatever `--no-guidance` says.
        let parts =
            vec![Prompt::guidance(&guidance).render_system_only(""), prompt.besides(&guidance).render_system_only("")];
        Ok(Answer::Context(self.answering.names.rewrite(&join(parts))))
    }

    /// `SubagentStop`: the sub-agent's turn ended with `last_message`, and the notes it added
    /// since it started (or since its last stop) handed back to `parent`'s notes.
    pub(super) async fn stop_subagent(&self, parent: &str, last_message: Option<&str>) -> anyhow::Result<Answer> {
        let session = self.event.session_id.as_str();
        let turn = self.turn()?;
        self.host.after_response(&turn, last_message.unwrap_or_default()).await?;
        let Some(notes) = self.notes(&turn).await? else { return Ok(Answer::Nothing) };
        let handed = ledger::with(&self.ledger, |l| l.notes_handed.clone())?;
        let added = match handed.and_then(|mark| mark.rest(&notes)) {
            Some(rest) => rest,
            None => notes.as_str(),
        }
        .trim();
        if added.is_empty() {
            return Ok(Answer::Nothing);
        }
        let kind = self.event.agent_type.as_deref().unwrap_or("sub-agent");
        let agent = self.event.agent_id.as_deref().unwrap_or_default();
        let heading = format!("Sub-agent `{agent}` ({kind}, session `{session}`)");
        let parent_notes = self.host.notepad(parent);
        match parent_notes.append(&format!("{heading} left these notes:\n{added}")).await {
            Ok(_) => {}
            // Over the parent's budget: the reference alone, which the budget may still hold.
            Err(Error::Tool { .. }) => {
                let reference = format!(
                    "{heading} left {} chars of notes, more than these notes have room for; `scratchpad show {session}` has them.",
                    added.chars().count()
                );
                parent_notes.append(&reference).await?;
            }
            Err(other) => return Err(other.into()),
        }
        ledger::with(&self.ledger, |l| l.notes_handed = Some(NotesMark::of(&notes)))?;
        Ok(Answer::Nothing)
    }

    /// The sub-agent's notes (the session notepad), or `None` when no plugin keeps one.
    async fn notes(&self, turn: &TurnContext) -> anyhow::Result<Option<String>> {
        match self.host.notepad(&turn.session_id).in_turn(turn).read().await {
            Ok(notes) => Ok(Some(notes)),
            Err(Error::UnknownTool(_)) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_agents_session_names_its_parent() {
        assert_eq!(session_of("s-1", "a7f"), "s-1:subagent:a7f");
    }
}
