"""A Python host for scratchpad plugin components, on wasmtime-py's component API.

It gives one component (e.g. the scratchpad, guest/) what the `scratchpad:plugin/plugin` world
imports (wit/): storage scoped to the component and the session of the call, cl100k_base token
counts, logging, its configuration, and the observation handed to `after-tool-result`; WASI
comes from wasmtime's own WASIp2 with nothing granted (no files, environment, arguments or
network). Like the Rust host (host/src/host.rs), every call runs in a fresh instance, and its
storage writes are committed when it returns (for a tool, only when it returns `ok`).

    host = ScratchpadHost("scratchpad_guest.wasm", config={})
    guidance = host.create_session("s1")                      # system-prompt guidance
    host.call_tool("s1", "t1", "session.scratchpad", '{"action": "set_plan", "content": "1. Fix X"}')
    injections = host.before_query("s1", "t2", "continue")   # [(placement, text)] for this turn
"""

import functools
import hashlib
import json
import sys

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record, ResourceHost, ResourceType

from scope import Scope, apply

WORLD = "scratchpad:plugin/{}@0.1.3"
QUOTA_BYTES = 8 << 20  # the Rust host's default storage quota per plugin per session
MEMORY_BYTES = 64 << 20  # the Rust host's default memory cap per call
MAX_READ_BYTES = 1 << 20  # the largest slice `observation.read` returns
OBSERVATION = 1  # our id for the host-defined `observation` resource type


class LoadError(Exception):
    """The component refused its configuration (`load` returned `err`)."""


class UnknownTool(Exception):
    """No tool of that name is declared by the component; it was not called."""


class ToolError(Exception):
    """A tool refused the call; nothing was changed. `variant` is the `tool-error` case."""

    def __init__(self, variant: str, message: str):
        super().__init__(f"{variant}: {message}")
        self.variant, self.message = variant, message


def record(**fields) -> Record:
    """A WIT record; field names are the WIT names (`session_id` becomes `session-id`)."""
    value = Record()
    for name, field in fields.items():
        setattr(value, name.replace("_", "-"), field)
    return value


class Call:
    """What the imports of one call see: its storage scope and its observations."""

    def __init__(self, scope: Scope):
        self.scope = scope
        self.observations = []


ENGINE = Engine()


@functools.cache
def compile_component(wasm_path: str) -> Component:
    """The component at `wasm_path`, compiled once per process."""
    return Component.from_file(ENGINE, wasm_path)


