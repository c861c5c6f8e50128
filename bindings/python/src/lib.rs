//! The scratchpad host as a Python extension module (`scratchpad._native`). The same host as in
//! Rust, with every limit: this module is thin on purpose. It takes and returns JSON text for
//! structured values, and `python/scratchpad/__init__.py` gives them Python classes, so the
//! API lives in one place. The GIL is released while the host works (`Python::detach`), on one
//! tokio runtime per process.

use std::sync::OnceLock;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use scratchpad_host::{
    Error, Host, HostConfig, Location, Observation, PluginFailure, PluginSpec, ToolCall, TurnContext,
};
use serde_json::{Value, json};

create_exception!(_native, ScratchpadError, PyException, "Every error of the scratchpad host.");
create_exception!(_native, ToolError, ScratchpadError, "A tool refused the call: show the model `message`.");
create_exception!(
    _native,
    PluginError,
    ScratchpadError,
    "A plugin failed (trapped, broke a limit) or was refused at load."
);
create_exception!(_native, PluginTimeout, PluginError, "A plugin ran past its deadline.");
create_exception!(_native, StorageError, ScratchpadError, "The database failed.");
create_exception!(_native, SessionNotFound, ScratchpadError, "No session has that id.");

/// The process's runtime for the host's async work.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime starts")
    })
}

/// Runs `work` on the runtime with the GIL released; a host error becomes its Python exception.
fn run<T: Send>(py: Python<'_>, work: impl Future<Output = Result<T, Error>> + Send) -> PyResult<T> {
    py.detach(|| runtime().block_on(work)).map_err(|e| to_py(py, e))
}

