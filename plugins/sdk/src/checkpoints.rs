//! The seam between a plugin's logic and the host's `checkpoints` import: asking the
//! embedding runtime for a rolling checkpoint (the context-pressure policy; see `wit/checkpoints.wit`).

use crate::bindings::scratchpad::plugin::checkpoints as wit_checkpoints;

pub use wit_checkpoints::{Checkpoint, CheckpointRequest, Summary, Trigger};

/// Where a plugin's checkpoint requests go.
pub trait Checkpoints {
    /// Whether the host can make checkpoints (the runtime gave it a summarizer).
    fn available(&self) -> bool;
    /// Asks for a checkpoint at the end of the turn; `Err` says why it cannot be made.
    fn request(&mut self, request: CheckpointRequest) -> Result<(), String>;
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
