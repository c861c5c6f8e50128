//! The seam between a plugin's logic and the host's `checkpoints` import: asking the
//! embedding runtime for a rolling checkpoint (the context-pressure policy; see `wit/checkpoints.wit`),
//! and reading the session's latest one.

use crate::bindings::scratchpad::plugin::checkpoints as wit_checkpoints;

pub use wit_checkpoints::{Checkpoint, CheckpointRequest, Summary, Trigger};

/// Where a plugin's checkpoint requests go, and where it reads the latest checkpoint.
pub trait Checkpoints {
    /// Whether the host can make checkpoints (the runtime gave it a summarizer).
    fn available(&self) -> bool;
    /// Asks for a checkpoint at the end of the turn; `Err` says why it cannot be made.
    fn request(&mut self, request: CheckpointRequest) -> Result<(), String>;
    /// The most recent checkpoint of the current session, whichever plugin asked for it; `None`
    /// when there is none yet. Default: `None`, for fakes that only record requests.
    fn latest(&self) -> Option<Checkpoint> {
        None
    }
}

/// [`Checkpoints`] through the host's `checkpoints` import. Only usable inside a component.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostCheckpoints;

impl Checkpoints for HostCheckpoints {
    fn available(&self) -> bool {
        wit_checkpoints::available()
    }
    fn request(&mut self, request: CheckpointRequest) -> Result<(), String> {
        wit_checkpoints::request(request)
    }
    fn latest(&self) -> Option<Checkpoint> {
        wit_checkpoints::latest()
    }
}

/// [`Checkpoints`] that records requests, for native unit tests. `available` is what the test
/// says; an unavailable recorder refuses requests as the host does.
#[derive(Debug, Default, Clone)]
pub struct RecordedCheckpoints {
    /// Whether requests are accepted.
    pub available: bool,
    /// Every accepted request, in order.
    pub requests: Vec<CheckpointRequest>,
}

impl Checkpoints for RecordedCheckpoints {
    fn available(&self) -> bool {
        self.available
    }
    fn request(&mut self, request: CheckpointRequest) -> Result<(), String> {
        if !self.available {
            return Err("the host has no summarizer".into());
        }
        self.requests.push(request);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_that_only_records_requests_has_no_latest_checkpoint() {
        let mut recorded = RecordedCheckpoints { available: true, requests: Vec::new() };
        let request = CheckpointRequest { trigger: Trigger::TokenPercent(50), tokens: 10, message_count: 2 };
        recorded.request(request).unwrap();
        assert!(recorded.latest().is_none(), "a request becomes a checkpoint only at the host, at the turn's end");
    }
}
