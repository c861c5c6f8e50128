//! The guest-side SDK for scratchpad plugins.
//!
//! A plugin is a WebAssembly component built for `wasm32-wasip2` that implements the
//! `scratchpad:plugin/plugin` world (see the WIT files in the repository's `wit/` folder).
//! This crate generates the bindings for that world and gives every hook a no-op default, so a
//! plugin implements only what it uses:
//!
//! ```
//! use scratchpad_plugin_sdk::{export_plugin, Injection, Placement, Plugin, Turn};
//!
//! struct Hello;
//!
//! impl Plugin for Hello {
//!     fn before_query(_turn: Turn, _message: String) -> Vec<Injection> {
//!         vec![Injection { placement: Placement::AppendSystem, text: "Be brief.".into() }]
//!     }
//! }
//!
//! export_plugin!(Hello);
//! ```
//!
//! Plugins keep their logic in plain Rust behind the [`Storage`] and [`Tokenizer`] traits, so
//! the same code runs natively in unit tests (with [`MemoryStorage`]) and inside the component
//! (with [`HostStorage`] and [`HostTokenizer`], which call the host's imports).

#![deny(missing_docs)]

pub mod args;
mod checkpoints;
pub mod config;
mod index;
mod metadata;
mod storage;

pub use checkpoints::{
    Checkpoint, CheckpointRequest, Checkpoints, HostCheckpoints, RecordedCheckpoints, Summary, Trigger,
};
pub use index::{Access, Document, Hit, HostIndex, Index, IndexError, MemoryIndex, Query, Stored};
pub use metadata::{HostMetadata, MemoryMetadata, Metadata, MetadataError};
/// The powers a plugin asks for, by the names the host grants (crate `scratchpad-powers`).
pub use scratchpad_powers::Power;
pub use storage::{HostStorage, HostTokenizer, MemoryStorage, Storage, Tokenizer, WordTokenizer};

/// The raw bindings generated from the WIT contract. Most plugins need only the re-exports at
/// the crate root.
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit",
        world: "scratchpad:plugin/plugin",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "scratchpad_plugin_sdk::bindings",
    });
}

pub use bindings::exports::scratchpad::plugin::lifecycle::Manifest;
pub use bindings::exports::scratchpad::plugin::view::{Content, Section};
pub use bindings::scratchpad::plugin::blobs::{self, BlobError, Entry, NewEntry};
pub use bindings::scratchpad::plugin::log::Level;
pub use bindings::scratchpad::plugin::observation::{ContentKind, Observation};
pub use bindings::scratchpad::plugin::storage::{Quota, StorageError};
pub use bindings::scratchpad::plugin::types::{
    Injection, Origin, Placement, SessionInfo, SessionSetup, SpawnOrigin, ToolCall, ToolError, ToolOutput, ToolSpec,
    Turn,
};

/// Writes a record to the host's log, tagged with this plugin's name.
pub fn log(level: Level, message: &str) {
    bindings::scratchpad::plugin::log::log(level, message);
}

/// This plugin's configuration as JSON object text (`{}` when none was given); check it with
/// the helpers of [`mod@config`].
pub fn config() -> String {
    bindings::scratchpad::plugin::config::get()
}

/// A scratchpad plugin. Every method has a default that does nothing, so a plugin implements
/// only the hooks and tools it uses. The methods take no `self`: each call runs in a fresh
/// instance, and everything a plugin remembers lives in host storage.
///
/// The meaning of each hook is documented on the WIT contract (`wit/plugin.wit`).
pub trait Plugin {
    /// The powers this plugin asks for: every hook answer and import it uses beyond the
    /// defaults needs one ([`Power`]). A host loads it only when it grants all of them, and
    /// denies what is not listed here. Default: none.
    const POWERS: &'static [Power] = &[];

    /// The powers this plugin asks for when the host loads it. Default: [`Plugin::POWERS`].
    /// Override it only to ask according to the configuration ([`config`], readable here when
    /// the host grants `config`), e.g. `blobs` only when offloading is on.
    fn requested_powers() -> Vec<Power> {
        Self::POWERS.to_vec()
    }

    /// A session is being created. Default: no guidance, no inheritance.
    fn before_session_create(session: SessionInfo) -> SessionSetup {
        let _ = session;
        SessionSetup { injections: Vec::new(), inherit_parent_state: false }
    }

    /// A turn starts with `message`. Default: nothing injected.
    fn before_query(turn: Turn, message: String) -> Vec<Injection> {
        let _ = (turn, message);
        Vec::new()
    }

    /// The model replied `text`. Default: ignored.
    fn after_response(turn: Turn, text: String) {
        let _ = (turn, text);
    }

    /// A tool is about to be called. Default: arguments left as they are.
    fn before_tool_call(turn: Turn, call: ToolCall) -> Result<Option<String>, ToolError> {
        let _ = (turn, call);
        Ok(None)
    }

    /// A tool returned `observation`. Default: the model sees it unchanged.
    fn after_tool_result(turn: Turn, call: ToolCall, observation: &Observation) -> Option<String> {
        let _ = (turn, call, observation);
        None
    }

    /// The conversation is about to be compacted. Default: no warning turn.
    fn before_compaction(turn: Turn) -> Option<String> {
        let _ = turn;
        None
    }

