//! The values of the embedding API: what a runtime passes in and gets back.
//!
//! They mirror the WIT contract's types (`wit/types.wit`) as plain, serde-friendly Rust, so an
//! embedder never touches generated bindings.

use serde::{Deserialize, Serialize};

/// Where an injection goes in the prompt (see `placement` in `wit/types.wit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Placement {
    /// Before the runtime's own system prompt.
    PrependSystem,
    /// After the runtime's own system prompt.
    AppendSystem,
    /// Before the user's message.
    PrependContext,
    /// After the user's message.
    AppendContext,
}

impl Placement {
    /// All placements, in the order they appear in a rendered prompt.
    pub const ALL: [Placement; 4] =
        [Placement::PrependSystem, Placement::AppendSystem, Placement::PrependContext, Placement::AppendContext];

    /// The placement's name as written in the WIT contract and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::PrependSystem => "prepend-system",
            Placement::AppendSystem => "append-system",
            Placement::PrependContext => "prepend-context",
            Placement::AppendContext => "append-context",
        }
    }
}

/// A piece of text a plugin wants the model to see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The plugin that produced it.
    pub plugin: String,
    /// Where it goes.
    pub placement: Placement,
    /// The text.
    pub text: String,
}

/// How a session is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
#[non_exhaustive]
pub enum Origin {
    /// A new session with no parent.
    New,
    /// A sub-session of `parent`; plugins copy their state only when `copy` is true.
    Spawn {
        /// The parent session.
        parent: String,
        /// Whether the caller asked for the parent's working state to be copied.
        copy: bool,
    },
    /// A fork of `parent`: plugins copy their state.
    Fork {
        /// The parent session.
        parent: String,
    },
}

/// `new`, `spawn of P` (`spawn of P (copied)`), `fork of P`: how a person reads an origin.
impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::New => f.write_str("new"),
            Origin::Spawn { parent, copy } => write!(f, "spawn of {parent}{}", if *copy { " (copied)" } else { "" }),
            Origin::Fork { parent } => write!(f, "fork of {parent}"),
        }
    }
}

impl Origin {
    /// The parent session, if any.
    pub fn parent(&self) -> Option<&str> {
        match self {
            Origin::New => None,
            Origin::Spawn { parent, .. } | Origin::Fork { parent } => Some(parent),
        }
    }
}

/// The turn a call belongs to, as the runtime knows it. The host adds the turn's index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnContext {
    /// The session.
    pub session_id: String,
    /// The runtime's id for this turn. A new id starts a new turn.
    pub turn_id: String,
    /// Tokens the conversation uses now, when the runtime knows it.
    #[serde(default)]
    pub tokens_used: Option<u64>,
    /// The model's context window in tokens, when the runtime knows it.
    #[serde(default)]
    pub context_window: Option<u64>,
}

impl TurnContext {
    /// A turn of `session_id` with id `turn_id` and no token figures.
    pub fn new(session_id: impl Into<String>, turn_id: impl Into<String>) -> Self {
        TurnContext { session_id: session_id.into(), turn_id: turn_id.into(), tokens_used: None, context_window: None }
    }

    /// The same turn with the runtime's token figures.
    pub fn with_tokens(mut self, used: u64, window: u64) -> Self {
        self.tokens_used = Some(used);
        self.context_window = Some(window);
        self
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The plugin that owns the tool.
    pub plugin: String,
    /// The tool's name.
    pub name: String,
    /// The name a model API accepts for it ([`api_tool_name`](crate::api_tool_name)): the name
    /// to offer the model; the host takes it wherever it takes the tool's name.
    #[serde(default)]
    pub api_name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments, as JSON text.
    pub parameters: String,
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments as JSON text.
    pub arguments: String,
    /// 1-based position of the call among the turn's tool calls.
    pub step: u32,
}

impl ToolCall {
    /// A call of `name` with `arguments` (JSON text) as step `step` of its turn.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>, step: u32) -> Self {
        ToolCall { name: name.into(), arguments: arguments.into(), step }
    }
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The plugin that ran the tool.
    pub plugin: String,
    /// What the model sees.
    pub content: String,
}

/// The kind of a tool error (see `tool-error` in `wit/types.wit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// No such tool.
    UnknownTool,
    /// Malformed arguments.
    InvalidArguments,
    /// Refused, e.g. over budget.
    Rejected,
    /// The named thing does not exist.
    NotFound,
    /// Anything else.
    Failed,
}

