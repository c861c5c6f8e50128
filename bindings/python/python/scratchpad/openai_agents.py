"""The scratchpad host in OpenAI Agents SDK runs (`openai-agents`).

    from agents import Agent, SQLiteSession
    from scratchpad import Host
    from scratchpad.openai_agents import Scratchpad

    pad = Scratchpad(Host.open("agent.db"))
    agent = Agent(name="coder", instructions="You are a coding agent.", tools=[read_log])
    result = await pad.run(agent, "fix the parser", session=SQLiteSession("user-42", "history.db"))

`Scratchpad.run` (and `run_sync`) is `Runner.run` with the plugins taking part in every model
call and tool call of the run; every decision is the plugins', this module only translates
shapes:

- **Sessions and turns.** The SDK session's `session_id` is the host's session (`session_id=`
  when the run has no SDK session, else `default_session`), opened at the start of each run
  (created in `project`, when given: its first model call then carries what earlier sessions of
  the project left); each run is one new turn.
- **Injections, not persisted.** A `RunConfig.call_model_input_filter` (chained after the
  caller's own) renders `Host.before_query`'s prompt (the session's guidance, once, and the
  turn's injections) into every model call, by the host's `Prompt`: system placements around the instructions, context placements as
  user messages of their own just before and after the last user message of the input (which
  is left as it is). Only the request is changed: the SDK stores the run's items, never the
  filtered input, so no injected block reaches the session's history, and the plan is in every
  request, including the first one after the history was compacted or trimmed
  (`SessionSettings(limit=...)`). Adding items rather than editing the user's keeps the stored
  history a subsequence of the request, which is what the SDK's automatic compaction checks
  before it compacts.
- **Tools.** Every tool the plugins declare is added to the agent as a function tool under its
  API-safe name (`session.scratchpad` as `session_scratchpad`), enabled in the model calls
  whose turn offers it (`Host.tools`: `scratchpad_read` once the turn has an offloaded
  observation), run with `Host.call_tool`. A refusal is the tool's output for the model.
- **Tool calls and large observations.** Every function tool call of the agent, its own tools and the
  plugins', runs between `Host.before_tool_call` (which may rewrite its arguments, e.g.
  `{{step1.path}}`, or block it: the tool does not run and the model reads why) and
  `Host.after_tool_result` (whose replacement, e.g. the synthetic observation of a large
  result, is what the model sees and what the session stores). Steps are numbered 1, 2, ... per
  turn, in the order the calls start (the SDK starts them in the model's order). Hosted tools
  (web search, file search, computer use) are the provider's and are left alone.
- **Replies.** The run's final output goes to `Host.after_response` (a `RunHooks.on_agent_end`
  chained before the caller's own hooks), before the run ends.
- **Compaction.** With an `OpenAIResponsesCompactionSession`, its own decision hook
  (`should_trigger_compaction`) is asked before each model call whether the history in that
  call's input, with the reply the call will add, is due for compaction (the SDK compacts after
  the turn); when it is, `Host.before_compaction`'s warnings go with that call, so the model can
  save what it needs before the compaction.
  A compaction item that appears in the input (the Responses API's compaction replaced the
  history) is counted once with `Host.after_compaction`; a compaction that came unannounced (a
  forced `run_compaction`) has its warnings delivered then, as the other runtimes whose
  compaction hooks cannot reach the model do.

`run_streamed` is `Runner.run_streamed` the same way. The agents the starting agent hands off
to (listed as `Agent`s in `handoffs`) get the same tools and tool hooks; the agent inside a
`handoff(...)` object is left as it is (the injections still reach it). The host's calls run
on worker threads (the host releases the GIL). Host failures other than a tool's refusal are
logged (logger `scratchpad.openai_agents`) and the run goes on without the plugins'
contribution, unless `strict=True`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import inspect
import json
import logging
import threading
import uuid
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Set, Tuple, Union

try:
    from agents import Agent, FunctionTool, RunConfig, RunHooks, Runner, RunResult, RunResultStreaming
    from agents.lifecycle import RunHooksBase
    from agents.run_config import CallModelData, ModelInputData
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "scratchpad.openai_agents needs the OpenAI Agents SDK: pip install 'scratchpad-host[openai-agents]'"
    ) from error

from . import AsyncHost, Host, Injection, PluginError, Prompt, ToolError, Turn, _tool_spec, check_project
from ._adapt import describe, quietly

__all__ = ["Scratchpad"]

logger = logging.getLogger(__name__)

_KEPT_SESSIONS = 4096  # sessions whose compaction record is kept in memory
_CHARS_PER_TOKEN = 4  # the input's size in tokens, approximately, for the plugins' context pressure
# The reply a model call is about to add to the history: a compaction is due after the turn
# when the history with it is (were it the turn's last call; a later call is asked again).
_REPLY = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ""}]}


@dataclass
class _Run:
    """One `Scratchpad.run`: the host's turn, the SDK session (for its compaction decision), the
    next tool step, and the tools the turn offers (asked again after every tool call: an
    offloaded observation adds `scratchpad_read`)."""

    session_id: str
    turn_id: str
    session: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_step: int = 1
    offered: Optional[Set[str]] = None

    def turn(self, tokens: Optional[int] = None, window: Optional[int] = None) -> Turn:
        return Turn(self.session_id, self.turn_id, tokens, window)

    def step(self) -> int:
        with self.lock:
            step = self.next_step
            self.next_step += 1
            return step


@dataclass
class _Compactions:
    """What is known of a session's compactions: the compaction items its history held at the
    last model call, and whether the coming one was announced."""

    seen: Set[str]
    warned: bool = False


# The run whose model calls and tool calls are being served: set by `Scratchpad.run` in the
# task that runs the SDK's loop, inherited by every task and worker thread the loop starts.
_CURRENT: ContextVar[Optional[_Run]] = ContextVar("scratchpad_openai_agents_run", default=None)


@contextmanager
def _serving(run: _Run) -> Iterator[None]:
    """`run` is the current run while the block runs (the SDK starts its tasks inside it)."""
    token = _CURRENT.set(run)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class Scratchpad:
    """Agent working memory for OpenAI Agents SDK runs. See the module's documentation for what
    each part does.

    Args:
        host: the host (`scratchpad.Host`, or an `AsyncHost`, whose `Host` is used).
        context_window: the model's context window in tokens, given to the plugins with each
            query and reply (context pressure).
        default_session: the session of runs with neither an SDK session nor `session_id`.
        project: the project the sessions this adapter creates belong to (recall: a new
            session's first prompt holds what earlier sessions of the project saved), e.g.
            `scratchpad.project_of_dir(repo)` or any key of the caller's; default none. A bad
            key raises `ValueError` here.
        strict: raise host failures instead of logging them and going on (a tool's refusal
            is always the tool's output for the model).
    """

    def __init__(
        self,
        host: Host,
        *,
        context_window: Optional[int] = None,
        default_session: str = "default",
        project: Optional[str] = None,
        strict: bool = False,
    ) -> None:
        if project is not None:
            check_project(project)
        self.host = host.host if isinstance(host, AsyncHost) else host
        self.context_window = context_window
        self.default_session = default_session
        self.project = project
        self.strict = strict
        self._names = self.host.tool_names()
        self._lock = threading.Lock()
        self._compactions: "OrderedDict[str, _Compactions]" = OrderedDict()

    # -- runs ---------------------------------------------------------------------------------

    async def run(
        self,
        starting_agent: Agent,
        input: Any,
        *,
        session: Any = None,
        session_id: Optional[str] = None,
        run_config: Union[RunConfig, Dict[str, Any], None] = None,
        hooks: Optional[RunHooks] = None,
        **kwargs: Any,
    ) -> RunResult:
        """`Runner.run(starting_agent, input, session=session, ...)` as one turn of the host's
        session, with the plugins' tools, injections and hooks."""
        run, options = await asyncio.to_thread(self._prepare, starting_agent, session, session_id, run_config, hooks)
        with _serving(run):
            return await Runner.run(input=input, session=session, **options, **kwargs)

    def run_sync(
        self,
        starting_agent: Agent,
        input: Any,
        *,
        session: Any = None,
        session_id: Optional[str] = None,
        run_config: Union[RunConfig, Dict[str, Any], None] = None,
        hooks: Optional[RunHooks] = None,
        **kwargs: Any,
    ) -> RunResult:
        """`run` for code without an event loop (`Runner.run_sync`)."""
        run, options = self._prepare(starting_agent, session, session_id, run_config, hooks)
        with _serving(run):
            return Runner.run_sync(input=input, session=session, **options, **kwargs)

    def run_streamed(
        self,
        starting_agent: Agent,
        input: Any,
        *,
        session: Any = None,
        session_id: Optional[str] = None,
        run_config: Union[RunConfig, Dict[str, Any], None] = None,
        hooks: Optional[RunHooks] = None,
        **kwargs: Any,
    ) -> RunResultStreaming:
        """`run` in streaming mode (`Runner.run_streamed`): the run goes on in the task the SDK
        starts here, which keeps this turn."""
        run, options = self._prepare(starting_agent, session, session_id, run_config, hooks)
        with _serving(run):
            return Runner.run_streamed(input=input, session=session, **options, **kwargs)

    def _prepare(
        self, starting_agent: Agent, session: Any, session_id: Optional[str], run_config: Any, hooks: Any
    ) -> Tuple[_Run, Dict[str, Any]]:
        """The run's turn (its session opened), and the SDK's arguments for it."""
        sdk_id = getattr(session, "session_id", None)
        chosen = sdk_id if isinstance(sdk_id, str) and sdk_id else session_id or self.default_session
        self._quietly("open_session", self.host.open_session, chosen, self.project)
        run = _Run(chosen, f"oa-{uuid.uuid4().hex}", session)
        options = {
            "starting_agent": self.agent(starting_agent),
            "run_config": self.run_config(run_config),
            "hooks": _Hooks(self, hooks),
        }
        return run, options

    def _respond(self, run: _Run, output: Any) -> None:
        """The run's final output to `after_response`."""
        text = output if isinstance(output, str) else _json_text(output)
        self._quietly("after_response", self.host.after_response, run.turn(None, self.context_window), text)

    # -- the agent: its tools wrapped, the plugins' tools added ---------------------------------

    def agent(self, agent: Agent) -> Agent:
        """A copy of `agent` whose function tools run between the plugins' tool hooks, with the
        plugins' tools added (each enabled when its turn offers it); the agents it hands off to
        (listed as agents) are copied the same way. `run` does this itself; it is public for
        callers that build their own runs around `run_config`."""
        specs = [_tool_spec(raw) for plugin in self._quietly("plugins", self.host.plugins, default=[])
                 for raw in plugin.get("tools", [])]
        return self._copy(agent, specs, {})

    def _copy(self, agent: Agent, specs: List[Any], copies: Dict[int, Agent]) -> Agent:
        if id(agent) in copies:  # agents may hand off to each other
            return copies[id(agent)]
        tools = [self._wrapped(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        taken = {getattr(t, "name", None) for t in tools}
        for spec in specs:
            if spec.api_name in taken:
                continue
            taken.add(spec.api_name)
            tools.append(self._plugin_tool(spec, spec.api_name))
        copy = copies[id(agent)] = agent.clone(tools=tools)
        copy.handoffs = [self._copy(h, specs, copies) if isinstance(h, Agent) else h for h in agent.handoffs]
        return copy

    def _wrapped(self, tool: FunctionTool) -> FunctionTool:
        original = tool.on_invoke_tool

        async def invoke(context: Any, arguments: str) -> Any:
            return await self._tool_call(tool.name, context, arguments, original)

        return dataclasses.replace(tool, on_invoke_tool=invoke)

    def _plugin_tool(self, spec: Any, name: str) -> FunctionTool:
        async def execute(context: Any, arguments: str) -> str:
            run = _CURRENT.get()
            try:
                return await asyncio.to_thread(self.host.call_tool, run.turn(), spec.name, arguments)
            except Exception as error:  # a refusal, or any failure: the model reads why
                return describe(error)

        async def invoke(context: Any, arguments: str) -> Any:
            if _CURRENT.get() is None:
                return f"{name} works only in runs started by scratchpad.openai_agents.Scratchpad.run"
            return await self._tool_call(spec.name, context, arguments, execute)

        async def enabled(context: Any, agent: Any) -> bool:
            run = _CURRENT.get()
            return run is not None and spec.name in await asyncio.to_thread(self._offered, run)

        parameters = spec.parameters if isinstance(spec.parameters, dict) and spec.parameters else {"type": "object"}
        return FunctionTool(
            name=name,
            description=self._names.rewrite(spec.description or spec.name),
            params_json_schema=parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,  # the plugins' schemas have optional properties
            is_enabled=enabled,
        )

    def _offered(self, run: _Run) -> Set[str]:
        """The names of the tools the plugins offer in the run's turn now."""
        with run.lock:
            if run.offered is not None:
                return run.offered
        specs = self._quietly("tools", self.host.tools, run.turn(), default=[])
        offered = {spec.name for spec in specs}
        with run.lock:
            run.offered = offered
        return offered

    # -- tool calls: before_tool_call and after_tool_result -------------------------------------

    async def _tool_call(
        self, name: str, context: Any, arguments: str, execute: Callable[[Any, str], Awaitable[Any]]
    ) -> Any:
        """Runs one tool call between `Host.before_tool_call` and `Host.after_tool_result`."""
        run = _CURRENT.get()
        if run is None:  # not a run of ours: the tool as it is
            return await execute(context, arguments)
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError:  # the SDK tells the model its arguments are not JSON
            return await execute(context, arguments)
        step = run.step()
        try:
            rewritten = await asyncio.to_thread(self.host.before_tool_call, run.turn(), name, parsed, step)
        except (ToolError, PluginError) as error:  # blocked: the model reads why
            return describe(error)
        except Exception:
            if self.strict:
                raise
            logger.exception("scratchpad: before_tool_call of %s failed", name)
            rewritten = parsed
        result = await execute(context, arguments if rewritten == parsed else json.dumps(rewritten))
        with run.lock:
            run.offered = None
        text = result if isinstance(result, str) else _json_text(result) if isinstance(result, (dict, list)) else None
        if text is None:  # media or another structured output: the model sees it as it is
            return result
        metadata = rewritten if isinstance(rewritten, dict) else None
        replacement = await asyncio.to_thread(
            self._quietly, "after_tool_result", self.host.after_tool_result, run.turn(), name, rewritten, step, text,
            metadata,
        )
        return result if replacement is None else replacement

    # -- model calls: the injections ------------------------------------------------------------

    def run_config(self, run_config: Union[RunConfig, Dict[str, Any], None] = None) -> RunConfig:
        """`run_config` (or a new one) with the injections' filter after its own
        `call_model_input_filter`."""
        if isinstance(run_config, dict):  # the SDK takes a RunConfig's fields as a dict too
            run_config = RunConfig(**run_config)
        config = run_config if run_config is not None else RunConfig()
        theirs = config.call_model_input_filter

        async def injecting(data: CallModelData) -> ModelInputData:
            if theirs is not None:
                filtered = theirs(data)
                data = dataclasses.replace(data, model_data=await filtered if inspect.isawaitable(filtered) else filtered)
            run = _CURRENT.get()
            if run is None:
                return data.model_data
            return await asyncio.to_thread(self._inject, run, data.model_data)

        return dataclasses.replace(config, call_model_input_filter=injecting)

    def _inject(self, run: _Run, model_data: ModelInputData) -> ModelInputData:
        items = list(model_data.input)
        tokens = (len(model_data.instructions or "") + len(_json_text(items))) // _CHARS_PER_TOKEN
        turn = run.turn(tokens, self.context_window)
        warnings = self._compaction(run, turn, items)
        at, message = _last_user(items)
        prompt = self._quietly("before_query", self.host.before_query, turn, _content_text(message) if message else "")
        # The host's prompt holds the session's guidance (once) and the turn's injections; the
        # compaction warnings go first, as context. Each tool is named as the model sees it.
        prompt = Prompt(
            [Injection("scratchpad", "prepend-context", w) for w in warnings]
            + list(getattr(prompt, "injections", None) or [])
        ).naming(self._names)
        before_context, after_context = prompt.text("prepend-context"), prompt.text("append-context")
        if message is not None:  # messages of their own: the stored items stay a subsequence of the input
            items[at:at + 1] = [_message(t) for t in [before_context] if t] + [message] + [
                _message(t) for t in [after_context] if t
            ]
            instructions = prompt.render(model_data.instructions or "", "")[0]
        else:  # no user message to put them around: the instructions take them
            instructions = prompt.render_system_only(model_data.instructions or "")
        return ModelInputData(input=items, instructions=instructions or model_data.instructions)

    def _compaction(self, run: _Run, turn: Turn, items: List[Any]) -> List[str]:
        """Tells the plugins about a compaction: its warnings before (when the session's decision
        hook says the history is due), its count after (a new compaction item in the input).
        Returns the warnings for this model call."""
        keys = {_compaction_key(i) for i in items if isinstance(i, dict) and i.get("type") == "compaction"}
        with self._lock:
            record = self._compactions.get(run.session_id)
            if record is None:  # first sight in this process: the compactions before it are counted
                record = self._compactions[run.session_id] = _Compactions(set(keys))
                while len(self._compactions) > _KEPT_SESSIONS:
                    self._compactions.popitem(last=False)
            self._compactions.move_to_end(run.session_id)
            new = keys - record.seen
            record.seen = keys
            announced = record.warned
            due = not new and not announced and _compaction_due(run.session, items + [_REPLY])
            record.warned = due or (announced and not new)
        warnings: List[str] = []
        if (new and not announced) or due:
            warnings = self._quietly("before_compaction", self.host.before_compaction, turn, default=[])
        if new:
            self._quietly("after_compaction", self.host.after_compaction, turn)
        return warnings

    def _quietly(self, hook: str, method: Callable[..., Any], *args: Any, default: Any = None) -> Any:
        """A host call whose failure is logged (raised when `strict`)."""
        return quietly(logger, self.strict, hook, method, *args, default=default)


class _Hooks(RunHooks):
    """The caller's run hooks (if any), with the final output also given to `after_response`
    before the run ends (streamed runs included)."""

    def __init__(self, pad: Scratchpad, theirs: Optional[RunHooks]) -> None:
        self._pad = pad
        self._theirs = theirs

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        run = _CURRENT.get()
        if run is not None and output is not None:
            await asyncio.to_thread(self._pad._respond, run, output)
        if self._theirs is not None:
            await self._theirs.on_agent_end(context, agent, output)


def _delegate(name: str) -> Callable[..., Awaitable[Any]]:
    async def hook(self: _Hooks, *args: Any, **kwargs: Any) -> Any:
        if self._theirs is not None:
            return await getattr(self._theirs, name)(*args, **kwargs)
        return None

    hook.__name__ = name
    return hook


for _name in [n for n in vars(RunHooksBase) if n.startswith("on_") and n != "on_agent_end"]:
    setattr(_Hooks, _name, _delegate(_name))


# -- helpers -----------------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _last_user(items: List[Any]) -> tuple:
    """The last user message of the input (an easy input message or a message item), and where."""
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message":
            return at, item
    return -1, None


def _content_text(message: Dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        part["text"] for part in content or []
        if isinstance(part, dict) and part.get("type") in ("input_text", "text") and isinstance(part.get("text"), str)
    )


def _message(text: str) -> Dict[str, Any]:
    """An injected text as an input message of the user's turn."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _compaction_key(item: Dict[str, Any]) -> str:
    """A compaction item's identity: its id, else a digest of its content."""
    if isinstance(item.get("id"), str) and item["id"]:
        return item["id"]
    return hashlib.sha256(_json_text(item.get("encrypted_content", item)).encode()).hexdigest()


def _compaction_due(session: Any, items: List[Any]) -> bool:
    """Whether `session`'s own compaction decision hook would compact history like `items`."""
    decide = getattr(session, "should_trigger_compaction", None)
    if not callable(decide):
        return False
    try:
        from agents.memory.openai_responses_compaction_session import select_compaction_candidate_items

        return bool(decide({
            "response_id": None,
            "compaction_mode": getattr(session, "compaction_mode", "auto"),
            "compaction_candidate_items": select_compaction_candidate_items(items),
            "session_items": items,
        }))
    except Exception:  # a hook that needs more than the input: no announcement
        logger.debug("scratchpad: the session's compaction decision hook failed", exc_info=True)
        return False
