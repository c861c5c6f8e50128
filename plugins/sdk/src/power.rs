//! The powers a plugin asks for (the contract's `permissions` export): a plugin declares them
//! in [`Plugin::POWERS`](crate::Plugin::POWERS), and loads only where its host grants every
//! one. A hook or import it did not ask for is denied, whatever the host would grant.

/// A power a plugin may ask for. `wit/plugin.wit` (`permissions`) says what each allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Power {
    /// `before_query` is called and its injections reach the prompt.
    Inject,
    /// `before_session_create`'s standing guidance reaches every prompt.
    Guidance,
    /// `before_tool_call` may replace a call's arguments.
    RewriteToolCalls,
    /// `before_tool_call` may block a call.
    BlockToolCalls,
    /// `after_tool_result` may replace what the model sees.
    ReplaceToolResults,
    /// `before_compaction` is called and its warning is shown.
    CompactionWarnings,
    /// `before_tool_call` and `after_tool_result` are called for tools this plugin does not own.
    ReadToolTraffic,
    /// The `storage` import ([`HostStorage`](crate::HostStorage)), and copying a parent
    /// session's state on fork or spawn.
    Storage,
    /// The `metadata` import ([`HostMetadata`](crate::HostMetadata)).
    Metadata,
    /// The `blobs` import.
    Blobs,
    /// The `checkpoints` import ([`HostCheckpoints`](crate::HostCheckpoints)).
    Checkpoints,
    /// The `tokens` import ([`HostTokenizer`](crate::HostTokenizer)).
    Tokens,
    /// The `log` import ([`log`](crate::log())).
    Log,
    /// The `config` import ([`config`](crate::config())).
    Config,
}

impl Power {
    /// Every power, in the contract's order.
    pub const ALL: [Power; 14] = [
        Power::Inject,
        Power::Guidance,
        Power::RewriteToolCalls,
        Power::BlockToolCalls,
        Power::ReplaceToolResults,
        Power::CompactionWarnings,
        Power::ReadToolTraffic,
        Power::Storage,
        Power::Metadata,
        Power::Blobs,
        Power::Checkpoints,
        Power::Tokens,
        Power::Log,
        Power::Config,
    ];

    /// The power named `name` in the contract, if there is one.
    pub fn parse(name: &str) -> Option<Power> {
        Power::ALL.into_iter().find(|power| power.name() == name)
    }

    /// The power's name in the contract.
    pub const fn name(self) -> &'static str {
        match self {
            Power::Inject => "inject",
            Power::Guidance => "guidance",
            Power::RewriteToolCalls => "rewrite-tool-calls",
            Power::BlockToolCalls => "block-tool-calls",
            Power::ReplaceToolResults => "replace-tool-results",
            Power::CompactionWarnings => "compaction-warnings",
            Power::ReadToolTraffic => "read-tool-traffic",
            Power::Storage => "storage",
            Power::Metadata => "metadata",
            Power::Blobs => "blobs",
            Power::Checkpoints => "checkpoints",
            Power::Tokens => "tokens",
            Power::Log => "log",
            Power::Config => "config",
        }
    }
}
