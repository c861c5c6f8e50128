//! The per-turn API of [`Host`]: each method runs one hook across the plugins in order and
//! composes their answers (injections concatenated per placement, tool calls routed to their
//! owner, `before-tool-call` and `after-tool-result` chained).

use serde::{Deserialize, Serialize};

use crate::bindings::wit;
use std::sync::Arc;

use crate::capabilities::observation::{ObservationData, ObservationFacts};
use crate::error::{Error, Result};
use crate::host::{Host, from_wit_injection};
use crate::prompt::Prompt;
use crate::types::{
    ContentKind, Observation, ObservationView, ToolCall, ToolError, ToolErrorKind, ToolOutput, ToolSpec, TurnContext,
};

/// A text one plugin returned, e.g. a pre-compaction warning turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginText {
    /// The plugin.
    pub plugin: String,
    /// The text.
    pub text: String,
}

impl Host {
    /// Starts (or continues) a turn with the user's `message` and returns what the plugins
    /// inject around it: the session's standing guidance plus this turn's injections. The
    /// message itself is never changed; render the final text with [`Prompt::render`].
    pub async fn before_query(&self, turn: &TurnContext, message: &str) -> Result<Prompt> {
        let _guard = self.lock(&turn.session_id).await;
        let session = self.session(&turn.session_id).await?;
        let wit_turn = self.enter_turn(turn).await?;
        let mut prompt = Prompt { injections: session.guidance };
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let hook = "before-query";
            let injections = self
                .run(index, &turn.session_id, hook, |p, store| {
                    let (turn, message) = (wit_turn.clone(), message.to_owned());
                    Box::pin(async move { p.scratchpad_plugin_hooks().call_before_query(store, &turn, &message).await })
                })
                .await?;
            prompt.injections.extend(injections.into_iter().map(|i| from_wit_injection(&loaded.info.name, i)));
        }
        Ok(prompt)
    }

    /// Hands the model's reply `text` to every plugin (`after-response`): the turn ends.
    ///
    /// Then, with the session unlocked, the rolling checkpoints plugins asked for in this turn
    /// are written by the embedder's summarizer ([`crate::checkpoints`]); this call returns
    /// when they are stored. A runtime that does not want to wait for its summarizer calls this
    /// from a task of its own. A summarizer failure is [`Error::Checkpoint`] (the hooks' writes
    /// are kept).
    pub async fn after_response(&self, turn: &TurnContext, text: &str) -> Result<()> {
        {
            let _guard = self.lock(&turn.session_id).await;
            let wit_turn = self.enter_turn(turn).await?;
            for index in 0..self.inner.plugins.len() {
                self.run(index, &turn.session_id, "after-response", |p, store| {
                    let (turn, text) = (wit_turn.clone(), text.to_owned());
                    Box::pin(async move { p.scratchpad_plugin_hooks().call_after_response(store, &turn, &text).await })
                })
                .await?;
            }
        }
        self.write_checkpoints(turn).await?;
        Ok(())
    }

    /// The tools every plugin offers in this turn, in plugin order.
    pub async fn tools(&self, turn: &TurnContext) -> Result<Vec<ToolSpec>> {
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        let mut tools = Vec::new();
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let hook = "list-tools";
            let offered = self
                .run(index, &turn.session_id, hook, |p, store| {
                    let turn = wit_turn.clone();
                    Box::pin(async move { p.scratchpad_plugin_tools().call_list_tools(store, &turn).await })
                })
                .await?;
            // `run` has checked that every offered tool is declared in the manifest.
            tools.extend(offered.into_iter().map(|spec| ToolSpec {
                plugin: loaded.info.name.clone(),
                name: spec.name,
                description: spec.description,
                parameters: spec.parameters,
            }));
        }
        Ok(tools)
    }

    /// Runs the tool `name` with `arguments` (JSON text) in its owning plugin. A tool error is
    /// [`Error::Tool`], and a failed call changes nothing.
    pub async fn call_tool(&self, turn: &TurnContext, name: &str, arguments: &str) -> Result<ToolOutput> {
        let Some(&index) = self.inner.tool_owner.get(name) else {
            return Err(Error::UnknownTool(name.to_owned()));
        };
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        let loaded = &self.inner.plugins[index];
        let hook = format!("tool {name}");
        let result = self
            .run(index, &turn.session_id, &hook, |p, store| {
                let (turn, name, arguments) = (wit_turn.clone(), name.to_owned(), arguments.to_owned());
                Box::pin(
                    async move { p.scratchpad_plugin_tools().call_call_tool(store, &turn, &name, &arguments).await },
                )
            })
            .await?;
        match result {
            Ok(output) => Ok(ToolOutput { plugin: loaded.info.name.clone(), content: output.content }),
            Err(error) => Err(Error::Tool {
                plugin: loaded.info.name.clone(),
                tool: name.to_owned(),
                error: from_wit_tool_error(error),
            }),
        }
    }

    /// Runs every plugin's `before-tool-call` in order before the runtime executes `call`, and
    /// returns the arguments to execute it with (rewritten or not). A plugin may block the
    /// call with [`Error::Tool`].
    pub async fn before_tool_call(&self, turn: &TurnContext, call: &ToolCall) -> Result<String> {
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        let mut arguments = call.arguments.clone();
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let hook = "before-tool-call";
            let current = wit::ToolCall { name: call.name.clone(), arguments: arguments.clone(), step: call.step };
            let result = self
                .run(index, &turn.session_id, hook, |p, store| {
                    let (turn, call) = (wit_turn.clone(), current.clone());
                    Box::pin(
                        async move { p.scratchpad_plugin_hooks().call_before_tool_call(store, &turn, &call).await },
                    )
                })
                .await?;
            match result {
                Ok(Some(rewritten)) => {
                    arguments = rewritten;
                }
                Ok(None) => {}
                Err(error) => {
                    return Err(Error::Tool {
                        plugin: loaded.info.name.clone(),
                        tool: call.name.clone(),
                        error: from_wit_tool_error(error),
                    });
                }
            }
        }
        Ok(arguments)
    }

    /// Runs every plugin's `after-tool-result` in order on the tool's `observation` and
    /// returns what the model should see. Each plugin sees the previous one's replacement.
    pub async fn after_tool_result(
        &self,
        turn: &TurnContext,
        call: &ToolCall,
        observation: &Observation,
    ) -> Result<ObservationView> {
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        let wit_call = wit::ToolCall { name: call.name.clone(), arguments: call.arguments.clone(), step: call.step };
        let mut current = Arc::new(ObservationFacts::new(observation));
        let mut view = ObservationView { replaced_by: None, replacement: None };
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let hook = "after-tool-result";
            let replacement = self
                .run(index, &turn.session_id, hook, |p, store| {
                    let (turn, call, data) = (wit_turn.clone(), wit_call.clone(), ObservationData(current.clone()));
                    Box::pin(async move {
                        let handle = store.data_mut().table.push(data)?;
                        p.scratchpad_plugin_hooks().call_after_tool_result(store, &turn, &call, handle).await
                    })
                })
                .await?;
            if let Some(text) = replacement {
                current = Arc::new(ObservationFacts::new(&Observation {
                    bytes: text.clone().into_bytes().into(),
                    kind: Some(ContentKind::Text),
                    metadata: observation.metadata.clone(),
                }));
                view = ObservationView { replaced_by: Some(loaded.info.name.clone()), replacement: Some(text) };
            }
        }
        Ok(view)
    }

    /// Asks every plugin whether the runtime should send a warning turn before compacting.
    pub async fn before_compaction(&self, turn: &TurnContext) -> Result<Vec<PluginText>> {
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        let mut warnings = Vec::new();
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let hook = "before-compaction";
            let warning = self
                .run(index, &turn.session_id, hook, |p, store| {
                    let turn = wit_turn.clone();
                    Box::pin(async move { p.scratchpad_plugin_hooks().call_before_compaction(store, &turn).await })
                })
                .await?;
            if let Some(text) = warning {
                warnings.push(PluginText { plugin: loaded.info.name.clone(), text });
            }
        }
        Ok(warnings)
    }

    /// Tells every plugin the runtime compacted the conversation, and counts the compaction.
    pub async fn after_compaction(&self, turn: &TurnContext) -> Result<()> {
        let _guard = self.lock(&turn.session_id).await;
        let wit_turn = self.enter_turn(turn).await?;
        for index in 0..self.inner.plugins.len() {
            self.run(index, &turn.session_id, "after-compaction", |p, store| {
                let turn = wit_turn.clone();
                Box::pin(async move { p.scratchpad_plugin_hooks().call_after_compaction(store, &turn).await })
            })
            .await?;
        }
        let session = turn.session_id.clone();
        self.inner
            .db
            .run(move |conn| {
                conn.execute("UPDATE sessions SET compaction_count = compaction_count + 1 WHERE id = ?1", [&session])?;
                Ok(())
            })
            .await
    }
}

pub(crate) fn from_wit_tool_error(error: wit::ToolError) -> ToolError {
    let (kind, message) = match error {
        wit::ToolError::UnknownTool(m) => (ToolErrorKind::UnknownTool, m),
        wit::ToolError::InvalidArguments(m) => (ToolErrorKind::InvalidArguments, m),
        wit::ToolError::Rejected(m) => (ToolErrorKind::Rejected, m),
        wit::ToolError::NotFound(m) => (ToolErrorKind::NotFound, m),
        wit::ToolError::Failed(m) => (ToolErrorKind::Failed, m),
    };
    ToolError { kind, message }
}
