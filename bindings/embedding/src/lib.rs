//! What the host's bindings for other languages share (`bindings/python`, `bindings/node`):
//! each of them is a thin translation of these calls into its language's values, so a
//! behaviour lives here once — how the arguments open a host, which error class a host error
//! is, what `open_session` and `show` answer, and the benchmark loop that times calls with no
//! foreign language in between.

use std::path::Path;
use std::time::Instant;

use scratchpad_host::{
    Error, Host, HostConfig, Injection, Location, Origin, Placement, PluginFailure, PluginSpec, Prompt, TurnContext,
};
use serde_json::{Value, json};

/// The configuration of a host over `location` (a SQLite path or a `postgres://` URL), read
/// from the TOML file `config` when given, with the component files or `oci://` references
/// `plugins` added; what was wrong otherwise, naming the argument.
pub fn config(location: &str, config: Option<&str>, plugins: &[String]) -> Result<HostConfig, String> {
    let mut host_config = match config {
        Some(path) => HostConfig::from_toml_file(Path::new(path)).map_err(|e| format!("config {path}: {e:#}"))?,
        None => HostConfig::default(),
    };
    host_config.database = Location::parse(location);
    host_config.precompiled_dir = precompiled_beside_library();
    for source in plugins {
        host_config
            .plugins
            .push(PluginSpec::parse_source(source, Path::new(".")).map_err(|e| format!("plugins: {e}"))?);
    }
    Ok(host_config)
}

/// The `precompiled/` directory beside the shared library this code was loaded from (the
/// Node addon's package ships the embedded components compiled there), when there is one.
fn precompiled_beside_library() -> Option<std::path::PathBuf> {
    let dir = this_library()?.parent()?.join("precompiled");
    dir.is_dir().then_some(dir)
}

/// The file of the shared library this code is in, as the dynamic loader names it.
#[cfg(unix)]
fn this_library() -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the address (this function's own code) and fills `info`; on
    // success `dli_fname` is a NUL-terminated path owned by the dynamic loader.
    let library = unsafe {
        if libc::dladdr(this_library as *const libc::c_void, info.as_mut_ptr()) == 0 {
            return None;
        }
        let name = info.assume_init().dli_fname;
        if name.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(name)
    };
    Some(std::ffi::OsStr::from_bytes(library.to_bytes()).into())
}

/// The file of the DLL this code is in: the module holding this function's address.
#[cfg(windows)]
fn this_library() -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::LibraryLoader::{
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS, GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, GetModuleFileNameW,
        GetModuleHandleExW,
    };
    let mut module = std::ptr::null_mut();
    // SAFETY: with FROM_ADDRESS the name is read as an address inside a loaded module (this
    // function's own code); UNCHANGED_REFCOUNT takes no reference that would need releasing.
    let found = unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
            this_library as *const u16,
            &mut module,
        )
    };
    if found == 0 {
        return None;
    }
    // Windows' longest path (`\\?\` paths), in UTF-16 units.
    let mut name = vec![0u16; 32_768];
    // SAFETY: `name` is a writable buffer of the length given.
    let len = unsafe { GetModuleFileNameW(module, name.as_mut_ptr(), name.len() as u32) } as usize;
    if len == 0 || len >= name.len() {
        return None;
    }
    Some(std::ffi::OsString::from_wide(&name[..len]).into())
}

#[cfg(not(any(unix, windows)))]
fn this_library() -> Option<std::path::PathBuf> {
    None
}

/// Session `id`, created in `project` when missing: its standing guidance. A session that
/// exists keeps the project it was created in.
pub async fn open_session(host: &Host, id: &str, project: Option<&str>) -> Result<Vec<Injection>, Error> {
    if let Some(project) = project {
        // Checked here too, so a bad key is refused whether or not the session exists.
        scratchpad_host::check_project(project)?;
    }
    match host.create_session_in(id, Origin::New, project).await {
        Err(Error::SessionExists(_)) => Ok(host.session(id).await?.guidance),
        other => other,
    }
}

/// A prompt from the bindings' JSON text of its injections (`[{plugin, placement, text}]`).
pub fn prompt(injections: &str) -> Result<Prompt, String> {
    let injections: Vec<Injection> = serde_json::from_str(injections).map_err(|e| format!("injections: {e}"))?;
    Ok(Prompt { injections })
}

/// A placement from its name (`prepend-system`, …).
pub fn placement(name: &str) -> Result<Placement, String> {
    Placement::ALL.into_iter().find(|p| p.as_str() == name).ok_or_else(|| {
        let names: Vec<&str> = Placement::ALL.iter().map(|p| p.as_str()).collect();
        format!("placement: `{name}` is not one of {}", names.join(", "))
    })
}

/// Session `id`'s record and every plugin's stored state (values as text).
pub async fn show(host: &Host, id: &str) -> Result<Value, Error> {
    let record = host.session(id).await?;
    let state: Vec<Value> = host
        .state(id)
        .await?
        .into_iter()
        .map(|e| json!({ "plugin": e.plugin, "key": e.key, "text": String::from_utf8_lossy(&e.value) }))
        .collect();
    Ok(json!({ "session": record, "state": state }))
}

/// The error classes every binding offers, one per way a caller handles a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A tool refused the call: its `message` is for the model.
    Tool,
    /// A plugin failed (trapped, broke a limit) or was refused at load.
    Plugin,
    /// A plugin ran past its deadline (a kind of [`Class::Plugin`]).
    PluginTimeout,
    /// The database failed.
    Storage,
    /// No session has that id.
    SessionNotFound,
    /// An argument was wrong (the language's own value error).
    InvalidArgument,
    /// Anything else.
    Other,
}

