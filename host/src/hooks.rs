//! The per-turn API of [`Host`]: each method runs one hook across the plugins in order and
//! composes their answers (injections concatenated per placement, tool calls routed to their
//! owner, `before-tool-call` and `after-tool-result` chained).

use serde::{Deserialize, Serialize};

use crate::bindings::wit;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::grants::{Hook, Power};
use crate::host::{Host, from_wit_injection};
use crate::prompt::Prompt;
use crate::resources::{ObservationData, ObservationFacts};
use crate::transaction::{Involved, transaction};
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
    ///
    /// A person waits on this: it waits for another process's write lock on the database at
    /// most [`HostConfig::turn_wait`](crate::HostConfig::turn_wait), then fails with
    /// [`Error::Busy`](crate::Error::Busy) having kept nothing, and the turn can go on without
    /// the injection.
    pub async fn before_query(&self, turn: &TurnContext, message: &str) -> Result<Prompt> {
        crate::waiting_at_most(self.inner.turn_wait, async {
            let _guard = self.lock(&turn.session_id).await;
            transaction!(self, turn, Involved::All, |tx| { self.query(&mut tx, message).await })
        })
        .await
        .inspect(|prompt| self.metrics().injected(prompt.injections.iter().map(|i| i.text.len()).sum()))
    }

    /// What [`Host::before_query`] would inject into a prompt of session `id` now, with an
    /// empty message, in its current turn — and nothing written: no turn is entered and the
    /// calls' writes are dropped (a plugin that counts its `before-query` calls counts none).
    /// Before the session's first turn, the plugins see turn index 0 and an empty turn id.
    pub async fn preview_query(&self, id: &str) -> Result<Prompt> {
        let _guard = self.lock(id).await;
        let mut tx = self.begin_reading(id, Involved::All).await?;
        self.query(&mut tx, "").await
    }

    /// `before-query` across the plugins in order, after the standing guidance.
    pub(crate) async fn query(&self, tx: &mut crate::transaction::Tx<'_>, message: &str) -> Result<Prompt> {
        let mut prompt = Prompt { injections: tx.guidance() };
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            if !loaded.info.grants.calls(Hook::BeforeQuery, false) {
                continue;
            }
            let (wit_turn, message) = (tx.turn.clone(), message.to_owned());
            let injections = tx
                .call(index, "before-query", |p, store| {
                    Box::pin(
                        async move { p.scratchpad_plugin_hooks().call_before_query(store, &wit_turn, &message).await },
                    )
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
            transaction!(self, turn, Involved::All, |tx| {
                for index in 0..self.inner.plugins.len() {
                    let (wit_turn, text) = (tx.turn.clone(), text.to_owned());
                    tx.call(index, "after-response", |p, store| {
                        Box::pin(async move {
                            p.scratchpad_plugin_hooks().call_after_response(store, &wit_turn, &text).await
                        })
                    })
                    .await?;
                }
                Ok(())
            })?;
        }
        self.write_checkpoints(turn).await?;
        Ok(())
    }

    /// The tools every plugin offers in this turn, in plugin order.
    pub async fn tools(&self, turn: &TurnContext) -> Result<Vec<ToolSpec>> {
        let _guard = self.lock(&turn.session_id).await;
        transaction!(self, turn, Involved::All, |tx| {
            let mut tools = Vec::new();
            for (index, loaded) in self.inner.plugins.iter().enumerate() {
                let wit_turn = tx.turn.clone();
                let offered = tx
                    .call(index, "list-tools", |p, store| {
                        Box::pin(async move { p.scratchpad_plugin_tools().call_list_tools(store, &wit_turn).await })
                    })
                    .await?;
                // `call` has checked that every offered tool is declared in the manifest.
                tools.extend(offered.into_iter().map(|spec| ToolSpec {
                    plugin: loaded.info.name.clone(),
                    api_name: crate::names::api_tool_name(&spec.name).unwrap_or_default(),
                    name: spec.name,
                    description: spec.description,
                    parameters: spec.parameters,
                }));
            }
            Ok(tools)
        })
    }

    /// Runs the tool `name` with `arguments` (JSON text) in its owning plugin. A tool error is
    /// [`Error::Tool`], and a failed call changes nothing.
    pub async fn call_tool(&self, turn: &TurnContext, name: &str, arguments: &str) -> Result<ToolOutput> {
        let Some((index, name)) = self.find_tool(name) else {
            return Err(Error::UnknownTool(name.to_owned()));
        };
        let _guard = self.lock(&turn.session_id).await;
        let loaded = &self.inner.plugins[index];
        let hook = format!("tool {name}");
        let result = transaction!(self, turn, Involved::One(index), |tx| {
            let (wit_turn, name, arguments) = (tx.turn.clone(), name.to_owned(), arguments.to_owned());
            tx.call(index, &hook, |p, store| {
                Box::pin(async move {
                    p.scratchpad_plugin_tools().call_call_tool(store, &wit_turn, &name, &arguments).await
                })
            })
            .await
        })?;
        match result {
            Ok(output) => Ok(ToolOutput { plugin: loaded.info.name.clone(), content: output.content }),
            Err(error) => {
                let error = from_wit_tool_error(error);
                self.metrics().tool_error(&loaded.info.name, name, error.kind.as_str());
                Err(Error::Tool { plugin: loaded.info.name.clone(), tool: name.to_owned(), error })
            }
        }
    }

    /// Runs every plugin's `before-tool-call` in order before the runtime executes `call`, and
    /// returns the arguments to execute it with (rewritten or not). A plugin may block the
    /// call with [`Error::Tool`].
    pub async fn before_tool_call(&self, turn: &TurnContext, call: &ToolCall) -> Result<String> {
        let _guard = self.lock(&turn.session_id).await;
        let (owner, name) = self.call_owner(call);
        transaction!(self, turn, Involved::All, |tx| {
            let mut arguments = call.arguments.clone();
            for (index, loaded) in self.inner.plugins.iter().enumerate() {
                if !loaded.info.grants.calls(Hook::BeforeToolCall, owner == Some(index)) {
                    continue;
                }
                let wit_turn = tx.turn.clone();
                let current = wit::ToolCall { name: name.to_owned(), arguments: arguments.clone(), step: call.step };
                let needs = |result: &std::result::Result<Option<String>, wit::ToolError>| match result {
                    Ok(Some(_)) => Some(Power::RewriteToolCalls),
                    Ok(None) => None,
                    Err(_) => Some(Power::BlockToolCalls),
                };
                let result = tx
                    .call_with(index, "before-tool-call", needs, |p, store| {
                        Box::pin(async move {
                            p.scratchpad_plugin_hooks().call_before_tool_call(store, &wit_turn, &current).await
                        })
                    })
                    .await?;
                match result {
                    Ok(Some(rewritten)) => arguments = rewritten,
                    Ok(None) => {}
                    Err(error) => {
                        return Err(Error::Tool {
                            plugin: loaded.info.name.clone(),
                            tool: name.to_owned(),
                            error: from_wit_tool_error(error),
                        });
                    }
                }
            }
            Ok(arguments)
        })
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
        let (owner, name) = self.call_owner(call);
        let wit_call = wit::ToolCall { name: name.to_owned(), arguments: call.arguments.clone(), step: call.step };
        transaction!(self, turn, Involved::All, |tx| {
            let mut current = Arc::new(ObservationFacts::new(observation));
            let mut view = ObservationView { replaced_by: None, replacement: None };
            for (index, loaded) in self.inner.plugins.iter().enumerate() {
                if !loaded.info.grants.calls(Hook::AfterToolResult, owner == Some(index)) {
                    continue;
                }
                let (wit_turn, wit_call, data) = (tx.turn.clone(), wit_call.clone(), ObservationData(current.clone()));
                let needs = |replacement: &Option<String>| replacement.as_ref().map(|_| Power::ReplaceToolResults);
                let replacement = tx
                    .call_with(index, "after-tool-result", needs, |p, store| {
                        Box::pin(async move {
                            let handle = store.data_mut().table.push(data)?;
                            p.scratchpad_plugin_hooks()
                                .call_after_tool_result(store, &wit_turn, &wit_call, handle)
                                .await
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
        })
    }

    /// The plugin owning the tool `call` names, if a plugin's, and the name plugins see for it:
    /// a plugin tool called by its API name is named as its plugin declared it.
    fn call_owner<'a>(&'a self, call: &'a ToolCall) -> (Option<usize>, &'a str) {
        match self.find_tool(&call.name) {
            Some((index, name)) => (Some(index), name),
            None => (None, call.name.as_str()),
        }
    }

    /// Asks every plugin whether the runtime should send a warning turn before compacting.
    pub async fn before_compaction(&self, turn: &TurnContext) -> Result<Vec<PluginText>> {
        let _guard = self.lock(&turn.session_id).await;
        transaction!(self, turn, Involved::All, |tx| {
            let mut warnings = Vec::new();
            for (index, loaded) in self.inner.plugins.iter().enumerate() {
                if !loaded.info.grants.calls(Hook::BeforeCompaction, false) {
                    continue;
                }
                let wit_turn = tx.turn.clone();
                let warning = tx
                    .call(index, "before-compaction", |p, store| {
                        Box::pin(
                            async move { p.scratchpad_plugin_hooks().call_before_compaction(store, &wit_turn).await },
                        )
                    })
                    .await?;
                if let Some(text) = warning {
                    warnings.push(PluginText { plugin: loaded.info.name.clone(), text });
                }
            }
            Ok(warnings)
        })
    }

    /// Tells every plugin the runtime compacted the conversation, and counts the compaction.
    pub async fn after_compaction(&self, turn: &TurnContext) -> Result<()> {
        let _guard = self.lock(&turn.session_id).await;
        transaction!(self, turn, Involved::All, |tx| {
            for index in 0..self.inner.plugins.len() {
                let wit_turn = tx.turn.clone();
                tx.call(index, "after-compaction", |p, store| {
                    Box::pin(async move { p.scratchpad_plugin_hooks().call_after_compaction(store, &wit_turn).await })
                })
                .await?;
            }
            Ok(())
        })?;
        self.inner.db.record_compaction(&turn.session_id).await
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