impl ToolErrorKind {
    /// The kind's name as written in the WIT contract and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::UnknownTool => "unknown-tool",
            ToolErrorKind::InvalidArguments => "invalid-arguments",
            ToolErrorKind::Rejected => "rejected",
            ToolErrorKind::NotFound => "not-found",
            ToolErrorKind::Failed => "failed",
        }
    }
}

/// A tool's failure: a value for the model, never a crash. A failed call changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{}: {message}", kind.as_str())]
pub struct ToolError {
    /// What kind of failure.
    pub kind: ToolErrorKind,
    /// The message for the model.
    pub message: String,
}

/// What kind of bytes an observation holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ContentKind {
    /// UTF-8 text.
    Text,
    /// Anything else.
    Binary,
}

/// A tool's result handed to `after_tool_result`.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The bytes.
    pub bytes: std::sync::Arc<[u8]>,
    /// Text or binary; `None` lets the host sniff it (valid UTF-8 is text).
    pub kind: Option<ContentKind>,
    /// The tool's metadata about the result (a JSON object).
    pub metadata: serde_json::Value,
}

impl Observation {
    /// A text observation with no metadata.
    pub fn text(text: impl Into<String>) -> Self {
        Observation {
            bytes: text.into().into_bytes().into(),
            kind: Some(ContentKind::Text),
            metadata: serde_json::json!({}),
        }
    }

    /// An observation of raw bytes whose kind the host sniffs.
    pub fn bytes(bytes: impl Into<std::sync::Arc<[u8]>>) -> Self {
        Observation { bytes: bytes.into(), kind: None, metadata: serde_json::json!({}) }
    }

    /// The same observation with the tool's metadata.
    pub fn with_metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = metadata;
        self
    }
}

/// What the model sees of a tool result after every plugin's `after-tool-result`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ObservationView {
    /// The last plugin that replaced the observation, if any.
    pub replaced_by: Option<String>,
    /// The replacement text, or `None` when the model sees the original unchanged.
    pub replacement: Option<String>,
}

/// Why a checkpoint was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
#[non_exhaustive]
pub enum CheckpointTrigger {
    /// The conversation reached this percentage of the context window.
    TokenPercent(u8),
    /// This many user messages since the previous checkpoint.
    MessageCount(u32),
}

/// What the host asks the embedder's summarizer for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SummaryRequest {
    /// The session to summarise.
    pub session_id: String,
    /// The turn that just ended.
    pub turn_id: String,
    /// The plugin that asked.
    pub plugin: String,
    /// Why.
    pub trigger: CheckpointTrigger,
    /// Tokens the conversation uses now.
    pub tokens: u64,
    /// User messages in the session so far.
    pub message_count: u32,
}

/// The structured summary the context-pressure policy asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Prose summary of the conversation so far.
    pub summary: String,
    /// Topics discussed.
    pub topics: Vec<String>,
    /// Decisions taken.
    pub key_decisions: Vec<String>,
    /// Questions still open.
    pub open_questions: Vec<String>,
}

/// A stored checkpoint, with the context-pressure policy's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Checkpoint {
    /// `{unix_ms}_{4 hex}`.
    pub id: String,
    /// The previous checkpoint of the session, if any (records link by `parentId`).
    pub parent_id: Option<String>,
    /// The session.
    pub session_id: String,
    /// The plugin that asked for it.
    pub plugin: String,
    /// The turn at whose end it was written.
    pub turn_id: String,
    /// When it was stored, Unix milliseconds.
    pub created_at_ms: u64,
    /// Why it was written.
    pub trigger: CheckpointTrigger,
    /// Tokens the conversation used when it was requested.
    pub tokens_at_checkpoint: u64,
    /// User messages when it was requested.
    pub message_count_at_checkpoint: u32,
    /// What the summarizer wrote.
    pub checkpoint: Summary,
}

impl Checkpoint {
    /// The context-pressure policy's fast-path rule: a checkpoint can stand in for a fresh summary when it
    /// covers more than half of the conversation's `tokens_now` (`TokensAtCheckpoint >
    /// TotalTokens * 0.5`).
    pub fn covers(&self, tokens_now: u64) -> bool {
        u128::from(self.tokens_at_checkpoint) * 2 > u128::from(tokens_now)
    }
}
