//! The `checkpoints` import: a plugin asks for a rolling checkpoint (the context-pressure policy); the host keeps
//! the request with the call and, when the call commits and the turn ends, hands it to the
//! embedder's summarizer (see [`crate::checkpoints`]).

use crate::bindings::scratchpad::plugin::checkpoints::{self as wit, Host};
use crate::capabilities::call::{CallState, PendingCheckpoint, within_deadline};
use crate::types::{Checkpoint, CheckpointTrigger};

impl Host for CallState {
    fn available(&mut self) -> wasmtime::Result<bool> {
        self.require(crate::grants::Power::Checkpoints)?;
        Ok(self.summarizer_available)
    }

    fn request(&mut self, request: wit::CheckpointRequest) -> wasmtime::Result<Result<(), String>> {
        self.require(crate::grants::Power::Checkpoints)?;
        if !self.summarizer_available {
            return Ok(Err(
                "the host has no summarizer: the embedding runtime gave it none (HostConfig::summarizer), \
                           so no checkpoint can be written"
                    .into(),
            ));
        }
        if let wit::Trigger::TokenPercent(percent @ 101..) = request.trigger {
            return Ok(Err(format!("token-percent must be 0 to 100, not {percent}: nothing was requested")));
        }
        let trigger = CheckpointTrigger::from(request.trigger);
        self.checkpoint_request =
            Some(PendingCheckpoint { trigger, tokens: request.tokens, message_count: request.message_count });
        Ok(Ok(()))
    }

    async fn latest(&mut self) -> wasmtime::Result<Option<wit::Checkpoint>> {
        self.require(crate::grants::Power::Checkpoints)?;
        let Some(scope) = &self.session else {
            return Ok(None);
        };
        let latest = within_deadline(self.deadline, scope.db.latest_checkpoint(&scope.session)).await?;
        Ok(latest.map(to_wit))
    }
}

fn to_wit(c: Checkpoint) -> wit::Checkpoint {
    wit::Checkpoint {
        id: c.id,
        created_at_ms: c.created_at_ms,
        turn_id: c.turn_id,
        trigger: c.trigger.into(),
        tokens_at_checkpoint: c.tokens_at_checkpoint,
        message_count_at_checkpoint: c.message_count_at_checkpoint,
        summary: wit::Summary {
            summary: c.checkpoint.summary,
            topics: c.checkpoint.topics,
            key_decisions: c.checkpoint.key_decisions,
            open_questions: c.checkpoint.open_questions,
        },
    }
}

impl From<wit::Trigger> for CheckpointTrigger {
    fn from(trigger: wit::Trigger) -> Self {
        match trigger {
            wit::Trigger::TokenPercent(p) => CheckpointTrigger::TokenPercent(p),
            wit::Trigger::MessageCount(n) => CheckpointTrigger::MessageCount(n),
        }
    }
}

impl From<CheckpointTrigger> for wit::Trigger {
    fn from(trigger: CheckpointTrigger) -> Self {
        match trigger {
            CheckpointTrigger::TokenPercent(p) => wit::Trigger::TokenPercent(p),
            CheckpointTrigger::MessageCount(n) => wit::Trigger::MessageCount(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::capabilities::call::PluginInfo;
    use crate::capabilities::scope::Scope;
    use crate::capabilities::tokenizer::Tokenizer;
    use crate::config::{Encoding, Limits};

    fn call(summarizer_available: bool) -> CallState {
        let grants = crate::grants::Grants::ALL;
        let info =
            Arc::new(PluginInfo { name: "p".into(), limits: Limits::default(), config_json: "{}".into(), grants });
        let mut state = CallState::new(info, Scope::default(), Arc::new(Tokenizer::new(Encoding::Cl100kBase)));
        state.summarizer_available = summarizer_available;
        state
    }

    fn ask(trigger: wit::Trigger) -> wit::CheckpointRequest {
        wit::CheckpointRequest { trigger, tokens: 1_000, message_count: 3 }
    }

    #[test]
    fn a_request_is_kept_for_the_call_and_a_second_replaces_the_first() {
        let mut state = call(true);
        state.request(ask(wit::Trigger::TokenPercent(25))).unwrap().unwrap();
        state.request(ask(wit::Trigger::MessageCount(15))).unwrap().unwrap();
        let kept = state.checkpoint_request.unwrap();
        assert_eq!(kept.trigger, CheckpointTrigger::MessageCount(15));
        assert_eq!((kept.tokens, kept.message_count), (1_000, 3));
    }

    #[test]
    fn a_percentage_over_100_or_no_summarizer_is_refused_and_keeps_nothing() {
        let mut state = call(true);
        let refused = state.request(ask(wit::Trigger::TokenPercent(101))).unwrap().unwrap_err();
        assert!(refused.contains("0 to 100") && refused.contains("101"), "{refused}");
        assert_eq!(state.checkpoint_request, None);
        state.request(ask(wit::Trigger::TokenPercent(100))).unwrap().unwrap();
        assert_eq!(state.checkpoint_request.unwrap().trigger, CheckpointTrigger::TokenPercent(100));

        let mut without = call(false);
        let refused = without.request(ask(wit::Trigger::TokenPercent(50))).unwrap().unwrap_err();
        assert!(refused.contains("no summarizer"), "{refused}");
        assert_eq!(without.checkpoint_request, None);
    }
}
