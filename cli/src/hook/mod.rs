//! `scratchpad hook`: one coding-agent hook event in (JSON on stdin), the host's matching API
//! run, the agent's answer out (JSON on stdout). Claude Code's hook protocol, which Codex CLI
//! adopted and Gemini CLI renamed: each runtime's event names, payload fields and answer shapes
//! are a table (`dialect/`), the payload is parsed through it (`event.rs`) and the answer
//! written through it (`answer.rs`); the mapping onto the host is written once, here.
//! docs/claude-code.md has the mapping.
//!
//! Every event is a fresh process on the same database, or a call to the hook tool of the
//! running `scratchpad mcp --hook-tool` (`answer` serves both), so the hook keeps the little the
//! protocol does not carry (the turn, each call's step, deferred warnings) in a ledger file
//! (`ledger.rs`) that both share. A failure is one line on stderr and a non-blocking exit status
//! (1, or 3 when a plugin failed; 0 for a runtime that takes any other as a deny): the agent's
//! turn goes on. Bad input stores nothing.

mod answer;
mod dialect;
pub(crate) mod event;
mod ledger;
mod shell;
mod subagent;
mod transcript;
mod whole_output;

use std::io::Read;
use std::path::Path;

use anyhow::{Context, bail};
use scratchpad_host::{
    Error, Host, HostConfig, InstanceAllocation, Prompt, Subagents, ToolCall, ToolNames, TurnContext,
};
use serde_json::Value;

pub(crate) use self::subagent::Unplaced;

use self::answer::Answer;
use self::event::{Event, Kind, Runtime};
use self::ledger::Ledger;

/// The model's context window when the agent does not say (`--context-window`'s default).
pub(crate) const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// `scratchpad hook`'s options.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct HookArgs {
    /// The agent that runs the hook [default: Codex when the event has a `turn_id`, Gemini CLI
    /// when its name is one of Gemini CLI's own (`BeforeAgent`, `AfterTool`, …), else Claude Code]
    #[arg(long, value_enum)]
    pub(crate) runtime: Option<Runtime>,
    /// The prefix the agent shows the MCP server's tools under, e.g.
    /// `mcp__plugin_scratchpad_scratchpad__`: texts for the model name the tools that way
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub(crate) tool_prefix: String,
    /// The model's context window in tokens, for context-pressure plugins
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONTEXT_WINDOW)]
    pub(crate) context_window: u64,
    /// Leave the session guidance out of `SessionStart`'s answer: the agent has it from the MCP
    /// server's instructions (Claude Code puts them in the system prompt)
    #[arg(long)]
    pub(crate) no_guidance: bool,
}

/// How events are answered, besides what each event says.
#[derive(Clone)]
pub(crate) struct Answering {
    /// The tools as the agent shows them.
    pub(crate) names: ToolNames,
    /// The model's context window in tokens.
    pub(crate) context_window: u64,
    /// Add the session guidance at `SessionStart`.
    pub(crate) guidance: bool,
    /// How sub-agents' sessions are spawned (`subagent.rs`).
    pub(crate) subagents: Subagents,
}

/// Reads one event from stdin, acts on it and prints the answer. For a runtime that takes any
/// exit status but 0 as a refusal (Gemini CLI), a failure — a bad configuration, bad input, a
/// plugin's — is a line on stderr and exit status 0.
pub(crate) async fn run(config: anyhow::Result<HostConfig>, args: HookArgs) -> anyhow::Result<()> {
    let mut runtime = args.runtime;
    let result = run_event(config, args, &mut runtime).await;
    match result {
        // A sub-agent the hook cannot place: the agent goes on as without the plugin, and a
        // non-zero status would only report a failure that is not one.
        Err(error) if error.downcast_ref::<subagent::Unplaced>().is_some() => {
            eprintln!("scratchpad hook: {error:#}");
            Ok(())
        }
        Err(error) if runtime.is_some_and(|r| r.dialect().failures_exit_zero) => {
            eprintln!("scratchpad hook: {error:#}");
            Ok(())
        }
        result => result,
    }
}

