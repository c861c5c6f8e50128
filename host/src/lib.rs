//! The scratchpad host: agent working memory as sandboxed WebAssembly component plugins.
//!
//! A [`Host`] loads plugin components (the first-party ones are embedded), runs their hooks
//! and tools in a sandbox that grants nothing but the capabilities of the WIT contract
//! (`wit/`), and keeps their state scoped per plugin and session in one database: an embedded
//! SQLite file, or a PostgreSQL server shared by a fleet of hosts ([`Location`]).
//!
//! ```no_run
//! use scratchpad_host::{Host, HostConfig, Origin, TurnContext};
//!
//! # async fn demo() -> scratchpad_host::Result<()> {
//! let host = Host::open(HostConfig::with_database("/tmp/scratchpad.db")).await?;
//! host.create_session("s1", Origin::New).await?;
//!
//! let turn = TurnContext::new("s1", "turn-1");
//! host.call_tool(&turn, "session.scratchpad", r#"{"action":"set_notes","content":"root cause: tz"}"#).await?;
//!
//! let next = TurnContext::new("s1", "turn-2");
//! let prompt = host.before_query(&next, "continue").await?;
//! println!("{}", prompt.render("You are a coding agent.", "continue").user);
//! # Ok(()) }
//! ```
//!
//! Code that runs outside the model (agent-authored tools) reads, writes and appends a
//! session's notepad with [`Host::notepad`], through the same component and limits.
//!
//! Errors are [`Error`] values: a tool's refusal ([`Error::Tool`]) is distinct from a plugin
//! that broke a limit or trapped ([`Error::Plugin`]), which names the plugin and the hook, and
//! from a commit lost to other processes every time it was tried ([`Error::Conflict`], the one
//! retryable error: [`Error::is_retryable`]).
//!
//! Every item has one path, at the crate's root (the modules `embedded`, `precompiled`,
//! `terminal`, `interop` and `supply` hold what is used less often). The enums and the result
//! structs that will grow are `#[non_exhaustive]`. Tool names as a model sees them are decided
//! here once ([`ToolNames`]), and so is the prompt's text ([`Prompt`]).

#![deny(missing_docs)]

mod bindings;
mod capabilities;
mod checkpoints;
mod compiled;
mod config;
mod digest;
pub mod embedded;
mod engine;
mod error;
mod grants;
mod hooks;
mod host;
mod identity;
mod inspect;
mod instances;
#[cfg(feature = "internals")]
pub mod internals;
pub mod interop;
mod metrics;
mod names;
mod notepad;
mod plugin;
pub mod precompiled;
mod privacy;
mod project;
mod prompt;
mod recall;
mod resources;
mod sandbox;
mod sources;
mod store;
mod summarizer;
pub mod terminal;
mod timestamp;
mod transaction;
mod types;
mod view;
mod wait;
mod warm;

pub use capabilities::tokenizer::Tokenizer;
pub use checkpoints::{Checkpoint, CheckpointTrigger, Summarizer, Summary, SummaryFuture, SummaryRequest};
pub use config::{
    Encoding, HostConfig, InstanceAllocation, Limits, PluginSource, PluginSpec, Recall, RecallMode, SignaturePolicy,
    Subagents, TURN_WAIT, cache_dir, data_dir,
};
pub use error::{Error, FailureKind, PluginFailure, Result};
pub use grants::{Grants, Power};
pub use hooks::PluginText;
pub use host::{CallMemory, Host, MAX_OBSERVATION_READ, MetadataEntry, StateEntry};
pub use inspect::{Inspection, inspect};
pub use metrics::Metrics;
pub use names::{MAX_TOOL_NAME, ToolNameError, ToolNames, api_tool_name};
pub use notepad::{Notepad, NotepadUsage, SANDBOX_TURN_ID};
pub use plugin::{PluginSummary, WORLD};
pub use privacy::{REDACTED, scrub as scrub_private};
pub use project::{MAX_PROJECT_KEY, check_project, project_of_dir};
pub use prompt::{Prompt, RenderedPrompt};
/// Pulling plugins from OCI registries and checking their signatures (re-exported for the CLI
/// and embedders that configure publishers in code).
pub use scratchpad_supply as supply;
pub use store::location::{DATABASE_URL_ENV, redact as redact_database_url};
pub use store::migrate::{MigrationReport, migrate};
pub use store::{
    BlobEntry, EventCount, EventKind, IndexFilter, IndexUsage, IndexedDocument, Location, MAX_EVENT_MESSAGE,
    MAX_EVENTS_PER_SESSION, PluginEvent, SessionRecord,
};
pub use timestamp::iso8601;
pub use types::{
    ContentKind, Injection, Observation, ObservationView, Origin, Placement, ToolCall, ToolError, ToolErrorKind,
    ToolOutput, ToolSpec, TurnContext,
};
pub use view::{
    MAX_ITEM_BYTES, MAX_ITEMS, MAX_KEY_BYTES, MAX_SECTIONS, MAX_TITLE_BYTES, MAX_USAGE_BYTES, PluginView,
    SectionContent, ViewSection,
};
pub use wait::waiting_at_most;
