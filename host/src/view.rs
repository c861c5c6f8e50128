//! What the plugins show of their state ([`Host::view`]): each plugin's optional `view` export
//! (new in contract 0.1.2), called with the session's storage readable and its writes dropped,
//! so the viewer and the exports never read a plugin's private storage, and a plugin swapped
//! for another still shows what it keeps.

use serde::{Deserialize, Serialize};
use wasmtime::component::{Component, ComponentExportIndex, ComponentType, Lift};

use crate::capabilities::call::{PluginInfo, SessionScope};
use crate::capabilities::scope::Scope;
use crate::config::ITEM_OVERHEAD_BYTES;
use crate::error::{Error, PluginFailure, Result};
use crate::host::Host;
use crate::transaction::Involved;

/// The export through which a plugin describes its state (new in 0.1.2; optional).
const VIEW: &str = "scratchpad:plugin/view@0.1.3";

/// The name the host gives the call in errors, events and metrics.
pub(crate) const HOOK: &str = "describe";

/// Most sections one plugin may show.
pub const MAX_SECTIONS: usize = 32;
/// Longest title of a section, in bytes.
pub const MAX_TITLE_BYTES: usize = 128;
/// Longest key of a section, in bytes (`[a-z0-9_-]`, at least one).
pub const MAX_KEY_BYTES: usize = 64;
/// Longest usage line of a section, in bytes.
pub const MAX_USAGE_BYTES: usize = 128;
/// Most items one section may list.
pub const MAX_ITEMS: usize = 256;
/// Longest item of a list, in bytes.
pub const MAX_ITEM_BYTES: usize = 4 << 10;

/// What one plugin shows of its state in a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PluginView {
    /// The plugin.
    pub plugin: String,
    /// Its sections, in the order it gave them (none when `error` is set).
    pub sections: Vec<ViewSection>,
    /// Why the plugin shows nothing: its `describe` call failed (a trap, its deadline, its
    /// memory cap, an answer past the contract's bounds or its output cap), naming the failure.
    /// Other plugins' views are unaffected.
    pub error: Option<String>,
    /// The same failure, for a caller that branches on it (not serialized).
    #[serde(skip)]
    pub failure: Option<PluginFailure>,
}

impl PluginView {
    /// The section with `key`, if the plugin shows one.
    pub fn section(&self, key: &str) -> Option<&ViewSection> {
        self.sections.iter().find(|section| section.key == key)
    }
}

/// One part of a plugin's state, as the plugin describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ViewSection {
    /// What a person calls it, e.g. `Plan`.
    pub title: String,
    /// A short machine name (`[a-z0-9_-]`, unique in the plugin) that exports map, e.g. `plan`.
    pub key: String,
    /// The state itself.
    pub content: SectionContent,
    /// Its use of its budget as the plugin counts it, e.g. `1200/4000 chars`.
    pub usage: Option<String>,
}

/// What a section holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SectionContent {
    /// One text, line breaks kept.
    Text(String),
    /// Short entries, in order.
    Items(Vec<String>),
}

impl SectionContent {
    /// The text, or the items one per line.
    pub fn to_text(&self) -> String {
        match self {
            SectionContent::Text(text) => text.clone(),
            SectionContent::Items(items) => items.join("\n"),
        }
    }

    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        match self {
            SectionContent::Text(text) => text.is_empty(),
            SectionContent::Items(items) => items.is_empty(),
        }
    }
}

/// `view.section` as it crosses the component boundary.
#[derive(ComponentType, Lift)]
#[component(record)]
pub(crate) struct WitSection {
    title: String,
    key: String,
    content: WitContent,
    usage: Option<String>,
}

/// `view.content` as it crosses the component boundary.
#[derive(ComponentType, Lift)]
#[component(variant)]
pub(crate) enum WitContent {
    #[component(name = "text")]
    Text(String),
    #[component(name = "items")]
    Items(Vec<String>),
}

/// The component's `view.describe` function, or `None` when it has no `view` export (a
/// component of contract 0.1.0 or 0.1.1). An export without the function refuses the load.
pub(crate) fn describe_export(component: &Component) -> std::result::Result<Option<ComponentExportIndex>, String> {
    let Some(interface) = component.get_export_index(None, VIEW) else { return Ok(None) };
    match component.get_export_index(Some(&interface), "describe") {
        Some(describe) => Ok(Some(describe)),
        None => Err(format!("its `{VIEW}` export has no `describe` function")),
    }
}