impl Class {
    /// The class's name in the bindings (`ToolError`, …; `ValueError`-like for
    /// [`Class::InvalidArgument`]).
    pub fn name(self) -> &'static str {
        match self {
            Class::Tool => "ToolError",
            Class::Plugin => "PluginError",
            Class::PluginTimeout => "PluginTimeout",
            Class::Storage => "StorageError",
            Class::SessionNotFound => "SessionNotFound",
            Class::InvalidArgument => "InvalidArgument",
            Class::Other => "ScratchpadError",
        }
    }
}

/// A host error as the bindings raise it: its class, its message, and the attributes the
/// error object carries (`code` always; `kind`, `plugin`, `tool`, `hook`, `session` where
/// they apply), as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raised {
    /// The class.
    pub class: Class,
    /// The error's message.
    pub message: String,
    /// The attributes, `code` first.
    pub attributes: Vec<(&'static str, String)>,
}

/// How `error` is raised.
pub fn raised(error: &Error) -> Raised {
    let mut attributes = vec![("code", error.code().to_owned())];
    let mut message = error.to_string();
    let class = match error {
        Error::Tool { plugin, tool, error: refusal } => {
            message = refusal.message.clone();
            attributes.extend([
                ("kind", refusal.kind.as_str().to_owned()),
                ("message", refusal.message.clone()),
                ("plugin", plugin.clone()),
                ("tool", tool.clone()),
            ]);
            Class::Tool
        }
        Error::Plugin { plugin, hook, failure } => {
            attributes.extend([("plugin", plugin.clone()), ("hook", hook.clone())]);
            match failure {
                PluginFailure::Timeout { .. } => Class::PluginTimeout,
                _ => Class::Plugin,
            }
        }
        Error::Load { plugin, .. } => {
            attributes.push(("plugin", plugin.clone()));
            Class::Plugin
        }
        Error::SessionNotFound(id) => {
            attributes.push(("session", id.clone()));
            Class::SessionNotFound
        }
        Error::InvalidInput { .. } | Error::UnknownTool(_) | Error::SessionExists(_) => Class::InvalidArgument,
        Error::Conflict { session, .. } => {
            attributes.push(("session", session.clone()));
            Class::Storage
        }
        // The faults of the database itself (a writer holding its lock, a full disk, a
        // read-only file, a server away): `code` tells them apart.
        Error::Busy { .. } | Error::DiskFull { .. } | Error::ReadOnly { .. } | Error::Unavailable { .. } => {
            Class::Storage
        }
        Error::Other(_) => Class::Storage,
        _ => Class::Other,
    };
    Raised { class, message, attributes }
}

/// For the bindings' benchmarks: `op` (`"before_query"` with `argument` as the user's message,
/// or `"call_tool"` of `session.scratchpad` with `argument` as its arguments) `n` times in
/// `turn`, timed here with no other language in between: each call's nanoseconds.
pub async fn time_in_rust(
    host: &Host,
    op: &str,
    turn: &TurnContext,
    argument: &str,
    n: u32,
) -> Result<Vec<u64>, Error> {
    let mut times = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let start = Instant::now();
        match op {
            "before_query" => drop(host.before_query(turn, argument).await?),
            _ => drop(host.call_tool(turn, "session.scratchpad", argument).await?),
        }
        times.push(start.elapsed().as_nanos() as u64);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_a_tool_error_whose_message_is_the_models() {
        let error = Error::Tool {
            plugin: "scratchpad".into(),
            tool: "session.scratchpad".into(),
            error: scratchpad_host::ToolError {
                kind: scratchpad_host::ToolErrorKind::InvalidArguments,
                message: "`action` is required".into(),
            },
        };
        let raised = raised(&error);
        assert_eq!(raised.class, Class::Tool);
        assert_eq!(raised.message, "`action` is required");
        assert!(raised.attributes.contains(&("kind", "invalid-arguments".into())), "{raised:?}");
        assert_eq!(raised.attributes[0], ("code", "invalid-arguments".into()));
    }

    #[test]
    fn a_timeout_is_its_own_class_of_plugin_error() {
        let failure = |failure| Error::Plugin { plugin: "p".into(), hook: "before-query".into(), failure };
        assert_eq!(raised(&failure(PluginFailure::Timeout { limit_ms: 5 })).class, Class::PluginTimeout);
        assert_eq!(raised(&failure(PluginFailure::MemoryCap { limit_bytes: 1 })).class, Class::Plugin);
        assert_eq!(raised(&Error::SessionNotFound("s".into())).attributes[1], ("session", "s".into()));
    }

    #[test]
    fn the_databases_faults_are_storage_errors_named_by_their_code() {
        let away = raised(&Error::Unavailable { cause: "connection refused".into() });
        assert_eq!((away.class, &away.attributes[0]), (Class::Storage, &("code", "unavailable".into())));
        let full = raised(&Error::DiskFull { database: "a.db".into() });
        assert_eq!((full.class, &full.attributes[0]), (Class::Storage, &("code", "disk-full".into())));
        assert_eq!(raised(&Error::ReadOnly { database: "a.db".into() }).class, Class::Storage);
        assert_eq!(raised(&Error::Busy { database: "a.db".into(), waited_ms: 5 }).class, Class::Storage);
    }

    #[test]
    fn a_missing_config_file_names_the_argument() {
        let error = config("a.db", Some("/nonexistent/scratchpad.toml"), &[]).unwrap_err();
        assert!(error.starts_with("config /nonexistent/scratchpad.toml"), "{error}");
    }
}
