//! Loading a plugin: getting the component and checking its signature ([`crate::sources`]),
//! checking it is one, compiling it (or taking it from the cache), checking it implements the
//! contract, settling its powers ([`crate::grants`]), and asking it for its manifest.

use std::sync::Arc;

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::PluginPre;
use crate::capabilities::call::{CallState, PluginInfo};
use crate::capabilities::scope::Scope;
use crate::config::{ITEM_OVERHEAD_BYTES, Limits, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_TOOLS, PluginSpec};
use crate::error::Error;
use crate::grants::Grants;
use crate::sandbox::Sandbox;
use crate::sources::Sources;
use crate::store::Snapshot;
use crate::types::ToolSpec;
use crate::warm::WarmPool;

/// The contract a component must implement.
pub const WORLD: &str = "scratchpad:plugin/plugin@0.1.3";

/// The export through which a plugin asks for its powers (new in 0.1.1; optional).
const PERMISSIONS: &str = "scratchpad:plugin/permissions@0.1.3";

/// Most power names a plugin may ask for in one answer (each power once; a few to spare for
/// names a newer contract adds, which are refused by name).
const MAX_REQUESTED: usize = 64;

/// Longest message a plugin may refuse its configuration with, in bytes; the rest is cut.
pub const MAX_REFUSAL_BYTES: usize = 4 << 10;

/// A loaded plugin, ready to instantiate for every call.
pub(crate) struct LoadedPlugin {
    pub(crate) info: Arc<PluginInfo>,
    pub(crate) pre: PluginPre<CallState>,
    /// Every tool the plugin declared in its manifest.
    pub(crate) tools: Vec<ToolSpec>,
    /// Linear memory of the last call: (at instantiation, peak), bytes.
    pub(crate) last_memory: std::sync::Mutex<(u64, u64)>,
    /// Fresh instances made ahead of their call.
    pub(crate) warm: WarmPool,
    /// What identifies its component (see [`crate::identity`]).
    pub(crate) identity: String,
    /// What it asked for (`None`: a 0.1.0 component, which cannot ask).
    pub(crate) requested: Option<Grants>,
    /// The publisher whose signature was verified, if one was.
    pub(crate) signed_by: Option<String>,
    /// Its `view.describe` function (`None`: a component without the `view` export, new in
    /// 0.1.2, which shows nothing).
    pub(crate) view: Option<wasmtime::component::ComponentExportIndex>,
}

/// What `scratchpad plugins` and `inspect` show about a plugin.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct PluginSummary {
    /// The plugin's name.
    pub name: String,
    /// The tools it declared.
    pub tools: Vec<ToolSpec>,
    /// Its deadline per call, in milliseconds.
    pub call_timeout_ms: u64,
    /// Its memory cap in bytes.
    pub memory_bytes: u64,
    /// Its storage quota per session in bytes.
    pub storage_quota_bytes: u64,
    /// Its output cap per call in bytes.
    pub output_bytes: u64,
    /// Its quota of live offloaded observations per session in bytes.
    pub blob_quota_bytes: u64,
    /// Most keys it keeps per session (storage and metadata).
    pub storage_max_keys: u64,
    /// Longest lifetime it may give an offloaded observation, in seconds.
    pub blob_max_ttl_seconds: u64,
    /// Its quota in each project's search index, in bytes.
    pub index_quota_bytes: u64,
    /// The powers it holds.
    pub grants: Vec<&'static str>,
    /// The powers it asked for; `None` for a 0.1.0 component, which cannot ask.
    pub requested: Option<Vec<&'static str>>,
    /// What identifies its component: `embedded:NAME` or `sha256:…` of its bytes.
    pub identity: String,
    /// The publisher whose signature was verified, if one was.
    pub signed_by: Option<String>,
}

impl LoadedPlugin {
    pub(crate) fn summary(&self) -> PluginSummary {
        let Limits {
            call_timeout,
            memory_bytes,
            storage_quota_bytes,
            output_bytes,
            blob_quota_bytes,
            storage_max_keys,
            blob_max_ttl_seconds,
            index_quota_bytes,
        } = self.info.limits;
        PluginSummary {
            name: self.info.name.clone(),
            tools: self.tools.clone(),
            call_timeout_ms: call_timeout.as_millis() as u64,
            memory_bytes,
            storage_quota_bytes,
            output_bytes,
            blob_quota_bytes,
            storage_max_keys,
            blob_max_ttl_seconds,
            index_quota_bytes,
            grants: self.info.grants.names(),
            requested: self.requested.map(Grants::names),
            identity: self.identity.clone(),
            signed_by: self.signed_by.clone(),
        }
    }
}

