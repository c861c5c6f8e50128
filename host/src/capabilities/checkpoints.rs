//! The `checkpoints` import: a plugin asks for a rolling checkpoint (seed 002); the host keeps
//! the request with the call and, when the call commits and the turn ends, hands it to the
//! embedder's summarizer (see [`crate::checkpoints`]).

use crate::bindings::scratchpad::plugin::checkpoints::{self as wit, Host};
use crate::capabilities::CallState;
use crate::checkpoints::{Checkpoint, CheckpointTrigger};

impl Host for CallState {
    fn available(&mut self) -> wasmtime::Result<bool> {
        Ok(self.summarizer_available)
    }

    fn request(&mut self, request: wit::CheckpointRequest) -> wasmtime::Result<Result<(), String>> {
        if !self.summarizer_available {
            return Ok(Err(
                "the host has no summarizer: the embedding runtime gave it none (HostConfig::summarizer), \
                           so no checkpoint can be written"
                    .into(),
            ));
        }
        let trigger = match request.trigger {
            wit::Trigger::TokenPercent(p) => CheckpointTrigger::TokenPercent(p),
            wit::Trigger::MessageCount(n) => CheckpointTrigger::MessageCount(n),
        };
        self.checkpoint_request =
            Some(PendingCheckpoint { trigger, tokens: request.tokens, message_count: request.message_count });
        Ok(Ok(()))
    }

    async fn latest(&mut self) -> wasmtime::Result<Option<wit::Checkpoint>> {
        let Some(scope) = &self.session else {
            return Ok(None);
        };
        let (db, session) = (scope.db.clone(), scope.session.clone());
        let latest = db.run(move |conn| crate::db::checkpoints::latest(conn, &session)).await?;
        Ok(latest.map(to_wit))
    }
}

/// A checkpoint asked for by a call, kept until the call commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingCheckpoint {
    pub(crate) trigger: CheckpointTrigger,
    pub(crate) tokens: u64,
    pub(crate) message_count: u32,
}

fn to_wit(c: Checkpoint) -> wit::Checkpoint {
    wit::Checkpoint {
        id: c.id,
        created_at_ms: c.created_at_ms,
        turn_id: c.turn_id,
        trigger: match c.trigger {
            CheckpointTrigger::TokenPercent(p) => wit::Trigger::TokenPercent(p),
            CheckpointTrigger::MessageCount(n) => wit::Trigger::MessageCount(n),
        },
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
