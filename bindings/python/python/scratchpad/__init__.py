"""Agent working memory that survives context compaction: the scratchpad host in-process.

The same host as the Rust library and the `scratchpad` CLI (the wheel carries it): sandboxed
WebAssembly components (the embedded scratchpad and observations plugins by default), every
limit, SQLite or PostgreSQL. The GIL is released while the host works, so threads run calls in
parallel; `AsyncHost` offers the same methods as coroutines.

    from scratchpad import Host, Turn, ToolError
    host = Host.open("agent.db")
    guidance = host.create_session("s1")
    out = host.call_tool(Turn("s1", "t1"), "session.scratchpad", {"action": "set_plan", "content": "1. Fix X"})
    prompt = host.before_query(Turn("s1", "t2"), "continue")
    system, user = prompt.render("You are a coding agent.", "continue")

Recall: a session created in a project (`host.create_session("s2", project=project_of_dir(repo))`,
or any key of the caller's) starts, in its first prompt, from what earlier sessions of that
project saved; `Host.recall_search` and `Host.recall_preview` show what is kept.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from . import _native
from ._native import (
    NativeHost,
    PluginError,
    PluginTimeout,
    ScratchpadError,
    SessionNotFound,
    StorageError,
    ToolError,
    ToolNames,
    api_tool_name,
)
from ._native import check_project as _check_project
from ._native import project_of_dir as _project_of_dir

__all__ = [
    "AsyncHost",
    "Host",
    "Injection",
    "PluginError",
    "PluginTimeout",
    "Prompt",
    "ScratchpadError",
    "SessionNotFound",
    "StorageError",
    "ToolError",
    "ToolNames",
    "ToolSpec",
    "Turn",
    "api_tool_name",
    "check_project",
    "project_of_dir",
]

PLACEMENTS = ("prepend-system", "append-system", "prepend-context", "append-context")


@dataclass(frozen=True)
class Turn:
    """One turn of a session: the runtime's ids, and the context pressure when known."""

    session_id: str
    turn_id: str
    tokens_used: Optional[int] = None
    context_window: Optional[int] = None

    def _json(self) -> str:
        for name in ("session_id", "turn_id"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Turn.{name} must be a str, not {type(getattr(self, name)).__name__}")
        for name in ("tokens_used", "context_window"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise TypeError(f"Turn.{name} must be an int or None, not {type(value).__name__}")
        return json.dumps(self.__dict__)


@dataclass(frozen=True)
class Injection:
    """Text a plugin places in the prompt: `placement` is one of `PLACEMENTS`."""

    plugin: str
    placement: str
    text: str


@dataclass(frozen=True)
class ToolSpec:
    """A tool the plugins offer the model; `parameters` is its JSON Schema. Offer it to a
    model as `api_name` (the name model APIs accept); the host takes either name."""

    plugin: str
    name: str
    description: str
    parameters: dict
    api_name: str = ""


@dataclass(frozen=True)
class Prompt:
    """What `before_query` returns: the injections around the user's untouched message (the
    session's standing guidance among them, once). Joined and rendered by the host's own
    rules, as every runtime renders them."""

    injections: list = field(default_factory=list)

    def _json(self) -> str:
        return json.dumps([i.__dict__ for i in self.injections])

    def text(self, placement: str) -> str:
        """The texts of one placement, joined by blank lines."""
        return _native.prompt_text(self._json(), _str("placement", placement))

    def render(self, system_prompt: str, message: str) -> tuple:
        """The runtime's system prompt and the user's message with the injections around them:
        `(system, user)`."""
        return _native.render_prompt(self._json(), _str("system_prompt", system_prompt), _str("message", message))

    def render_system_only(self, system_prompt: str) -> str:
        """The system prompt with every injection, for a model call with no user message to
        put the context around."""
        return _native.render_system_only(self._json(), _str("system_prompt", system_prompt))

    def naming(self, names: ToolNames) -> "Prompt":
        """This prompt with each tool named as a model offered `names` sees it."""
        return Prompt([Injection(i.plugin, i.placement, names.rewrite(i.text)) for i in self.injections])


def project_of_dir(path: Union[str, "os.PathLike[str]"]) -> str:
    """The project of a working directory (absolute, existing): the root of the git checkout
    holding it (a linked worktree's main checkout), else the directory itself. A coding
    agent's sessions pass it as their `project`, so every session in one checkout shares one.
    A relative or missing directory raises `ValueError`."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    return _project_of_dir(_str("path", os.fspath(path)))


def check_project(key: str) -> None:
    """Raises `ValueError` unless `key` may name a project (1 to 1024 bytes, no control
    characters)."""
    _check_project(_str("project", key))


def _project(project: Optional[str]) -> Optional[str]:
    return None if project is None else _str("project", project)


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _turn(turn: Any) -> str:
    if not isinstance(turn, Turn):
        raise TypeError(f"turn must be a scratchpad.Turn, not {type(turn).__name__}")
    return turn._json()


def _arguments(arguments: Union[str, dict]) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    if isinstance(arguments, str):
        return arguments
    raise TypeError(f"arguments must be a dict or a JSON str, not {type(arguments).__name__}")


def _tool_spec(raw: dict) -> ToolSpec:
    """A tool as the host lists it (`parameters` as JSON text)."""
    parameters = raw.get("parameters") or "{}"
    if isinstance(parameters, str):
        try:
            parameters = json.loads(parameters)
        except ValueError:
            parameters = {}
    return ToolSpec(raw.get("plugin", ""), raw["name"], raw.get("description", ""), parameters or {},
                    raw.get("api_name") or api_tool_name(raw["name"]))


def _injections(text: str) -> list:
    return [Injection(i["plugin"], i["placement"], i["text"]) for i in json.loads(text)]


class Host:
    """The scratchpad host over one database. Open it with `Host.open`; share it across
    threads."""

    def __init__(self, native: NativeHost):
        self._native = native

    @staticmethod
    def open(location: str, config: Optional[str] = None, plugins: Sequence[str] = ()) -> "Host":
        """Opens the database at `location` (a SQLite file, created when missing, or a
        `postgres://` URL) with the configuration file `config` (TOML, as the CLI's `--config`)
        and more component files `plugins` (as `--plugin`)."""
        _str("location", location)
        if config is not None:
            _str("config", config)
        paths = [_str("plugins[]", p) for p in plugins]
        return Host(NativeHost.open(location, config, paths))

    def plugins(self) -> list:
        """The loaded plugins, each a dict with its name, tools and limits."""
        return json.loads(self._native.plugins())

    def create_session(self, session_id: str, project: Optional[str] = None) -> list:
        """Creates the session (`ValueError` when it exists): its standing guidance, a list of
        `Injection` for the system prompt.

        `project` (a key: `project_of_dir` of the agent's working directory, or any name the
        caller chooses) is what recall keeps the session's findings under; the session's first
        prompt holds what earlier sessions of the project left. Without one the session recalls
        nothing and is recalled by nothing. A bad key raises `ValueError`."""
        return _injections(self._native.create_session(_str("session_id", session_id), _project(project)))

    def open_session(self, session_id: str, project: Optional[str] = None) -> list:
        """The session, created (in `project`) when missing: its standing guidance. A session
        that exists keeps its project."""
        return _injections(self._native.open_session(_str("session_id", session_id), _project(project)))

    def tools(self, turn: Turn) -> list:
        """The tools offered to the model in `turn`, a list of `ToolSpec`."""
        return [_tool_spec(t) for t in json.loads(self._native.tools(_turn(turn)))]

    def tool_names(self, prefix: str = "") -> ToolNames:
        """The loaded tools as a model sees them: `prefix` + each tool's API name, for the
        texts that name them (`ToolNames.rewrite`)."""
        return self._native.tool_names(_str("prefix", prefix))

    def call_tool(self, turn: Turn, name: str, arguments: Union[str, dict]) -> str:
        """Runs the plugins' tool `name`: its output text. A refusal raises `ToolError` (its
        `kind` and `message` are for the model); nothing is stored then."""
        return self._native.call_tool(_turn(turn), _str("name", name), _arguments(arguments))

    def before_tool_call(self, turn: Turn, name: str, arguments: Union[str, dict], step: int) -> dict:
        """Every plugin's `before-tool-call` on the agent's tool call (step `step`, 1-based, of
        the turn): the arguments to run it with. A plugin that blocks it raises `ToolError`."""
        if not isinstance(step, int) or step < 0:
            raise TypeError("step must be a non-negative int")
        return json.loads(self._native.before_tool_call(_turn(turn), _str("name", name), _arguments(arguments), step))

    def after_tool_result(
        self,
        turn: Turn,
        name: str,
        arguments: Union[str, dict],
        step: int,
        result: Union[str, bytes],
        metadata: Optional[dict] = None,
    ) -> Optional[str]:
        """Every plugin's `after-tool-result`: what the model should see instead of `result`
        (the large-observation store's synthetic observation for a large one), or None."""
        if isinstance(result, str):
            result = result.encode()
        if not isinstance(result, (bytes, bytearray)):
            raise TypeError(f"result must be str or bytes, not {type(result).__name__}")
        return self._native.after_tool_result(
            _turn(turn), _str("name", name), _arguments(arguments), step, bytes(result), json.dumps(metadata or {})
        )

    def after_response(self, turn: Turn, text: str) -> None:
        """Every plugin's `after-response` on the turn's final reply."""
        self._native.after_response(_turn(turn), _str("text", text))

    def before_query(self, turn: Turn, message: str) -> Prompt:
        """The injections for the user's `message` (which is never changed)."""
        return Prompt(_injections(self._native.before_query(_turn(turn), _str("message", message))))

    def before_compaction(self, turn: Turn) -> list:
        """The warnings to give the model before the runtime compacts, as texts."""
        return [w["text"] for w in json.loads(self._native.before_compaction(_turn(turn)))]

    def after_compaction(self, turn: Turn) -> None:
        """Tells the plugins the runtime compacted the conversation."""
        self._native.after_compaction(_turn(turn))

    def show(self, session_id: str) -> dict:
        """The session's record (its `project` among its fields) and every plugin's stored
        state."""
        return json.loads(self._native.show(_str("session_id", session_id)))

    def recall_search(self, project: str, query: str, limit: int = 10) -> list:
        """What the sessions of `project` left that matches `query` (words), best first within
        each plugin, at most `limit` (1 to 50) per plugin: dicts `{document: {project, plugin,
        id, kind, title, text, at_ms, session}, snippet, score}`. Private spans and secrets
        were removed before anything was kept."""
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise TypeError(f"limit must be an int, not {type(limit).__name__}")
        if not 0 <= limit <= 0xFFFFFFFF:  # the host refuses the rest of the range with its own message
            raise ValueError(f"limit {limit} is out of range")
        return json.loads(self._native.recall_search(_str("project", project), _str("query", query), limit))

    def recall_preview(self, project: str, message: str = "") -> Prompt:
        """What a new session of `project` would receive in its first prompt for `message`
        (earlier sessions' findings among it). Nothing is read of any session and nothing is
        written."""
        return Prompt(_injections(self._native.recall_preview(_str("project", project), _str("message", message))))


class AsyncHost:
    """`Host` for asyncio code: the same methods as coroutines, each run on a worker thread
    (the host releases the GIL, so the event loop and other calls go on)."""

    def __init__(self, host: Host):
        self.host = host

    @staticmethod
    async def open(location: str, config: Optional[str] = None, plugins: Sequence[str] = ()) -> "AsyncHost":
        return AsyncHost(await asyncio.to_thread(Host.open, location, config, plugins))

    def __getattr__(self, name: str):
        method = getattr(self.host, name)
        if not callable(method):
            return method

        async def call(*args, **kwargs):
            return await asyncio.to_thread(method, *args, **kwargs)

        call.__name__ = name
        call.__doc__ = method.__doc__
        return call