/// Loads `spec`, or says exactly why it cannot be loaded.
pub(crate) async fn load(
    sandbox: &Sandbox,
    sources: &Sources,
    spec: &PluginSpec,
    dirs: &crate::compiled::Dirs,
    warm_instances: usize,
) -> Result<LoadedPlugin, Error> {
    let refuse = |message: String| Error::Load { plugin: spec.name.clone(), message };
    // The signature is checked here, before any of the bytes are parsed or compiled.
    let crate::sources::Fetched { bytes, signed_by } = sources.fetch(spec).await.map_err(refuse)?;
    check_header(&bytes).map_err(refuse)?;
    if !spec.config.is_object() {
        return Err(refuse("its configuration must be a JSON object (a TOML table)".into()));
    }

    let engine = sandbox.engine.clone();
    let dirs = dirs.clone();
    let owned = spec.clone();
    let (component, identity) = tokio::task::spawn_blocking(move || {
        let sha256 = crate::identity::sha256(&owned, &bytes);
        (crate::compiled::load_component(&engine, &bytes, &sha256, &dirs), crate::identity::of(&owned, &sha256))
    })
    .await
    .map_err(|e| refuse(format!("compiling panicked: {e}")))?;
    let component = component.map_err(|e| refuse(format!("not a valid component: {e:#}")))?;

    check_contract_version(&component, &sandbox.engine).map_err(refuse)?;
    let instance_pre = sandbox
        .linker
        .instantiate_pre(&component)
        .map_err(|e| refuse(format!("it does not fit the {WORLD} world: {e:#}")))?;
    let pre = PluginPre::new(instance_pre).map_err(|e| {
        refuse(format!("it does not export the {WORLD} world (built against another version of the contract?): {e:#}"))
    })?;

    let requested = ask_permissions(sandbox, &component, &pre, spec).await?;
    let view = crate::view::describe_export(&component).map_err(refuse)?;
    let grants = crate::grants::settle(requested, spec.grants).map_err(refuse)?;
    let info = Arc::new(PluginInfo {
        name: spec.name.clone(),
        limits: spec.limits,
        config_json: spec.config.to_string(),
        grants,
    });
    let scope = Scope::new(Snapshot::default(), &spec.limits);
    let (manifest, _) = sandbox
        .call(
            || None,
            &pre,
            &info,
            scope,
            None,
            "load",
            |plugin, store| Box::pin(plugin.scratchpad_plugin_lifecycle().call_load(store)),
        )
        .await?;
    let manifest = manifest.map_err(|message| {
        let message = crate::capabilities::output::cut(&message, MAX_REFUSAL_BYTES);
        refuse(format!("it refused its configuration: {message}"))
    })?;
    let tools = check_tools(&spec.name, manifest.tools).map_err(refuse)?;
    // Every declared tool may be offered in one listing, which the output cap bounds.
    let listed = tools.iter().map(|t| t.name.len() + t.description.len() + t.parameters.len()).sum::<usize>()
        + tools.len() * ITEM_OVERHEAD_BYTES;
    if listed as u64 > spec.limits.output_bytes {
        return Err(refuse(format!(
            "its manifest's tools take {listed} bytes, over its output cap of {} bytes (limits.output_bytes), so \
             they could never all be listed",
            spec.limits.output_bytes
        )));
    }
    let warm = WarmPool::new(warm_instances);
    Ok(LoadedPlugin { info, pre, tools, last_memory: Default::default(), warm, identity, requested, signed_by, view })
}

/// What the component asks for through its `permissions` export, or `None` when it has none
/// (a 0.1.0 component). The call holds no power but `config`, when granted: a plugin may ask
/// according to its configuration.
async fn ask_permissions(
    sandbox: &Sandbox,
    component: &Component,
    pre: &PluginPre<CallState>,
    spec: &PluginSpec,
) -> Result<Option<Grants>, Error> {
    let refuse = |message: String| Error::Load { plugin: spec.name.clone(), message };
    let Some(interface) = component.get_export_index(None, PERMISSIONS) else { return Ok(None) };
    let Some(requested) = component.get_export_index(Some(&interface), "requested") else {
        return Err(refuse(format!("its `{PERMISSIONS}` export has no `requested` function")));
    };
    let config_only = Grants::of(&[crate::grants::Power::Config]);
    let asking = Arc::new(PluginInfo {
        name: spec.name.clone(),
        limits: spec.limits,
        config_json: spec.config.to_string(),
        grants: spec.grants.intersect(config_only),
    });
    let names = sandbox.ask_permissions(pre, &asking, &requested).await?;
    if names.len() > MAX_REQUESTED {
        return Err(refuse(format!(
            "it asks for {} powers; there are {}",
            names.len(),
            crate::grants::Power::ALL.len()
        )));
    }
    Grants::parse(&names).map(Some).map_err(|e| refuse(format!("its `permissions` export names {e}")))
}

