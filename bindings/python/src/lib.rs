//! The scratchpad host as a Python extension module (`scratchpad._native`). The same host as in
//! Rust, with every limit: this module is thin on purpose. It takes and returns JSON text for
//! structured values, and `python/scratchpad/__init__.py` gives them Python classes, so the
//! API lives in one place. The GIL is released while the host works (`Python::detach`), on one
//! tokio runtime per process.

use std::sync::OnceLock;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use scratchpad_embedding::{self as embedding, Class};
use scratchpad_host::{Error, Host, Observation, ToolCall, ToolNames, TurnContext};
use serde_json::Value;

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
    let raised = embedding::raised(&error);
    let message = raised.message;
    let err = match raised.class {
        Class::Tool => ToolError::new_err(message),
        Class::Plugin => PluginError::new_err(message),
        Class::PluginTimeout => PluginTimeout::new_err(message),
        Class::Storage => StorageError::new_err(message),
        Class::SessionNotFound => SessionNotFound::new_err(message),
        Class::InvalidArgument => PyValueError::new_err(message),
        Class::Other => ScratchpadError::new_err(message),
    };
    let value = err.value(py);
    for (name, text) in raised.attributes {
        let _ = value.setattr(name, text);
    }
    err
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
        let host_config = embedding::config(&location, config.as_deref(), &plugins).map_err(PyValueError::new_err)?;
        let host = run(py, Host::open(host_config))?;
        Ok(NativeHost { host })
    }

    /// The loaded plugins and their tools, as JSON.
    fn plugins(&self) -> String {
        to_json(self.host.plugins())
    }

    /// Creates `session` in `project` (refused when it exists): the standing guidance, as JSON.
    #[pyo3(signature = (session, project=None))]
    fn create_session(&self, py: Python<'_>, session: String, project: Option<String>) -> PyResult<String> {
        let host = &self.host;
        let origin = scratchpad_host::Origin::New;
        run(py, async move { host.create_session_in(&session, origin, project.as_deref()).await }).map(to_json)
    }

    /// `session`, created in `project` when missing: its standing guidance, as JSON.
    #[pyo3(signature = (session, project=None))]
    fn open_session(&self, py: Python<'_>, session: String, project: Option<String>) -> PyResult<String> {
        let host = &self.host;
        run(py, embedding::open_session(host, &session, project.as_deref())).map(to_json)
    }

    /// The documents of `project` matching `query`, at most `limit` per plugin, as JSON.
    fn recall_search(&self, py: Python<'_>, project: String, query: String, limit: u32) -> PyResult<String> {
        let host = &self.host;
        run(py, async move { host.recall_search(&project, &query, limit).await }).map(to_json)
    }

    /// The injections a new session of `project` would receive in its first prompt for
    /// `message`, as JSON.
    fn recall_preview(&self, py: Python<'_>, project: String, message: String) -> PyResult<String> {
        let host = &self.host;
        run(py, async move { host.preview_new_session(&project, &message).await })
            .map(|prompt| to_json(prompt.injections))
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
        run(py, embedding::time_in_rust(host, op, &turn, &argument, n))
    }

    /// The loaded tools as a model sees them: `prefix` + each tool's API name.
    #[pyo3(signature = (prefix=""))]
    fn tool_names(&self, prefix: &str) -> NativeToolNames {
        NativeToolNames { names: self.host.tool_names(prefix) }
    }

    /// The session and every plugin's stored state (text values as text), as JSON.
    fn show(&self, py: Python<'_>, session: String) -> PyResult<String> {
        let host = &self.host;
        run(py, embedding::show(host, &session)).map(to_json)
    }
}

/// Tools and the names a model sees for them (`scratchpad_host::ToolNames`).
#[pyclass(module = "scratchpad._native", name = "ToolNames", frozen)]
struct NativeToolNames {
    names: ToolNames,
}

#[pymethods]
impl NativeToolNames {
    /// The model-visible names of `tools` behind `prefix`; two tools with one API name, or an
    /// empty name, raise ValueError.
    #[new]
    #[pyo3(signature = (tools, prefix=""))]
    fn new(tools: Vec<String>, prefix: &str) -> PyResult<Self> {
        let names = ToolNames::new(tools.iter().map(String::as_str), prefix)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(NativeToolNames { names })
    }

    /// The name the model sees for `tool`, or None.
    fn model_name(&self, tool: &str) -> Option<String> {
        self.names.model_name(tool).map(str::to_owned)
    }

    /// The tool behind a model-visible `name`, or None.
    fn tool(&self, name: &str) -> Option<String> {
        self.names.tool(name).map(str::to_owned)
    }

    /// `text` with each whole-word mention of a tool named as the model sees it.
    fn rewrite(&self, text: &str) -> String {
        self.names.rewrite(text)
    }

    /// Every tool and its model-visible name.
    fn items(&self) -> Vec<(String, String)> {
        self.names.iter().map(|(tool, seen)| (tool.to_owned(), seen.to_owned())).collect()
    }
}

/// The project of the directory `dir` (absolute): the root of its git checkout (a linked
/// worktree's main checkout), else the directory itself.
#[pyfunction]
fn project_of_dir(py: Python<'_>, dir: &str) -> PyResult<String> {
    scratchpad_host::project_of_dir(dir).map_err(|e| to_py(py, e))
}

/// Raises ValueError unless `key` may name a project.
#[pyfunction]
fn check_project(py: Python<'_>, key: &str) -> PyResult<()> {
    scratchpad_host::check_project(key).map_err(|e| to_py(py, e))
}

/// `name` as model APIs accept it (`session.scratchpad` → `session_scratchpad`).
#[pyfunction]
fn api_tool_name(name: &str) -> PyResult<String> {
    scratchpad_host::api_tool_name(name).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The texts of one placement of a prompt (its injections as JSON), joined.
#[pyfunction]
fn prompt_text(injections: &str, placement: &str) -> PyResult<String> {
    let prompt = embedding::prompt(injections).map_err(PyValueError::new_err)?;
    Ok(prompt.text(embedding::placement(placement).map_err(PyValueError::new_err)?))
}

/// A prompt (its injections as JSON) rendered around `system` and `message`: `(system, user)`.
#[pyfunction]
fn render_prompt(injections: &str, system: &str, message: &str) -> PyResult<(String, String)> {
    let rendered = embedding::prompt(injections).map_err(PyValueError::new_err)?.render(system, message);
    Ok((rendered.system, rendered.user))
}

/// A prompt (its injections as JSON) rendered into `system` alone, for a call with no user message.
#[pyfunction]
fn render_system_only(injections: &str, system: &str) -> PyResult<String> {
    Ok(embedding::prompt(injections).map_err(PyValueError::new_err)?.render_system_only(system))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<NativeHost>()?;
    m.add_class::<NativeToolNames>()?;
    m.add_function(wrap_pyfunction!(api_tool_name, m)?)?;
    m.add_function(wrap_pyfunction!(project_of_dir, m)?)?;
    m.add_function(wrap_pyfunction!(check_project, m)?)?;
    m.add_function(wrap_pyfunction!(prompt_text, m)?)?;
    m.add_function(wrap_pyfunction!(render_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(render_system_only, m)?)?;
    m.add("ScratchpadError", py.get_type::<ScratchpadError>())?;
    m.add("ToolError", py.get_type::<ToolError>())?;
    m.add("PluginError", py.get_type::<PluginError>())?;
    m.add("PluginTimeout", py.get_type::<PluginTimeout>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("SessionNotFound", py.get_type::<SessionNotFound>())?;
    Ok(())
}
