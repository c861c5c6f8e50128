//! [`Guard`]: the component's hooks as plain Rust over the SDK's seams (storage, tokenizer,
//! metadata, checkpoints), so they run natively in unit tests and inside the component alike.

use scratchpad_plugin_sdk::{
    CheckpointRequest, Checkpoints, Injection, Manifest, Metadata, Placement, Storage, Tokenizer, ToolCall, Turn,
};

use crate::config::{CheckpointMode, Config, FLUSH_90, Warning};
use crate::state::GuardState;
use crate::usage::{Source, Usage, context_line};
use crate::{checkpoint, flush};

/// The metadata key of the context-pressure policy's flush tracking: `true` once the agent wrote a memory file
/// in the turn of the urgent flush, `false` from the flush until then.
pub const FLUSH_ACTIONED: &str = "flushActioned";

/// The session notepad's pre-compaction warning, for agents that keep their working state in the notepad
/// (the scratchpad component gives the same turn with its own noun).
pub const NOTEPAD_WARNING: &str = "[System] Context is approaching the token limit and will be compacted after your \
                                   next response. Review your session notepad and update it with any working state, \
                                   findings, or progress you need to preserve. Conversation details may be \
                                   summarized during compaction, but the notepad is kept in full.";

/// The context-guard policy over one session's storage.
pub struct Guard<'a, S, T, M, C> {
    storage: &'a mut S,
    tokenizer: &'a T,
    metadata: &'a mut M,
    checkpoints: &'a mut C,
    config: &'a Config,
    /// What went wrong on the way (a state that could not be saved, a refused checkpoint
    /// request): the hooks have no error channel, so the component logs these.
    pub warnings: Vec<String>,
}

/// Checks the configuration against what the host can do and declares the (empty) tool list.
pub fn load(config: &Config, checkpoints: &impl Checkpoints) -> Result<Manifest, String> {
    if config.enabled && config.checkpoints == CheckpointMode::On && !checkpoints.available() {
        return Err("checkpoint.enabled is true, but the host has no summarizer to write checkpoints with: give \
                    the host one (HostConfig::summarizer in Rust), or set checkpoint.enabled to \"auto\" or false"
            .into());
    }
    Ok(Manifest { tools: Vec::new() })
}

impl<'a, S: Storage, T: Tokenizer, M: Metadata, C: Checkpoints> Guard<'a, S, T, M, C> {
    /// The policy over these seams.
    pub fn new(
        storage: &'a mut S,
        tokenizer: &'a T,
        metadata: &'a mut M,
        checkpoints: &'a mut C,
        config: &'a Config,
    ) -> Self {
        Guard { storage, tokenizer, metadata, checkpoints, config, warnings: Vec::new() }
    }

    /// A turn starts: the context line, and the flush prompt due at this usage.
    ///
    /// Usage is the runtime's figure for the turn when it gives one, else the last known
    /// figure plus the tokens of the new message (the context-pressure policy's pre-turn estimate).
    pub fn before_query(&mut self, turn: &Turn, message: &str) -> Vec<Injection> {
        if !self.config.enabled {
            return Vec::new();
        }
        let (before, mut state) = self.load();
        let usage = Usage::new(turn.tokens_used, state.last_tokens, || u64::from(self.tokenizer.count(message)));
        // An estimate is kept for `after-response` to build on; the runtime's own figure is not
        // (it gives it again), so a turn under the runtime's figures writes nothing here.
        state.turn_tokens = (usage.source == Source::Estimate).then_some(usage.tokens);
        let mut injections = Vec::new();
        if let Some(window) = self.config.window(turn.context_window) {
            if self.config.show_context {
                injections.push(Injection { placement: Placement::AppendSystem, text: context_line(usage, window) });
            }
            if self.config.flush_enabled {
                let thresholds = &self.config.thresholds;
                if let Some(threshold) = flush::due(thresholds, &mut state.flush_fired, usage.percent(window)) {
                    injections.push(flush::injection(threshold));
                    if flush::is_urgent(thresholds, threshold) {
                        state.urgent_flush_turn = Some(turn.turn_id.clone());
                        self.publish(FLUSH_ACTIONED, "false");
                    }
                }
            }
        }
        self.save(&before, &state);
        injections
    }