/// Says what the bytes are when they are not a component.
fn check_header(bytes: &[u8]) -> Result<(), String> {
    const MAGIC: &[u8] = b"\0asm";
    const COMPONENT: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    const CORE_MODULE: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
    if bytes.is_empty() {
        return Err("the file is empty (0 bytes), not a WebAssembly component".into());
    }
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        return Err("not a WebAssembly file (it does not start with the `\\0asm` magic bytes)".into());
    }
    match <[u8; 4]>::try_from(&bytes[4..8]).unwrap() {
        COMPONENT => Ok(()),
        CORE_MODULE => Err(format!(
            "it is a core WebAssembly module, not a component; build it for wasm32-wasip2 \
             against the {WORLD} world"
        )),
        other => Err(format!("unsupported WebAssembly version/layer {other:02x?}")),
    }
}

/// Refuses a component that imports or exports the contract's interfaces at a version this
/// host cannot serve (built against an incompatible or a newer `wit/`), naming the version,
/// before the linker's less direct "no matching implementation" error would.
fn check_contract_version(component: &Component, engine: &Engine) -> Result<(), String> {
    let ty = component.component_type();
    let names = ty.imports(engine).map(|(name, _)| name).chain(ty.exports(engine).map(|(name, _)| name));
    let (package, ours) = WORLD.split_once('/').and_then(|(pkg, rest)| Some((pkg, rest.split_once('@')?.1))).unwrap();
    let mut others: Vec<&str> = names
        .filter_map(|name| name.strip_prefix(package)?.strip_prefix('/')?.split_once('@').map(|(_, version)| version))
        .filter(|version| !loads_in(version, ours))
        .collect();
    others.sort_unstable();
    others.dedup();
    if others.is_empty() {
        return Ok(());
    }
    Err(format!(
        "it was built against version {} of the {package} contract, and this host implements {ours} (it loads \
         plugins of {} up to {ours}); rebuild it against the {WORLD} world",
        others.join(", "),
        compatible_range(ours)
    ))
}

/// Whether a plugin built against contract version `plugin` loads in a host of version
/// `host` (the README's versioning policy): the same release line — the same major version,
/// and for 0.x the same minor — and not newer than the host, whose additions it might use.
fn loads_in(plugin: &str, host: &str) -> bool {
    let parse = |v: &str| -> Option<(u64, u64, u64)> {
        let mut parts = v.split('.').map(|p| p.parse::<u64>().ok());
        let version = (parts.next()??, parts.next()??, parts.next()??);
        parts.next().is_none().then_some(version)
    };
    let (Some(p), Some(h)) = (parse(plugin), parse(host)) else {
        return plugin == host;
    };
    let same_line = if h.0 == 0 { p.0 == 0 && p.1 == h.1 } else { p.0 == h.0 };
    same_line && p <= h
}

/// `0.1.0` for a `0.1.x` host, `2.0.0` for a `2.x.y` one: the oldest version that loads.
fn compatible_range(host: &str) -> String {
    let mut parts = host.split('.');
    match (parts.next(), parts.next()) {
        (Some("0"), Some(minor)) => format!("0.{minor}.0"),
        (Some(major), _) => format!("{major}.0.0"),
        _ => host.to_owned(),
    }
}

/// Validates a manifest's tools: at most [`MAX_TOOLS`], well-formed unique names, bounded
/// descriptions, and parameters that are a JSON Schema (2020-12) for a JSON object. Linear in
/// the manifest's size.
fn check_tools(plugin: &str, declared: Vec<crate::bindings::wit::ToolSpec>) -> Result<Vec<ToolSpec>, String> {
    if declared.len() > MAX_TOOLS {
        return Err(format!(
            "its manifest declares {} tools; a plugin may declare at most {MAX_TOOLS}",
            declared.len()
        ));
    }
    let mut names = std::collections::HashSet::with_capacity(declared.len());
    let mut tools: Vec<ToolSpec> = Vec::with_capacity(declared.len());
    for tool in declared {
        check_tool_spec(&tool)?;
        if !names.insert(tool.name.clone()) {
            return Err(format!("its manifest declares the tool `{}` twice", tool.name));
        }
        let api_name = crate::names::api_tool_name(&tool.name).map_err(|e| e.to_string())?;
        tools.push(ToolSpec {
            plugin: plugin.to_owned(),
            api_name,
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
        });
    }
    crate::names::ToolNames::new(tools.iter().map(|t| t.name.as_str()), "")
        .map_err(|e| format!("its manifest: {e}"))?;
    Ok(tools)
}