/// The Python exception for a host error, with its fields as attributes.
fn to_py(py: Python<'_>, error: Error) -> PyErr {
    let message = error.to_string();
    let with = |err: PyErr, attrs: &[(&str, Value)]| {
        let value = err.value(py);
        for (name, attr) in attrs {
            let text = match attr {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let _ = value.setattr(*name, text);
        }
        let _ = value.setattr("code", error.code());
        err
    };
    match &error {
        Error::Tool { plugin, tool, error: refusal } => with(
            ToolError::new_err(refusal.message.clone()),
            &[
                ("kind", json!(refusal.kind.as_str())),
                ("message", json!(refusal.message)),
                ("plugin", json!(plugin)),
                ("tool", json!(tool)),
            ],
        ),
        Error::Plugin { plugin, hook, failure } => {
            let err = match failure {
                PluginFailure::Timeout { .. } => PluginTimeout::new_err(message),
                _ => PluginError::new_err(message),
            };
            with(err, &[("plugin", json!(plugin)), ("hook", json!(hook))])
        }
        Error::Load { plugin, .. } => with(PluginError::new_err(message), &[("plugin", json!(plugin))]),
        Error::SessionNotFound(id) => with(SessionNotFound::new_err(message), &[("session", json!(id))]),
        Error::InvalidInput { .. } | Error::UnknownTool(_) | Error::SessionExists(_) => {
            with(PyValueError::new_err(message), &[])
        }
        Error::Other(_) => with(StorageError::new_err(message), &[]),
        _ => with(ScratchpadError::new_err(message), &[]),
    }
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

fn to_json(value: impl serde::Serialize) -> String {
    serde_json::to_string(&value).expect("host values serialize")
}

/// A host over one database, with its plugins loaded.
#[pyclass(module = "scratchpad._native", frozen)]
struct NativeHost {
    host: Host,
}

#[pymethods]
impl NativeHost {
    /// Opens the database at `location` (a SQLite path or a `postgres://` URL) with the
    /// configuration file `config` (TOML, optional) and more component files `plugins`.
    #[staticmethod]
    #[pyo3(signature = (location, config=None, plugins=Vec::new()))]
    fn open(py: Python<'_>, location: String, config: Option<String>, plugins: Vec<String>) -> PyResult<NativeHost> {
        let mut host_config = match config {
            Some(path) => HostConfig::from_toml_file(std::path::Path::new(&path))
                .map_err(|e| PyValueError::new_err(format!("config {path}: {e:#}")))?,
            None => HostConfig::default(),
        };
        host_config.database = Location::parse(&location);
        for source in &plugins {
            let spec = PluginSpec::parse_source(source, std::path::Path::new("."))
                .map_err(|e| PyValueError::new_err(format!("plugins: {e}")))?;
            host_config.plugins.push(spec);
        }
        let host = run(py, Host::open(host_config))?;
        Ok(NativeHost { host })
    }

    /// The loaded plugins and their tools, as JSON.
    fn plugins(&self) -> String {
        to_json(self.host.plugins())
    }

    /// Creates `session` (refused when it exists): the standing guidance, as JSON.
    fn create_session(&self, py: Python<'_>, session: String) -> PyResult<String> {
        let host = &self.host;
        run(py, async move { host.create_session(&session, scratchpad_host::Origin::New).await }).map(to_json)
    }

    /// `session`, created when missing: its standing guidance, as JSON.
    fn open_session(&self, py: Python<'_>, session: String) -> PyResult<String> {
        let host = &self.host;
        run(py, async move {
            match host.create_session(&session, scratchpad_host::Origin::New).await {
                Err(Error::SessionExists(_)) => Ok(host.session(&session).await?.guidance),
                other => other,
            }
        })
        .map(to_json)
    }

    /// The tools offered in `turn` (JSON), as JSON.
    fn tools(&self, py: Python<'_>, turn: &str) -> PyResult<String> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.tools(&turn).await }).map(to_json)
    }

    /// Calls tool `name` with `arguments` (JSON text): its output text.
    fn call_tool(&self, py: Python<'_>, turn: &str, name: String, arguments: String) -> PyResult<String> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.call_tool(&turn, &name, &arguments).await }).map(|out| out.content)
    }

    /// The arguments (JSON text) to run the agent's tool call with, after every plugin's
    /// `before-tool-call`.
    fn before_tool_call(
        &self,
        py: Python<'_>,
        turn: &str,
        name: String,
        arguments: String,
        step: u32,
    ) -> PyResult<String> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.before_tool_call(&turn, &ToolCall::new(name, arguments, step)).await })
    }

    /// What the model should see instead of the tool's `result`, if anything.
    #[pyo3(signature = (turn, name, arguments, step, result, metadata="{}"))]
    #[allow(clippy::too_many_arguments)]
    fn after_tool_result(
        &self,
        py: Python<'_>,
        turn: &str,
        name: String,
        arguments: String,
        step: u32,
        result: Vec<u8>,
        metadata: &str,
    ) -> PyResult<Option<String>> {
        let turn: TurnContext = parse("turn", turn)?;
        let metadata: Value = parse("metadata", metadata)?;
        let host = &self.host;
        let observation = Observation::bytes(result).with_metadata(metadata);
        run(py, async move { host.after_tool_result(&turn, &ToolCall::new(name, arguments, step), &observation).await })
            .map(|view| view.replacement)
    }

    /// Every plugin's `after-response` on the turn's final reply.
    fn after_response(&self, py: Python<'_>, turn: &str, text: String) -> PyResult<()> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.after_response(&turn, &text).await })
    }

    /// The injections for the user's `message`, as JSON.
    fn before_query(&self, py: Python<'_>, turn: &str, message: String) -> PyResult<String> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.before_query(&turn, &message).await }).map(|prompt| to_json(prompt.injections))
    }

    /// The warnings to give the model before compacting, as JSON.
    fn before_compaction(&self, py: Python<'_>, turn: &str) -> PyResult<String> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.before_compaction(&turn).await }).map(to_json)
    }

    /// Tells the plugins the conversation was compacted.
    fn after_compaction(&self, py: Python<'_>, turn: &str) -> PyResult<()> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        run(py, async move { host.after_compaction(&turn).await })
    }

    /// For the binding's benchmark (`bindings/python/bench.py`): the same operation as
    /// `before_query(turn, argument)` (`op = "before_query"`) or `call_tool(turn,
    /// "session.scratchpad", argument)` (`op = "call_tool"`) `n` times, timed in Rust with no
    /// Python in between: each call's nanoseconds.
    fn _time_in_rust(&self, py: Python<'_>, op: &str, turn: &str, argument: String, n: u32) -> PyResult<Vec<u64>> {
        let turn: TurnContext = parse("turn", turn)?;
        let host = &self.host;
        let op = op.to_owned();
        run(py, async move {
            let mut times = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let start = std::time::Instant::now();
                match op.as_str() {
                    "before_query" => drop(host.before_query(&turn, &argument).await?),
                    _ => drop(host.call_tool(&turn, "session.scratchpad", &argument).await?),
                }
                times.push(start.elapsed().as_nanos() as u64);
            }
            Ok(times)
        })
    }

    /// The session and every plugin's stored state (text values as text), as JSON.
    fn show(&self, py: Python<'_>, session: String) -> PyResult<String> {
        let host = &self.host;
        run(py, async move {
            let record = host.session(&session).await?;
            let state: Vec<Value> = host
                .state(&session)
                .await?
                .into_iter()
                .map(|e| json!({ "plugin": e.plugin, "key": e.key, "text": String::from_utf8_lossy(&e.value) }))
                .collect();
            Ok(json!({ "session": record, "state": state }))
        })
        .map(to_json)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<NativeHost>()?;
    m.add("ScratchpadError", py.get_type::<ScratchpadError>())?;
    m.add("ToolError", py.get_type::<ToolError>())?;
    m.add("PluginError", py.get_type::<PluginError>())?;
    m.add("PluginTimeout", py.get_type::<PluginTimeout>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("SessionNotFound", py.get_type::<SessionNotFound>())?;
    Ok(())
}