    /// The turn ended with `reply`: records the usage and requests a checkpoint when one is due.
    pub fn after_response(&mut self, turn: &Turn, reply: &str) {
        if !self.config.enabled {
            return;
        }
        let (before, mut state) = self.load();
        let base = state.turn_tokens.or(state.last_tokens);
        let usage = Usage::new(turn.tokens_used, base, || u64::from(self.tokenizer.count(reply)));
        state.last_tokens = Some(usage.tokens);
        state.turn_tokens = None;
        if self.checkpoints_on() {
            let messages = turn.turn_index.saturating_add(1);
            let window = self.config.window(turn.context_window);
            if let Some(trigger) = checkpoint::due(self.config, &mut state, usage.tokens, window, messages) {
                let request = CheckpointRequest { trigger, tokens: usage.tokens, message_count: messages };
                match self.checkpoints.request(request) {
                    Ok(()) => state.messages_at_checkpoint = messages,
                    Err(e) => self.warnings.push(format!("the checkpoint request was refused: {e}")),
                }
            }
        }
        self.save(&before, &state);
    }

    /// Watches tool calls for the agent acting on the urgent flush; never changes or blocks one.
    pub fn before_tool_call(&mut self, turn: &Turn, call: &ToolCall) {
        if !self.config.enabled {
            return;
        }
        // The argument check first: most tool calls are not memory writes, and it needs no state.
        if !flush::is_memory_write(self.config, call) {
            return;
        }
        let (_, state) = self.load();
        if state.urgent_flush_turn.as_deref() == Some(turn.turn_id.as_str()) {
            self.publish(FLUSH_ACTIONED, "true");
        }
    }

    /// The warning turn, when usage has reached the compaction threshold (the context-pressure policy's
    /// `ShouldCompact`: used ≥ window − reserveTokens).
    pub fn before_compaction(&mut self, turn: &Turn) -> Option<String> {
        if !self.config.enabled {
            return None;
        }
        let (_, state) = self.load();
        let tokens = turn.tokens_used.or(state.last_tokens)?;
        let window = self.config.window(turn.context_window)?;
        if tokens < window.saturating_sub(self.config.reserve_tokens) {
            return None;
        }
        Some(match &self.config.warning {
            Warning::Flush => FLUSH_90.to_owned(),
            Warning::Notepad => NOTEPAD_WARNING.to_owned(),
            Warning::Text(text) => text.clone(),
        })
    }

    /// The conversation was compacted: a new cycle starts, every threshold is armed again.
    pub fn after_compaction(&mut self, _turn: &Turn) {
        if !self.config.enabled {
            return;
        }
        let (before, state) = self.load();
        let next = GuardState { messages_at_checkpoint: state.messages_at_checkpoint, ..GuardState::default() };
        self.save(&before, &next);
    }

    fn checkpoints_on(&self) -> bool {
        match self.config.checkpoints {
            CheckpointMode::On => true,
            CheckpointMode::Off => false,
            CheckpointMode::Auto => self.checkpoints.available(),
        }
    }

    fn load(&mut self) -> (GuardState, GuardState) {
        let (state, warning) = GuardState::load(self.storage);
        self.warnings.extend(warning);
        (state.clone(), state)
    }

    fn save(&mut self, before: &GuardState, state: &GuardState) {
        if let Err(e) = state.save(before, self.storage) {
            self.warnings.push(e);
        }
    }

    fn publish(&mut self, key: &str, value: &str) {
        if self.metadata.get(key).as_deref() == Some(value) {
            return;
        }
        if let Err(e) = self.metadata.set(key, value) {
            self.warnings.push(format!("could not publish `{key}`: {e:?}"));
        }
    }
}

#[cfg(test)]
mod tests;
