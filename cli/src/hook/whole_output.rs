//! The hook's side of whole outputs (`shell.rs` has the files and the command): `PreToolUse`
//! rewrites a shell command to capture its output, `PostToolUse` offloads a whole output into
//! the large-observation store through the host's `after_tool_result` (the same call, and so the
//! same synthetic observation, as for any other tool result) and answers the model's view in
//! the runtime's shape. Any failure here is a line on stderr and no answer.

use scratchpad_host::{Observation, ToolCall};
use serde_json::Value;

use super::Hook;
use super::answer::Answer;
use super::shell::{self, Capture};

impl Hook<'_> {
    /// `answer` to a `PreToolUse` of `tool`, with the shell's command rewritten to capture its
    /// whole output when the runtime's table has a shell that `tool` is and the permission mode
    /// allows it; `answer` as it is otherwise, or when the capture cannot be set up (said on
    /// stderr).
    pub(super) fn capture_shell(&self, tool: &str, input: &Value, call_id: Option<&str>, answer: Answer) -> Answer {
        let dialect = self.event.runtime.dialect();
        // The rewrite is a POSIX shell's: Codex runs PowerShell on Windows.
        let Some(shell_tool) = dialect.shell.as_ref().filter(|s| s.tool == tool && cfg!(unix)) else { return answer };
        if !dialect.output.rewrites_in(self.event.permission_mode.as_deref()) {
            return answer;
        }
        let mut arguments = match &answer {
            Answer::Nothing => input.clone(),
            Answer::Rewrite(arguments) => arguments.clone(),
            _ => return answer,
        };
        let skip = |why: String| {
            eprintln!("scratchpad hook: {why}; the command's output is left to the runtime");
        };
        let Some(call_id) = call_id else {
            skip("the shell call has no id".into());
            return answer;
        };
        let Some(command) = arguments.get(shell_tool.command).and_then(Value::as_str) else {
            skip(format!("`tool_input.{}` is not a string", shell_tool.command));
            return answer;
        };
        let dir = match shell::directory() {
            Ok(dir) => dir,
            Err(error) => {
                skip(format!("{error:#}"));
                return answer;
            }
        };
        shell::remove_stale(&dir);
        let capture = Capture::of(&dir, &self.host.database().to_string(), &self.event.session_id, call_id);
        capture.remove();
        // The output file exists from now on: at `PostToolUse` it says a capture was set up,
        // even if the command could not write it.
        if let Err(error) = shell::create(&capture) {
            skip(format!("{error:#}"));
            return answer;
        }
        let Some(wrapped) = shell::wrap(command, &capture) else {
            capture.remove();
            skip("the command holds a NUL byte".into());
            return answer;
        };
        arguments[shell_tool.command] = Value::String(wrapped);
        Answer::Rewrite(arguments)
    }

    /// The answer to a `PostToolUse` whose whole output the hook can reach (a captured shell
    /// command, a persisted built-in result); `None` for any other result, which takes the
    /// usual path.
    pub(super) async fn whole_output(
        &self,
        tool: &str,
        input: &Value,
        response: &Value,
        call_id: Option<&str>,
    ) -> Option<Answer> {
        let dialect = self.event.runtime.dialect();
        if let Some(shell_tool) = dialect.shell.as_ref().filter(|s| s.tool == tool) {
            // The runtime may hand back the command as rewritten: the metadata names the one
            // the model wrote.
            let typed = input.get(shell_tool.command).and_then(Value::as_str).and_then(shell::unwrap);
            let mut input = input.clone();
            if let Some(typed) = &typed {
                input[shell_tool.command] = Value::String(typed.clone());
            }
            let dir = shell::directory().ok()?;
            let capture = Capture::of(&dir, &self.host.database().to_string(), &self.event.session_id, call_id?);
            if typed.is_none() && !capture.output.exists() && !capture.status.exists() {
                return None;
            }
            let answer = match shell::finished(&capture) {
                // Still running: the runtime's own answer names the process to poll.
                Ok(None) => return Some(Answer::Nothing),
                Ok(Some((status, output))) => match self.offload(tool, &input, call_id, output).await {
                    Ok(Some(view)) => {
                        Answer::Output(Value::String(format!("Process exited with code {status}\nOutput:\n{view}")))
                    }
                    Ok(None) => Answer::Nothing,
                    Err(error) => failed(&error),
                },
                Err(error) => failed(&error),
            };
            capture.remove();
            return Some(answer);
        }
        let persisted = dialect.persisted.as_ref().filter(|_| !dialect.is_mcp(tool))?;
        Some(match shell::persisted_output(persisted, response) {
            Ok(None) => return None,
            Ok(Some(output)) => match self.offload(tool, input, call_id, output).await {
                Ok(Some(view)) => Answer::Output(shell::in_shape(persisted, response, view)),
                Ok(None) => Answer::Nothing,
                Err(error) => failed(&error),
            },
            Err(error) => failed(&error),
        })
    }

    /// Runs `after_tool_result` on `output`, the result of `tool` called with `input` (every
    /// `PostToolUse` comes here): the text the model should read instead, in the model's tool
    /// names, if a plugin replaced it.
    pub(super) async fn offload(
        &self,
        tool: &str,
        input: &Value,
        call_id: Option<&str>,
        output: String,
    ) -> anyhow::Result<Option<String>> {
        let (turn, step) = self.step(call_id)?;
        let name = self.answering.names.tool(tool).unwrap_or(tool);
        let observation = Observation::text(output).with_metadata(input.clone());
        let call = ToolCall::new(name, input.to_string(), step);
        let view = self.host.after_tool_result(&turn, &call, &observation).await?;
        Ok(view.replacement.map(|text| self.answering.names.rewrite(&text)))
    }
}

/// A whole output that could not be offloaded: said on stderr, and the runtime's own result
/// stands.
fn failed(error: &anyhow::Error) -> Answer {
    eprintln!("scratchpad hook: the whole output was not offloaded: {error:#}; the runtime's own result stands");
    Answer::Nothing
}