impl Host {
    /// What every plugin shows of its state in session `id` now ([`PluginView`]), in plugin
    /// order — and nothing written: each plugin's `describe` runs with the session's storage
    /// readable and its writes dropped, and no turn is entered. A plugin without the `view`
    /// export (a component of contract 0.1.0 or 0.1.1) or that shows no section is left out.
    /// A plugin whose call fails is in the list with its [`PluginView::error`], never an
    /// error of the whole call: one broken plugin does not hide the others.
    pub async fn view(&self, id: &str) -> Result<Vec<PluginView>> {
        let _guard = self.lock(id).await;
        let mut tx = self.begin_reading(id, Involved::All).await?;
        let mut views = Vec::new();
        for (index, loaded) in self.inner.plugins.iter().enumerate() {
            let snapshot = tx.take_snapshot(index);
            let Some(export) = &loaded.view else { continue };
            let scope = Scope::new(snapshot, &loaded.info.limits);
            let session = SessionScope {
                db: self.inner.db.clone(),
                plugin: loaded.info.name.clone(),
                session: id.to_owned(),
                project: None,
            };
            let started = std::time::Instant::now();
            let outcome = self
                .inner
                .sandbox
                .call_read_only::<Vec<WitSection>>(&loaded.pre, &loaded.info, scope, Some(session), HOOK, export)
                .await
                .and_then(|sections| check(&loaded.info, sections));
            self.inner.db.metrics.call(&loaded.info.name, HOOK, started.elapsed(), &outcome);
            let plugin = loaded.info.name.clone();
            views.push(match outcome {
                Ok(sections) if sections.is_empty() => continue,
                Ok(sections) => PluginView { plugin, sections, error: None, failure: None },
                Err(error) => {
                    let message = error.to_string();
                    let failure = match error {
                        Error::Plugin { failure, .. } => Some(failure),
                        _ => None,
                    };
                    PluginView { plugin, sections: Vec::new(), error: Some(message), failure }
                }
            });
        }
        Ok(views)
    }
}

/// Holds a plugin's answer to the contract's bounds and its output cap.
fn check(plugin: &PluginInfo, sections: Vec<WitSection>) -> Result<Vec<ViewSection>> {
    let failed = |failure| Error::Plugin { plugin: plugin.name.clone(), hook: HOOK.to_owned(), failure };
    if let Some(message) = breach(&sections) {
        return Err(failed(PluginFailure::Contract(message)));
    }
    let size = sections.iter().map(output_bytes).fold(0, usize::saturating_add);
    let limit_bytes = plugin.limits.output_bytes;
    if size as u64 > limit_bytes {
        return Err(failed(PluginFailure::OutputTooLarge { size: size as u64, limit_bytes }));
    }
    Ok(sections
        .into_iter()
        .map(|s| ViewSection {
            title: s.title,
            key: s.key,
            usage: s.usage,
            content: match s.content {
                WitContent::Text(text) => SectionContent::Text(text),
                WitContent::Items(items) => SectionContent::Items(items),
            },
        })
        .collect())
}

/// The bytes of a section as the output cap counts them: every text plus
/// [`ITEM_OVERHEAD_BYTES`] per section and per item.
fn output_bytes(section: &WitSection) -> usize {
    let content = match &section.content {
        WitContent::Text(text) => text.len(),
        WitContent::Items(items) => {
            items.iter().map(|item| item.len().saturating_add(ITEM_OVERHEAD_BYTES)).fold(0, usize::saturating_add)
        }
    };
    [
        section.title.len(),
        section.key.len(),
        section.usage.as_ref().map_or(0, String::len),
        content,
        ITEM_OVERHEAD_BYTES,
    ]
    .into_iter()
    .fold(0, usize::saturating_add)
}

/// Why an answer breaks the `view` contract's bounds, if it does.
fn breach(sections: &[WitSection]) -> Option<String> {
    if sections.len() > MAX_SECTIONS {
        return Some(format!("it described {} sections; at most {MAX_SECTIONS}", sections.len()));
    }
    let mut keys = std::collections::HashSet::new();
    for (n, s) in sections.iter().enumerate() {
        let key = crate::terminal::line(&s.key.chars().take(MAX_KEY_BYTES).collect::<String>()).into_owned();
        if s.title.is_empty() || s.title.len() > MAX_TITLE_BYTES {
            return Some(format!(
                "section {n} (`{key}`) has a title of {} bytes; 1 to {MAX_TITLE_BYTES}",
                s.title.len()
            ));
        }
        let well_formed = s.key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if s.key.is_empty() || s.key.len() > MAX_KEY_BYTES || !well_formed {
            return Some(format!(
                "section {n} has the key `{key}`; a key is 1 to {MAX_KEY_BYTES} bytes of `a`-`z`, `0`-`9`, `_` and `-`"
            ));
        }
        if !keys.insert(s.key.as_str()) {
            return Some(format!("two sections have the key `{key}`"));
        }
        if let Some(usage) = &s.usage
            && usage.len() > MAX_USAGE_BYTES
        {
            return Some(format!("section `{key}` has a usage of {} bytes; at most {MAX_USAGE_BYTES}", usage.len()));
        }
        if let WitContent::Items(items) = &s.content {
            if items.len() > MAX_ITEMS {
                return Some(format!("section `{key}` lists {} items; at most {MAX_ITEMS}", items.len()));
            }
            if let Some(long) = items.iter().find(|item| item.len() > MAX_ITEM_BYTES) {
                return Some(format!("section `{key}` has an item of {} bytes; at most {MAX_ITEM_BYTES}", long.len()));
            }
        }
    }
    None
}