/// [`run`], telling `runtime` which runtime the event came from once it is known.
async fn run_event(
    config: anyhow::Result<HostConfig>,
    args: HookArgs,
    runtime: &mut Option<event::Runtime>,
) -> anyhow::Result<()> {
    let mut config = config?;
    // Asked to stop mid-event (the agent gave up on the hook), the event still finishes —
    // bounded by the turn's wait and the plugins' deadlines — rather than dying in its commit.
    let _finish_first = crate::shutdown::Shutdown::listen()?;
    let mut input = Vec::new();
    std::io::stdin()
        .take(event::MAX_INPUT_BYTES + 1)
        .read_to_end(&mut input)
        .context("reading the hook event from stdin")?;
    if input.len() as u64 > event::MAX_INPUT_BYTES {
        bail!("the hook event on stdin is over {} MiB", event::MAX_INPUT_BYTES >> 20);
    }
    let event = event::parse(&input, args.runtime).map_err(|e| anyhow::anyhow!("bad hook event: {e}"))?;
    *runtime = Some(event.runtime);
    if let Kind::Other { .. } = event.kind {
        return Ok(());
    }
    // One event per process: nothing is worth reserving or keeping warm for later calls.
    config.instance_allocation = InstanceAllocation::OnDemand;
    config.warm_instances = 0;
    config.hot_session_bytes = 0;
    // The agent's user waits on every hook: the whole event, opening the database included,
    // waits for another process's write lock at most the turn's bound.
    let bound = config.turn_wait;
    let subagents = config.subagents;
    let fallback = event.clone();
    let answered = scratchpad_host::waiting_at_most(bound, async move {
        let host = Host::open(config).await?;
        let names = host.tool_names(&args.tool_prefix);
        // A plugin of another version than this binary: said once, where the user sees it.
        let notice = match event.kind {
            Kind::SessionStart { .. } => crate::plugin_version::mismatch(),
            _ => None,
        };
        let answering =
            Answering { names, context_window: args.context_window, guidance: !args.no_guidance, subagents };
        answer(host, &answering, event, notice.as_deref()).await
    })
    .await;
    let json = match answered {
        Ok(json) => json,
        Err(error) => {
            let Some(json) = storage_fault(&error, &fallback) else { return Err(error) };
            eprintln!("scratchpad hook: {error:#}");
            Some(json)
        }
    };
    if let Some(json) = json {
        println!("{json}");
    }
    Ok(())
}

/// The answer to `event` when acting on it failed with `error` because of the machine under
/// the database — another process held its write lock past the turn's bound, its disk is
/// full, it cannot be written, its server is away: nothing for the model, a line for the user, and the turn goes
/// on. `None` for any other error.
pub(crate) fn storage_fault(error: &anyhow::Error, event: &Event) -> Option<String> {
    let notice = match Error::find(error)? {
        Error::Busy { database, waited_ms } => format!(
            "scratchpad: the database {database} is locked by another writer; after waiting {waited_ms} ms this \
             turn goes on without the scratchpad"
        ),
        fault @ (Error::DiskFull { .. } | Error::ReadOnly { .. } | Error::Unavailable { .. }) => {
            format!("scratchpad: {fault}. This turn goes on without the scratchpad.")
        }
        _ => return None,
    };
    Some(Answer::Nothing.render(event, Some(&notice)).unwrap_or_default())
}

/// Acts on `event` with `host` and renders the agent's answer (`None`: nothing to say), with
/// `notice` for the user: what `scratchpad hook` prints, and what the hook tool of `scratchpad
/// mcp --hook-tool` answers in-process.
pub(crate) async fn answer(
    host: Host,
    answering: &Answering,
    event: Event,
    notice: Option<&str>,
) -> anyhow::Result<Option<String>> {
    if let Kind::Other { .. } = event.kind {
        return Ok(None);
    }
    let (event, parent) = subagent::own(&host, event).await?;
    let ledger = ledger::path(&ledger::directory()?, &host.database().to_string(), &event.session_id);
    let hook = Hook { host, event, ledger, answering, parent };
    let answer = hook.act().await?;
    Ok(answer.render(&hook.event, notice))
}

struct Hook<'a> {
    host: Host,
    event: Event,
    ledger: std::path::PathBuf,
    answering: &'a Answering,
    /// The parent's session, for an event of a sub-agent (whose session `event` names).
    parent: Option<String>,
}

