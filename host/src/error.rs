//! Errors of the embedding API.
//!
//! Callers branch on [`Error`]'s variants: a tool's refusal is not a plugin crash, and neither
//! is a host bug. Every message names what went wrong and, where it can, what to do.

use std::fmt;

use crate::types::ToolError;

/// Why a call into a plugin did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginFailure {
    /// The call ran past its deadline and was interrupted.
    Timeout {
        /// The deadline in milliseconds.
        limit_ms: u64,
    },
    /// The plugin tried to grow its linear memory past the cap.
    MemoryCap {
        /// The cap in bytes.
        limit_bytes: u64,
    },
    /// The plugin returned more output than the output cap allows.
    OutputTooLarge {
        /// Bytes it returned.
        size: u64,
        /// The cap in bytes.
        limit_bytes: u64,
    },
    /// The plugin overflowed the engine's call stack for wasm frames (recursion whose frames
    /// live in linear memory, as Rust's and C's locals may, ends in an out-of-bounds
    /// [`Trap`](PluginFailure::Trap) instead).
    StackOverflow,
    /// The plugin called WASI `exit` instead of returning. WASI 0.2's `exit` carries only
    /// success or failure, so `std::process::exit(7)` arrives as a failure with no code.
    Exited {
        /// Whether it exited with success.
        success: bool,
    },
    /// The plugin trapped (a panic, an `unreachable`, a bad memory access, ...).
    Trap(String),
    /// The plugin returned something the contract does not allow.
    Contract(String),
    /// The plugin used a power it does not hold (an import, or a hook's answer that needs one;
    /// see [`crate::grants`]).
    Denied {
        /// The power's name, e.g. `storage` or `rewrite-tool-calls`.
        power: String,
    },
}

/// The kind of a [`PluginFailure`], without its details: the `kind` label of the host's metrics
/// and of a session's event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FailureKind {
    /// [`PluginFailure::Timeout`].
    Timeout,
    /// [`PluginFailure::MemoryCap`].
    Memory,
    /// [`PluginFailure::OutputTooLarge`].
    OutputCap,
    /// [`PluginFailure::StackOverflow`].
    StackOverflow,
    /// [`PluginFailure::Exited`].
    Exited,
    /// [`PluginFailure::Trap`].
    Trap,
    /// [`PluginFailure::Contract`].
    Contract,
    /// [`PluginFailure::Denied`].
    Denied,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 8] = [
        FailureKind::Timeout,
        FailureKind::Memory,
        FailureKind::OutputCap,
        FailureKind::StackOverflow,
        FailureKind::Exited,
        FailureKind::Trap,
        FailureKind::Contract,
        FailureKind::Denied,
    ];

    /// The kind's name: `timeout`, `memory`, `output_cap`, `stack_overflow`, `exited`, `trap`,
    /// `contract` or `denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Memory => "memory",
            FailureKind::OutputCap => "output_cap",
            FailureKind::StackOverflow => "stack_overflow",
            FailureKind::Exited => "exited",
            FailureKind::Trap => "trap",
            FailureKind::Contract => "contract",
            FailureKind::Denied => "denied",
        }
    }

    /// The kind named `name` ([`FailureKind::as_str`]).
    pub fn parse(name: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PluginFailure {
    /// What kind of failure this is.
    pub fn kind(&self) -> FailureKind {
        match self {
            PluginFailure::Timeout { .. } => FailureKind::Timeout,
            PluginFailure::MemoryCap { .. } => FailureKind::Memory,
            PluginFailure::OutputTooLarge { .. } => FailureKind::OutputCap,
            PluginFailure::StackOverflow => FailureKind::StackOverflow,
            PluginFailure::Exited { .. } => FailureKind::Exited,
            PluginFailure::Trap(_) => FailureKind::Trap,
            PluginFailure::Contract(_) => FailureKind::Contract,
            PluginFailure::Denied { .. } => FailureKind::Denied,
        }
    }
}

impl fmt::Display for PluginFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginFailure::Timeout { limit_ms } => write!(f, "timed out after {limit_ms} ms"),
            PluginFailure::MemoryCap { limit_bytes } => {
                write!(f, "exceeded its memory cap of {}", human_bytes(*limit_bytes))
            }
            PluginFailure::OutputTooLarge { size, limit_bytes } => {
                write!(f, "returned {size} bytes of output, over the output cap of {limit_bytes} bytes")
            }
            PluginFailure::StackOverflow => write!(f, "overflowed its call stack"),
            PluginFailure::Exited { success: true } => write!(f, "exited (WASI exit, success) instead of returning"),
            PluginFailure::Exited { success: false } => write!(
                f,
                "exited (WASI exit, failure) instead of returning; WASI 0.2 passes no exit code, only success or failure"
            ),
            PluginFailure::Trap(message) => write!(f, "trapped: {message}"),
            PluginFailure::Contract(message) => write!(f, "broke the plugin contract: {message}"),
            PluginFailure::Denied { power } => write!(
                f,
                "was denied the power `{power}`, which it does not hold (a plugin holds the powers it asks for in its \
                 `permissions` export once its configuration grants them; docs/security.md)"
            ),
        }
    }
}