class ScratchpadHost:
    def __init__(self, wasm_path: str, config: dict | None = None, quota_bytes: int = QUOTA_BYTES, tokenizer=None):
        self.engine = ENGINE
        self.component = compile_component(wasm_path)
        self.config_json = json.dumps(config if config is not None else {})
        self.quota_bytes = quota_bytes
        self.tokenizer = tokenizer
        self.sessions = {}  # id -> {"turn_id", "turn_index", "state": {key: bytes}}
        self.call = None
        self.linker = Linker(self.engine)
        self.linker.add_wasip2()
        self._define_imports()
        manifest = self._run("lifecycle", "load", Call(Scope({}, self.quota_bytes)))
        if isinstance(manifest, str):
            raise LoadError(manifest)
        self.manifest = [tool.name for tool in manifest.tools]

    # -- the imports -------------------------------------------------------------------------

    def _define_imports(self):
        with self.linker.root() as root:
            with root.add_instance(WORLD.format("storage")) as storage:
                storage.add_func("get", lambda _, key: self.call.scope.get(key))
                storage.add_func("set", lambda _, key, value: storage_result(self.call.scope.set(key, value)))
                storage.add_func("delete", lambda _, key: self.call.scope.delete(key))
                storage.add_func("keys", lambda _, prefix: self.call.scope.keys(prefix))
            with root.add_instance(WORLD.format("tokens")) as tokens:
                tokens.add_func("count", lambda _, text: len(self._tokens().encode_ordinary(text)))
                tokens.add_func("encoding", lambda _: "cl100k_base")
            with root.add_instance(WORLD.format("log")) as log:
                log.add_func("log", lambda _, level, message: print(f"[plugin {level}] {message}", file=sys.stderr))
            with root.add_instance(WORLD.format("config")) as config:
                config.add_func("get", lambda _: self.config_json)
            # No summarizer and no project: no checkpoint is ever written, and the session has
            # no search index (recall answers `none`, as the Rust host's does for a session
            # without a project). A call that writes or searches anyway traps.
            with root.add_instance(WORLD.format("checkpoints")) as checkpoints:
                checkpoints.add_func("available", lambda _: False)
                checkpoints.add_func("request", lambda _, request: no_host_support("a checkpoint"))
                checkpoints.add_func("latest", lambda _: None)
            with root.add_instance(WORLD.format("index")) as index:
                index.add_func("current-access", lambda _: "none")
                for function in ["put", "remove", "get", "search", "recent"]:
                    index.add_func(function, lambda _, *args: no_host_support("a search index"))
            with root.add_instance(WORLD.format("observation")) as observation:
                observation.add_resource("observation", ResourceType.host(OBSERVATION), lambda _, rep: None)
                for method, answer in OBSERVATION_METHODS.items():
                    observation.add_func(f"[method]observation.{method}", self._observation_method(answer))

    def _observation_method(self, answer):
        def method(store, handle, *args):
            return answer(self.call.observations[handle.to_host(store).rep], *args)

        return method

    def _tokens(self):
        if self.tokenizer is None:
            import bpe_openai  # cl100k_base, shipped inside the package: no download

            self.tokenizer = bpe_openai.get_encoding("cl100k_base")
        return self.tokenizer

    # -- one call ----------------------------------------------------------------------------

    def _run(self, interface: str, function: str, call: Call, *args):
        """Runs `function` of `interface` in a fresh instance with `call`'s scope. An argument may
        be a function of the store (a resource handle made in it)."""
        store = Store(self.engine)
        store.set_wasi(WasiConfig())  # grants nothing
        store.set_limits(memory_size=MEMORY_BYTES)
        self.call = call
        try:
            instance = self.linker.instantiate(store, self.component)
            exported = instance.get_export_index(store, WORLD.format(interface))
            func = instance.get_func(store, instance.get_export_index(store, function, exported))
            result = func(store, *[arg(store) if callable(arg) else arg for arg in args])
            func.post_return(store)
            return result
        finally:
            self.call = None

    def _session_call(self, session_id: str, interface: str, function: str, *args, commit=lambda _: True):
        """Runs a call on `session_id`'s state and commits its writes when `commit(result)`."""
        session = self.sessions[session_id]
        call = Call(Scope(session["state"], self.quota_bytes))
        result = self._run(interface, function, call, *args)
        if commit(result):
            apply(session["state"], call.scope.writes)
        return result

    def _turn(self, session_id: str, turn_id: str) -> Record:
        """The contract's `turn`: a new turn id starts the next turn index (from 0)."""
        session = self.sessions[session_id]
        if session["turn_id"] != turn_id:
            session["turn_id"], session["turn_index"] = turn_id, session["turn_index"] + 1
        return record(
            session_id=session_id, turn_id=turn_id, turn_index=session["turn_index"], tokens_used=None, context_window=None
        )

    # -- the embedding API -------------------------------------------------------------------

    def create_session(self, session_id: str, origin: tuple = ("new",)) -> list:
        """Creates a session; returns the standing guidance as (placement, text) pairs.
        `origin` is ("new",), ("spawn", parent, copy) or ("fork", parent)."""
        if session_id in self.sessions:
            raise ValueError(f"session `{session_id}` already exists")
        parent = origin[1] if len(origin) > 1 else None
        if parent is not None and parent not in self.sessions:
            raise ValueError(f"parent session `{parent}` does not exist")
        # wasmtime-py lowers this variant by the payload's type: None (new), a record (spawn), a str (fork).
        wit_origin = record(parent=parent, copy_requested=origin[2]) if origin[0] == "spawn" else parent
        info = record(session_id=session_id, origin=wit_origin)
        call = Call(Scope({}, self.quota_bytes))  # the hook sees empty storage
        setup = self._run("hooks", "before-session-create", call, info)
        inherit = parent is not None and getattr(setup, "inherit-parent-state")
        state = dict(self.sessions[parent]["state"]) if inherit else {}
        apply(state, call.scope.writes)  # the hook's writes go over the copy
        self.sessions[session_id] = {"turn_id": None, "turn_index": -1, "state": state}
        return [(i.placement, i.text) for i in setup.injections]

    def tools(self, session_id: str, turn_id: str) -> list:
        """The tools offered in this turn (names)."""
        turn = self._turn(session_id, turn_id)
        return [tool.name for tool in self._session_call(session_id, "tools", "list-tools", turn)]

    def call_tool(self, session_id: str, turn_id: str, name: str, arguments: str) -> str:
        """Runs a tool; returns what the model sees, or raises ToolError (nothing changed)."""
        if name not in self.manifest:
            raise UnknownTool(name)
        turn = self._turn(session_id, turn_id)
        result = self._session_call(
            session_id, "tools", "call-tool", turn, name, arguments, commit=lambda r: isinstance(r, Record)
        )
        if isinstance(result, Record):
            return result.content
        raise ToolError(result.tag, result.payload)

    def before_query(self, session_id: str, turn_id: str, message: str) -> list:
        """This turn's injections as (placement, text) pairs; the message is never changed."""
        turn = self._turn(session_id, turn_id)
        return [(i.placement, i.text) for i in self._session_call(session_id, "hooks", "before-query", turn, message)]

    def after_response(self, session_id: str, turn_id: str, text: str) -> None:
        self._session_call(session_id, "hooks", "after-response", self._turn(session_id, turn_id), text)

    def before_compaction(self, session_id: str, turn_id: str):
        """The warning turn to send before compacting, or None."""
        return self._session_call(session_id, "hooks", "before-compaction", self._turn(session_id, turn_id))

    def after_compaction(self, session_id: str, turn_id: str) -> None:
        self._session_call(session_id, "hooks", "after-compaction", self._turn(session_id, turn_id))

    def after_tool_result(self, session_id: str, turn_id: str, call: dict, content: bytes, metadata: dict | None = None):
        """What the model should see of a tool's result: a replacement text, or None."""
        turn = self._turn(session_id, turn_id)
        tool_call = record(name=call["name"], arguments=call["arguments"], step=call["step"])
        observation = Observation(content, json.dumps(metadata or {}))

        def handle(store):
            self.call.observations.append(observation)
            return ResourceHost.own(len(self.call.observations) - 1, OBSERVATION)

        return self._session_call(session_id, "hooks", "after-tool-result", turn, tool_call, handle)

    def state(self, session_id: str) -> dict:
        """Every key the component stores for the session."""
        return dict(self.sessions[session_id]["state"])


def no_host_support(what: str):
    raise RuntimeError(f"this host has no {what}")


def storage_result(refusal):
    """`result<_, storage-error>` as wasmtime-py lowers it: None, or the case's payload."""
    if refusal is None:
        return None
    case, payload = refusal
    return record(**payload) if case == "quota-exceeded" else payload


class Observation:
    """A tool result held by the host (wit/observation.wit)."""

    def __init__(self, content: bytes, metadata: str):
        self.bytes = content
        try:
            self.text = content.decode("utf-8")
        except UnicodeDecodeError:
            self.text = None
        self.metadata = metadata


OBSERVATION_METHODS = {
    "size": lambda o: len(o.bytes),
    "kind": lambda o: "text" if o.text is not None else "binary",
    "read": lambda o, offset, length: o.bytes[offset : offset + min(length, MAX_READ_BYTES)],
    "size-chars": lambda o: len(o.text) if o.text is not None else len(o.bytes),
    "sha256": lambda o: hashlib.sha256(o.bytes).hexdigest(),
    "metadata": lambda o: o.metadata,
}