    /// The conversation was compacted. Default: ignored.
    fn after_compaction(turn: Turn) {
        let _ = turn;
    }

    /// The plugin is being loaded: check the configuration ([`config`]) and declare every tool
    /// the plugin may offer. `Err(message)` refuses the load. Default: no tools.
    fn load() -> Result<Manifest, String> {
        Ok(Manifest { tools: Vec::new() })
    }

    /// The tools offered in this turn. Default: every tool the manifest declares.
    fn tools(turn: Turn) -> Vec<ToolSpec> {
        let _ = turn;
        Self::load().map(|manifest| manifest.tools).unwrap_or_default()
    }

    /// Runs the tool `name`. Default: every name is unknown.
    fn call_tool(turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let _ = (turn, arguments);
        Err(ToolError::UnknownTool(format!("this plugin offers no tool named `{name}`")))
    }

    /// What this plugin shows of its state now (the host's viewer renders it; exports map the
    /// sections by [`Section::key`]): read storage, return sections. Whatever it writes is
    /// dropped. The bounds (32 sections, keys of `[a-z0-9_-]`, …) are on the WIT contract's
    /// `view` interface. Default: no sections, so the plugin has no view.
    fn describe() -> Vec<Section> {
        Vec::new()
    }
}

/// A [`Section`] of text, e.g. `section::text("Plan", "plan", plan, Some(usage))`.
pub mod section {
    use super::{Content, Section};

    /// A section holding one text.
    pub fn text(title: &str, key: &str, text: impl Into<String>, usage: Option<String>) -> Section {
        Section { title: title.into(), key: key.into(), content: Content::Text(text.into()), usage }
    }

    /// A section holding a list of entries, shown one per line.
    pub fn items(title: &str, key: &str, items: Vec<String>, usage: Option<String>) -> Section {
        Section { title: title.into(), key: key.into(), content: Content::Items(items), usage }
    }
}

impl<T: Plugin> bindings::exports::scratchpad::plugin::view::Guest for T {
    fn describe() -> Vec<Section> {
        <T as Plugin>::describe()
    }
}

impl<T: Plugin> bindings::exports::scratchpad::plugin::permissions::Guest for T {
    fn requested() -> Vec<String> {
        T::requested_powers().into_iter().map(|power| power.name().to_owned()).collect()
    }
}

impl<T: Plugin> bindings::exports::scratchpad::plugin::lifecycle::Guest for T {
    fn load() -> Result<Manifest, String> {
        <T as Plugin>::load()
    }
}

impl<T: Plugin> bindings::exports::scratchpad::plugin::hooks::Guest for T {
    fn before_session_create(session: SessionInfo) -> SessionSetup {
        <T as Plugin>::before_session_create(session)
    }
    fn before_query(turn: Turn, message: String) -> Vec<Injection> {
        <T as Plugin>::before_query(turn, message)
    }
    fn after_response(turn: Turn, text: String) {
        <T as Plugin>::after_response(turn, text)
    }
    fn before_tool_call(turn: Turn, call: ToolCall) -> Result<Option<String>, ToolError> {
        <T as Plugin>::before_tool_call(turn, call)
    }
    fn after_tool_result(turn: Turn, call: ToolCall, observation: &Observation) -> Option<String> {
        <T as Plugin>::after_tool_result(turn, call, observation)
    }
    fn before_compaction(turn: Turn) -> Option<String> {
        <T as Plugin>::before_compaction(turn)
    }
    fn after_compaction(turn: Turn) {
        <T as Plugin>::after_compaction(turn)
    }
}

impl<T: Plugin> bindings::exports::scratchpad::plugin::tools::Guest for T {
    fn list_tools(turn: Turn) -> Vec<ToolSpec> {
        <T as Plugin>::tools(turn)
    }
    fn call_tool(turn: Turn, name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        <T as Plugin>::call_tool(turn, name, arguments)
    }
}

/// Exports a type implementing [`Plugin`] as the component's implementation of the
/// `scratchpad:plugin/plugin` world. Use it once, in the plugin crate's `lib.rs`.
///
/// The exports exist only when building for wasm: a native build of the same crate (its unit
/// tests, or a workspace-wide `cargo test`) links no component ABI symbols. It still refers to
/// every hook of the plugin, so a native build does not report the plugin's code as dead.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::__export_plugin_world!($plugin with_types_in $crate::bindings);
        #[cfg(not(target_arch = "wasm32"))]
        const _: () = {
            let _ = (
                <$plugin as $crate::Plugin>::requested_powers,
                <$plugin as $crate::Plugin>::load,
                <$plugin as $crate::Plugin>::before_session_create,
                <$plugin as $crate::Plugin>::before_query,
                <$plugin as $crate::Plugin>::after_response,
                <$plugin as $crate::Plugin>::before_tool_call,
                <$plugin as $crate::Plugin>::after_tool_result,
                <$plugin as $crate::Plugin>::before_compaction,
                <$plugin as $crate::Plugin>::after_compaction,
                <$plugin as $crate::Plugin>::tools,
                <$plugin as $crate::Plugin>::call_tool,
                <$plugin as $crate::Plugin>::describe,
            );
        };
    };
}
