//! Rolling checkpoints (the context-pressure policy): the checkpoint records the host keeps for
//! each session, written from what the embedder's [`Summarizer`] (`summarizer.rs`) returns.
//!
//! A plugin (the context-guard component) decides when a checkpoint is due and asks for one
//! through the `checkpoints` import. Only the embedding runtime has the conversation and a
//! model, so the host hands the request to the runtime's [`Summarizer`] when the turn ends —
//! after every plugin's `after-response` hook ran and committed, outside any plugin's deadline
//! and with the session unlocked — and stores what it returns. The runtime reads the records
//! back with [`crate::Host::latest_checkpoint`] and, when it compacts, with
//! [`crate::Host::compaction_checkpoint`] (the context-pressure policy's fast path).

use crate::capabilities::call::PendingCheckpoint;
use crate::error::{Error, Result};
use crate::host::Host;
pub use crate::summarizer::{Summarizer, SummaryFuture};
pub use crate::types::{Checkpoint, CheckpointTrigger, Summary, SummaryRequest};

impl Host {
    /// Every checkpoint of session `id`, oldest first.
    pub async fn checkpoints(&self, id: &str) -> Result<Vec<Checkpoint>> {
        self.session(id).await?;
        self.inner.db.checkpoints(id).await
    }

    /// The newest checkpoint of session `id`.
    pub async fn latest_checkpoint(&self, id: &str) -> Result<Option<Checkpoint>> {
        self.session(id).await?;
        self.inner.db.latest_checkpoint(id).await
    }

    /// The context-pressure policy's compaction fast path: the newest checkpoint of session `id` when it covers
    /// at least half of the conversation's `tokens_now` ([`Checkpoint::covers`]), so the
    /// runtime can compact with it and skip a summarisation call; `None` means summarise now.
    pub async fn compaction_checkpoint(&self, id: &str, tokens_now: u64) -> Result<Option<Checkpoint>> {
        Ok(self.latest_checkpoint(id).await?.filter(|c| c.covers(tokens_now)))
    }

    /// Hands the checkpoints requested in session `turn`'s calls to the summarizer and stores
    /// what it writes. Runs at the end of a turn with the session unlocked; a summarizer error
    /// is reported after every request was tried.
    pub(crate) async fn write_checkpoints(&self, turn: &crate::TurnContext) -> Result<Vec<Checkpoint>> {
        let requests: Vec<(String, PendingCheckpoint)> = {
            let mut queue = self.inner.checkpoint_requests.lock().unwrap();
            let (mine, rest) = std::mem::take(&mut *queue).into_iter().partition(|(s, _, _)| *s == turn.session_id);
            *queue = rest;
            mine.into_iter().map(|(_, plugin, request)| (plugin, request)).collect()
        };
        let Some(summarizer) = self.inner.summarizer.clone() else {
            // Requests are refused without a summarizer, so there are none to drop here.
            return Ok(Vec::new());
        };
        let mut written = Vec::new();
        let mut failures = Vec::new();
        for (plugin, pending) in requests {
            let request = SummaryRequest {
                session_id: turn.session_id.clone(),
                turn_id: turn.turn_id.clone(),
                plugin,
                trigger: pending.trigger,
                tokens: pending.tokens,
                message_count: pending.message_count,
            };
            let plugin = request.plugin.clone();
            let stored = match summarizer.summarize(&request).await {
                Ok(summary) => self.inner.db.checkpoint_insert(&request, &summary).await,
                Err(error) => Err(Error::Other(error)),
            };
            match stored {
                Ok(checkpoint) => written.push(checkpoint),
                Err(error) => failures.push(format!("for plugin `{plugin}`: {error:#}")),
            }
        }
        if !failures.is_empty() {
            return Err(Error::Checkpoint { session: turn.session_id.clone(), message: failures.join("; ") });
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(tokens: u64) -> Checkpoint {
        Checkpoint {
            id: "1_abcd".into(),
            parent_id: None,
            session_id: "s".into(),
            plugin: "p".into(),
            turn_id: "t".into(),
            created_at_ms: 1,
            trigger: CheckpointTrigger::TokenPercent(50),
            tokens_at_checkpoint: tokens,
            message_count_at_checkpoint: 3,
            checkpoint: Summary::default(),
        }
    }

    #[test]
    fn a_checkpoint_serves_the_fast_path_when_it_covers_more_than_half_the_tokens() {
        assert!(at(50_001).covers(100_000));
        assert!(!at(50_000).covers(100_000), "exactly half is not more than half");
        assert!(at(u64::MAX).covers(u64::MAX));
    }
}