/// An error of the embedding API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A plugin failed while running a hook or tool; none of that call's writes persisted.
    #[error("plugin `{plugin}` {failure} in `{hook}`; none of that call's writes were kept")]
    Plugin {
        /// The plugin's name.
        plugin: String,
        /// The hook or tool that was running (`before-query`, `tool session.scratchpad`, ...).
        hook: String,
        /// What happened.
        failure: PluginFailure,
    },
    /// A tool returned an error value; nothing was changed.
    #[error("tool `{tool}` (plugin `{plugin}`) refused the call: {error}")]
    Tool {
        /// The plugin that owns the tool.
        plugin: String,
        /// The tool's name.
        tool: String,
        /// The tool's error.
        error: ToolError,
    },
    /// No loaded plugin declares a tool of this name.
    #[error("no loaded plugin offers a tool named `{0}`; the loaded plugins list their tools")]
    UnknownTool(String),
    /// The session does not exist.
    #[error("session `{0}` does not exist; create it first")]
    SessionNotFound(String),
    /// A session with this id already exists.
    #[error("session `{0}` already exists; choose another id")]
    SessionExists(String),
    /// A plugin could not be loaded.
    #[error("loading plugin `{plugin}`: {message}")]
    Load {
        /// The plugin's name (or file).
        plugin: String,
        /// Why it was refused.
        message: String,
    },
    /// An argument of the API call was invalid; nothing was changed.
    #[error("invalid {what}: {message}")]
    InvalidInput {
        /// Which argument.
        what: &'static str,
        /// What was wrong with it.
        message: String,
    },
    /// The embedder's summarizer failed to write a checkpoint a plugin asked for; the turn's
    /// hooks ran and committed, only the checkpoint is missing.
    #[error("no checkpoint was written for session `{session}`: the summarizer failed {message}")]
    Checkpoint {
        /// The session.
        session: String,
        /// What the summarizer reported, per request.
        message: String,
    },
    /// Another process committed to the session first, every time the operation was run
    /// (it is re-run a bounded number of times); nothing of it was kept. Retryable: the same
    /// call may succeed when the other writers pause.
    #[error(
        "session `{session}`: {attempts} attempts to commit lost to concurrent writers in other processes; \
         nothing was kept, and the call may be retried"
    )]
    Conflict {
        /// The session.
        session: String,
        /// How many times the operation ran.
        attempts: usize,
    },
    /// Another process held the database's write lock for longer than the operation may wait
    /// (the busy timeout, or a bound such as the turn's, [`crate::waiting_at_most`]); nothing
    /// of the operation was kept. Retryable: the same call may succeed once the other writer
    /// is done.
    #[error(
        "the database {database} is locked by another writer (another process holds its write lock); gave up \
         after {waited_ms} ms — nothing was kept, and the call may be retried once that writer is done"
    )]
    Busy {
        /// The database (a file's path).
        database: String,
        /// How long the operation waited, in milliseconds.
        waited_ms: u64,
    },
    /// The disk holding the database is full; nothing of the operation was kept. Once there is
    /// room the same call, and the same host, work again.
    #[error("the disk holding the database {database} is full; nothing was kept — free some space on it and retry")]
    DiskFull {
        /// The database (a file's path).
        database: String,
    },
    /// The database cannot be written: its file, or the directory or filesystem holding it,
    /// is read-only; nothing of the operation was kept.
    #[error(
        "the database {database} cannot be written: its file, directory or filesystem is read-only; nothing was \
         kept — make it writable, or use a database elsewhere"
    )]
    ReadOnly {
        /// The database (a file's path).
        database: String,
    },
    /// The database server cannot be reached, or it ended the connection mid-operation (it
    /// was stopped or restarted). The operation was not completed and nothing of it was kept —
    /// with one exception: when the connection broke after a commit was sent and before the
    /// server answered, that commit may have landed. Retryable: the same host serves the call
    /// once the server is back, on new connections.
    #[error(
        "the database server is unavailable: {cause}; the operation was not completed and nothing of it was \
         kept (unless the connection broke while a commit was on its way) — retry once the server is back"
    )]
    Unavailable {
        /// What failed (naming the server, by its URL without the password, when connecting
        /// to it failed).
        cause: String,
    },
    /// Anything else: storage I/O, configuration files, host bugs.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl Error {
    /// Whether the same call may succeed if made again unchanged: a lost commit race
    /// ([`Error::Conflict`]), a lock held by another writer ([`Error::Busy`]), a database
    /// server away ([`Error::Unavailable`]).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Conflict { .. } | Error::Busy { .. } | Error::Unavailable { .. })
    }

    /// The [`Error`] in `error`'s chain of causes (an error of the embedding API wrapped with
    /// context on its way up), looking through [`Error::Other`] to a named one inside it.
    pub fn find(error: &anyhow::Error) -> Option<&Error> {
        let mut found = None;
        for cause in error.chain() {
            match cause.downcast_ref::<Error>() {
                Some(Error::Other(_)) => found = found.or(cause.downcast_ref::<Error>()),
                Some(named) => return Some(named),
                None => {}
            }
        }
        found
    }

    pub(crate) fn invalid(what: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidInput { what, message: message.into() }
    }

    /// A short machine-readable name of the error's kind, used in JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Plugin { .. } => "plugin-failed",
            Error::Tool { error, .. } => error.kind.as_str(),
            Error::UnknownTool(_) => "unknown-tool",
            Error::SessionNotFound(_) => "session-not-found",
            Error::SessionExists(_) => "session-exists",
            Error::Load { .. } => "load-refused",
            Error::InvalidInput { .. } => "invalid-input",
            Error::Checkpoint { .. } => "checkpoint-failed",
            Error::Conflict { .. } => "conflict",
            Error::Busy { .. } => "busy",
            Error::DiskFull { .. } => "disk-full",
            Error::ReadOnly { .. } => "read-only",
            Error::Unavailable { .. } => "unavailable",
            Error::Other(_) => "internal",
        }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Other(anyhow::Error::new(error).context("database error"))
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `65536` → `64 KiB`, `67108864` → `64 MiB`; exact byte counts otherwise.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The deadline error the epoch callback traps with, and host imports that stop their own
/// work at the call's deadline return.
#[derive(Debug, thiserror::Error)]
#[error("deadline exceeded")]
pub(crate) struct DeadlineExceeded;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_kind_is_named_once_and_read_back_by_its_name() {
        let names: std::collections::BTreeSet<&str> = FailureKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), FailureKind::ALL.len(), "distinct names");
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(PluginFailure::Timeout { limit_ms: 1 }.kind(), FailureKind::Timeout);
        assert_eq!(PluginFailure::Denied { power: "storage".into() }.kind().as_str(), "denied");
        assert_eq!(FailureKind::parse("quota"), None, "a quota refusal is an event, not a failure");
    }
}