impl Hook<'_> {
    /// The session's project: the checkout of the agent's working directory.
    fn project(&self) -> Option<String> {
        crate::sessions::project_of(self.event.cwd.as_deref())
    }

    async fn act(&self) -> anyhow::Result<Answer> {
        let session = self.event.session_id.as_str();
        match &self.event.kind {
            Kind::SessionStart { source } => {
                let guidance = crate::sessions::open(&self.host, session, self.project().as_deref()).await?;
                let mut parts: Vec<String> = match self.answering.guidance {
                    true => vec![Prompt::guidance(&guidance).render_system_only("")],
                    false => Vec::new(),
                };
                let resumed = source == "resume" && self.event.runtime.dialect().context_on_resume;
                if source == "compact" || resumed {
                    let turn = self.turn()?;
                    if source == "compact" {
                        self.end_compaction(&turn).await?;
                    }
                    // After a compaction the model may go on without a new prompt: the
                    // scratchpad comes at once (the guidance, once, above or elsewhere).
                    let prompt = self.host.before_query(&self.with_tokens(turn), "").await?;
                    parts.push(prompt.besides(&guidance).render_system_only(""));
                }
                parts.extend(self.take_pending()?);
                Ok(Answer::Context(self.answering.names.rewrite(&join(parts))))
            }
            Kind::UserPromptSubmit { prompt } => {
                let turn_id = self.event.turn_id.clone().unwrap_or_else(new_turn_id);
                ledger::with(&self.ledger, |l| l.enter(&turn_id))?;
                let guidance = crate::sessions::open(&self.host, session, self.project().as_deref()).await?;
                let turn = self.with_tokens(TurnContext::new(session, &turn_id));
                let prompt = self.host.before_query(&turn, prompt).await?;
                let mut parts = self.take_pending()?;
                // The standing guidance goes once, with SessionStart (or as the MCP server's
                // instructions); the agent keeps added context in its history, so it is not
                // repeated every turn.
                parts.push(prompt.besides(&guidance).render_system_only(""));
                Ok(Answer::Context(self.answering.names.rewrite(&join(parts))))
            }
            Kind::PreToolUse { tool, input, call_id } => {
                let (turn, step) = self.step(call_id.as_deref())?;
                let name = self.answering.names.tool(tool).unwrap_or(tool);
                let arguments = input.to_string();
                let rewritten = match self
                    .host
                    .before_tool_call(&turn, &ToolCall::new(name, arguments.as_str(), step))
                    .await
                {
                    Ok(rewritten) if rewritten == arguments => input.clone(),
                    Ok(rewritten) => match serde_json::from_str::<Value>(&rewritten) {
                        Ok(value @ Value::Object(_)) => value,
                        _ => bail!("a plugin rewrote the arguments of `{tool}` to something that is not a JSON object"),
                    },
                    Err(Error::Tool { plugin, error, .. }) => {
                        return Ok(Answer::Deny(self.answering.names.rewrite(&format!("{plugin}: {}", error.message))));
                    }
                    Err(other) => return Err(other.into()),
                };
                // A runtime that tells the MCP server nothing about the session: the call of
                // one of the scratchpad's own tools carries the session and turn it acts in.
                // A sub-agent's call names the sub-agent's session, for a runtime that tells the
                // MCP server only the parent's.
                let ours = self.answering.names.tool(tool).is_some();
                let dialect = self.event.runtime.dialect();
                let agent_argument = dialect.agent_argument.filter(|_| self.parent.is_some());
                let answer = match dialect.session_argument.or(agent_argument).filter(|_| ours) {
                    Some(argument) => {
                        let mut arguments = rewritten;
                        let named = serde_json::json!({ "session_id": turn.session_id, "turn_id": turn.turn_id });
                        if let Value::Object(fields) = &mut arguments {
                            fields.insert(argument.to_owned(), named);
                        }
                        Answer::Rewrite(arguments)
                    }
                    None if rewritten == *input => Answer::Nothing,
                    None => Answer::Rewrite(rewritten),
                };
                Ok(self.capture_shell(tool, input, call_id.as_deref(), answer))
            }
            Kind::PostToolUse { tool, input, response, call_id } => {
                if let Some(answer) = self.whole_output(tool, input, response, call_id.as_deref()).await {
                    return Ok(answer);
                }
                Ok(match self.offload(tool, input, call_id.as_deref(), result_text(response)).await? {
                    Some(text) => Answer::Replace { text, mcp: self.event.runtime.dialect().is_mcp(tool) },
                    None => Answer::Nothing,
                })
            }
            Kind::PreCompact => {
                // No agent lets this hook add a turn before compacting: the warnings wait for
                // the model's next prompt (SessionStart after the compaction, or the next
                // UserPromptSubmit).
                let turn = self.with_tokens(self.turn()?);
                let warnings = self.host.before_compaction(&turn).await?;
                ledger::with(&self.ledger, |l| {
                    warnings.into_iter().for_each(|w| l.defer(w.text));
                    l.compacting = true;
                })?;
                Ok(Answer::Nothing)
            }
            Kind::PostCompact => {
                self.end_compaction(&self.turn()?).await?;
                Ok(Answer::Nothing)
            }
            Kind::Stop { last_message } => {
                let tail = self.event.transcript_path.as_deref().map(|p| transcript::read(Path::new(p)));
                let text = last_message.clone().or_else(|| tail.and_then(|t| t.last_text)).unwrap_or_default();
                self.host.after_response(&self.with_tokens(self.turn()?), &text).await?;
                Ok(Answer::Nothing)
            }
            Kind::SubagentStart => self.start_subagent(self.parent()?).await,
            Kind::SubagentStop { last_message } => self.stop_subagent(self.parent()?, last_message.as_deref()).await,
            Kind::Other { .. } => Ok(Answer::Nothing),
        }
    }

    /// The parent's session of a sub-agent's event.
    fn parent(&self) -> anyhow::Result<&str> {
        self.parent.as_deref().ok_or_else(|| anyhow::anyhow!("{} names no sub-agent", self.event.name))
    }

    /// The turn the event belongs to: the agent's own id when it sends one, else the turn the
    /// last prompt entered (a turn of its own when none did).
    fn turn(&self) -> anyhow::Result<TurnContext> {
        let session = &self.event.session_id;
        if let Some(id) = &self.event.turn_id {
            return Ok(TurnContext::new(session, id));
        }
        let current = ledger::with(&self.ledger, |l| l.turn.clone())?;
        Ok(TurnContext::new(session, current.unwrap_or_else(new_turn_id)))
    }

    /// The turn and the step of tool call `call_id` in it.
    fn step(&self, call_id: Option<&str>) -> anyhow::Result<(TurnContext, u32)> {
        let agent_turn = self.event.turn_id.clone();
        let (turn, step) = ledger::with(&self.ledger, |l| {
            let turn = agent_turn.or_else(|| l.turn.clone()).unwrap_or_else(new_turn_id);
            l.enter(&turn);
            (turn, l.step(call_id))
        })?;
        Ok((self.with_tokens(TurnContext::new(&self.event.session_id, turn)), step))
    }

    /// Tells the host the compaction in progress ended, once: Codex sends both `PostCompact` and
    /// `SessionStart` (`compact`) for one compaction, Claude Code the latter.
    async fn end_compaction(&self, turn: &TurnContext) -> anyhow::Result<()> {
        if ledger::with(&self.ledger, Ledger::end_compaction)? {
            self.host.after_compaction(turn).await?;
        }
        Ok(())
    }

    /// `turn` with the context the transcript says the last model call used.
    fn with_tokens(&self, turn: TurnContext) -> TurnContext {
        let used = self.event.transcript_path.as_deref().and_then(|p| transcript::read(Path::new(p)).context_tokens);
        match used {
            Some(used) => turn.with_tokens(used, self.answering.context_window),
            None => turn,
        }
    }

    /// The deferred compaction warnings, now delivered.
    fn take_pending(&self) -> anyhow::Result<Vec<String>> {
        ledger::with(&self.ledger, |l| std::mem::take(&mut l.pending))
    }
}

