//! The powers a scratchpad plugin may ask for (the contract's `permissions` export,
//! `wit/plugin.wit`) and its operator may grant: one list of names, shared by the host, which
//! grants them and enforces them (`scratchpad_host::grants`), and the plugin SDK, in which a
//! plugin declares what it asks for (`scratchpad_plugin_sdk::Plugin::POWERS`).

#![no_std]

use core::fmt;

/// A power a plugin may ask for and hold. The names are the contract's (`wit/plugin.wit`,
/// `permissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Power {
    /// `before-query` is called and its injections reach the prompt.
    Inject,
    /// `before-session-create`'s standing guidance reaches every prompt.
    Guidance,
    /// `before-tool-call` may replace a call's arguments.
    RewriteToolCalls,
    /// `before-tool-call` may block a call.
    BlockToolCalls,
    /// `after-tool-result` may replace what the model sees of a result.
    ReplaceToolResults,
    /// `before-compaction` is called and its warning reaches the runtime.
    CompactionWarnings,
    /// `before-tool-call` and `after-tool-result` are called for tools the plugin does not own,
    /// so it reads their arguments and results.
    ReadToolTraffic,
    /// The `storage` import (and copying a parent session's state on fork or spawn).
    Storage,
    /// The `metadata` import.
    Metadata,
    /// The `blobs` import.
    Blobs,
    /// The `checkpoints` import.
    Checkpoints,
    /// The `tokens` import.
    Tokens,
    /// The `log` import.
    Log,
    /// The `config` import.
    Config,
    /// The `index` import: the project's search index, across the project's sessions (new in
    /// contract 0.1.3).
    Index,
}

impl Power {
    /// Every power, in the contract's order.
    pub const ALL: [Power; 15] = [
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
        Power::Index,
    ];

    /// The power's name in the contract and in configuration files.
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
            Power::Index => "index",
        }
    }

    /// The power named `name`, if there is one.
    pub fn parse(name: &str) -> Option<Power> {
        Power::ALL.into_iter().find(|power| power.name() == name)
    }

    /// The power's place in [`Power::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Power {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Power;

    /// Every name parses back to its power, no two powers share a name, and `index` is the
    /// power's place in `ALL` (the host keeps a set of powers as bits at these places).
    #[test]
    fn names_and_places_are_one_to_one() {
        for (place, power) in Power::ALL.into_iter().enumerate() {
            assert_eq!(Power::parse(power.name()), Some(power));
            assert_eq!(power.index(), place, "{power}");
        }
        assert_eq!(Power::parse("network"), None);
        assert_eq!(Power::parse("Inject"), None, "names are exact");
    }
}