/// Checks one tool spec, declared or offered, against the contract's bounds.
pub(crate) fn check_tool_spec(tool: &crate::bindings::wit::ToolSpec) -> Result<(), String> {
    let name_ok = (1..=64).contains(&tool.name.len())
        && tool.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if !name_ok {
        let shown: String = tool.name.chars().take(80).collect();
        return Err(format!("the tool name {shown:?} is invalid (1 to 64 of [A-Za-z0-9_.-])"));
    }
    let name = &tool.name;
    if tool.description.len() > MAX_DESCRIPTION_BYTES {
        return Err(format!(
            "the description of tool `{name}` is {} bytes; the most is {MAX_DESCRIPTION_BYTES}",
            tool.description.len()
        ));
    }
    if tool.parameters.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "the parameters schema of tool `{name}` is {} bytes; the most is {MAX_SCHEMA_BYTES}",
            tool.parameters.len()
        ));
    }
    check_schema(&tool.parameters).map_err(|e| format!("the parameters schema of tool `{name}` {e}"))
}

/// A tool's parameters must be a JSON Schema (valid against the 2020-12 meta-schema) whose
/// instances are JSON objects, as tool arguments are: an object schema, with `type` either
/// absent or `"object"`.
fn check_schema(text: &str) -> Result<(), String> {
    let schema: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))?;
    let Some(object) = schema.as_object() else {
        return Err(
            "is not a JSON Schema object (tool arguments are a JSON object; start from {\"type\":\"object\"})".into()
        );
    };
    if let Some(kind) = object.get("type").filter(|kind| kind.as_str() != Some("object")) {
        return Err(format!("has type {kind}; tool arguments are a JSON object, so it must be \"object\""));
    }
    jsonschema::draft202012::meta::validate(&schema)
        .map_err(|e| format!("is not a valid JSON Schema (2020-12): {e} at `{}`", e.instance_path()))
}

#[cfg(test)]
mod tests {
    use super::{check_header, check_schema, loads_in};

    #[test]
    fn parameters_must_be_a_json_schema_for_an_object() {
        assert!(check_schema(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#).is_ok());
        assert!(check_schema("{}").is_ok(), "an empty schema accepts any object");
        assert!(check_schema(r#"{"type":12}"#).unwrap_err().contains("must be \"object\""));
        assert!(check_schema("[]").unwrap_err().contains("not a JSON Schema object"));
        assert!(check_schema(r#"{"type":"string"}"#).unwrap_err().contains("must be \"object\""));
        let bad = check_schema(r#"{"type":"object","properties":{"a":{"type":12}}}"#).unwrap_err();
        assert!(bad.contains("not a valid JSON Schema (2020-12)"), "{bad}");
        assert!(check_schema(r#"{"type":"object","required":"a"}"#).is_err());
        assert!(check_schema("{oops").unwrap_err().contains("is not JSON"));
    }

    #[test]
    fn plugins_of_the_same_release_line_load_up_to_the_hosts_version() {
        assert!(loads_in("0.1.0", "0.1.0"));
        assert!(loads_in("0.1.0", "0.1.3"), "a 0.1.0 plugin loads in every 0.1.x host");
        assert!(!loads_in("0.1.4", "0.1.3"), "a newer plugin may use what this host lacks");
        assert!(!loads_in("0.2.0", "0.1.3"), "0.2 is another release line");
        assert!(!loads_in("0.0.9", "0.1.0"));
        assert!(loads_in("1.2.0", "1.4.1"));
        assert!(!loads_in("2.0.0", "1.4.1"));
        assert!(!loads_in("0.1", "0.1.0"), "not a version: only an exact match loads");
    }

    #[test]
    fn headers_say_what_the_bytes_are() {
        assert!(check_header(b"\0asm\x0d\x00\x01\x00").is_ok());
        assert!(check_header(b"\0asm\x01\x00\x00\x00").unwrap_err().contains("core WebAssembly module"));
        assert!(check_header(b"hello world!").unwrap_err().contains("not a WebAssembly file"));
        assert!(check_header(b"\0asm").unwrap_err().contains("not a WebAssembly file"));
        assert!(check_header(b"").unwrap_err().contains("the file is empty"));
        assert!(check_header(b"\0asm\x0e\x00\x01\x00").unwrap_err().contains("unsupported"));
    }
}