/// The hook's texts (pending warnings, the prompt's text) joined by blank lines.
fn join(parts: Vec<String>) -> String {
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect::<Vec<_>>().join("\n\n")
}

/// A turn id of the hook's own, for agents that send none: unique per process and time.
fn new_turn_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("hook-{}-{}", now.as_micros(), std::process::id())
}

/// A tool's result as the text the model reads: a string as it is; Bash's `{stdout, stderr}`
/// as its output; an MCP result's text blocks (`[{type, text}]` or `{content: […]}`) joined;
/// anything else as JSON.
fn result_text(response: &Value) -> String {
    let blocks = |items: &Vec<Value>| {
        let texts: Vec<&str> = items.iter().filter_map(|b| b["text"].as_str()).collect();
        (!texts.is_empty() && texts.len() == items.len()).then(|| texts.join("\n"))
    };
    match response {
        Value::String(text) => text.clone(),
        Value::Array(items) => blocks(items).unwrap_or_else(|| response.to_string()),
        Value::Object(fields) => {
            if let Some(Value::Array(items)) = fields.get("content")
                && let Some(text) = blocks(items)
            {
                return text;
            }
            match (fields.get("stdout").and_then(Value::as_str), fields.get("stderr").and_then(Value::as_str)) {
                (Some(out), Some(err)) if !err.is_empty() => format!("{out}\n{err}"),
                (Some(out), _) => out.to_owned(),
                _ => response.to_string(),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_results_become_the_text_the_model_reads() {
        assert_eq!(result_text(&json!("plain")), "plain");
        assert_eq!(result_text(&json!({"stdout": "out", "stderr": "", "interrupted": false})), "out");
        assert_eq!(result_text(&json!({"stdout": "out", "stderr": "err"})), "out\nerr");
        assert_eq!(result_text(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])), "a\nb");
        assert_eq!(result_text(&json!({"content": [{"type": "text", "text": "c"}]})), "c");
        assert_eq!(result_text(&json!({"filePath": "/x"})), r#"{"filePath":"/x"}"#);
    }
}
