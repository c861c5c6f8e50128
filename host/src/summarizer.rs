//! The embedder's [`Summarizer`]: the runtime's model, which the host asks for a structured
//! summary of a session's conversation when a plugin has asked for a checkpoint
//! ([`crate::checkpoints`] stores what it returns). A [`crate::HostConfig`] holds one.

use std::future::Future;
use std::pin::Pin;

use crate::types::{Summary, SummaryRequest};

/// A boxed future, as [`Summarizer::summarize`] returns.
pub type SummaryFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<Summary>> + Send + 'a>>;

/// The embedding runtime's summarizer: asks its (usually cheaper) model for a structured
/// summary of the session's conversation, which only the runtime has.
///
/// ```
/// use scratchpad_host::{Summary, SummaryFuture, SummaryRequest, Summarizer};
///
/// struct MyModel;
///
/// impl Summarizer for MyModel {
///     fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
///         Box::pin(async move {
///             // Look up the conversation of `request.session_id` and ask the model.
///             Ok(Summary { summary: format!("{} messages so far", request.message_count), ..Summary::default() })
///         })
///     }
/// }
/// ```
pub trait Summarizer: Send + Sync + 'static {
    /// Summarises the conversation of `request.session_id`. An error is reported to the
    /// caller of [`crate::Host::after_response`]; no checkpoint is stored for it.
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a>;
}
