"""The scratchpad host as LangChain 1.x agent middleware.

    from langchain.agents import create_agent
    from scratchpad import Host
    from scratchpad.langchain import ScratchpadMiddleware

    agent = create_agent(model, tools=[...], middleware=[ScratchpadMiddleware(Host.open("agent.db"))])
    agent.invoke({"messages": [("user", "fix the parser")]}, {"configurable": {"thread_id": "t-1"}})

`ScratchpadMiddleware` maps LangChain's agent loop onto the host's hooks; every decision is the
plugins', this module only translates shapes:

- **Sessions and turns.** The thread id (`config["configurable"]["thread_id"]`) is the host's
  session (`default_session` without one), opened on first sight (in `project`, when given: its
  first model call then carries what earlier sessions of the project left); each agent
  invocation is one new turn. Both ids are kept in the agent's state (private keys, never shown to the model), so a
  run resumed after an interrupt stays in its turn.
- **Tools.** The tools the plugins offer in the turn (`Host.tools`) are added to every model
  request, under API-safe names (`session.scratchpad` is offered as `session_scratchpad`), and
  run with `Host.call_tool`. A refusal (`ToolError`), like any other failure of the call, is
  the tool's error text for the model (`status="error"`), not an exception that ends the run. The set follows the plugins turn by turn: `scratchpad_read`
  appears once the turn has an offloaded observation.
- **Injections, not persisted.** Each model call gets `Host.before_query`'s prompt (the
  session's standing guidance, once, and the turn's injections), rendered by the host's
  `Prompt`: system placements around the system prompt, context placements around the last
  human message. Only the request is changed; nothing is written to
  the agent's messages, so the scratchpad block never piles up in the history and is fresh on
  every call, including the first one after LangChain compacted the conversation. (A plugin's
  one-shot hint, such as a nudge, reaches the one call whose `before_query` produced it.)
- **Tool calls and large observations.** Every tool call of the agent, its own tools and the plugins', runs
  between `Host.before_tool_call` (which may rewrite its arguments, e.g. `{{step1.path}}`, or
  block it with a `ToolError`, or fail with a `PluginError`: the call does not run and the model
  reads why) and `Host.after_tool_result` (whose replacement, e.g. the
  synthetic observation of a large result, is what the model sees and what the state keeps;
  the call's arguments are the observation's metadata, so a later `{{stepN.path}}` works).
  Steps are numbered 1, 2, ... per turn, in the order of the model's tool calls.
- **Replies and compaction.** The run's final reply goes to `Host.after_response`. When a
  summarization (LangChain's `SummarizationMiddleware`) replaced the history, the next model
  call first tells the plugins (`Host.after_compaction`), once per summary.

Sync (`invoke`) and async (`ainvoke`) agents are both supported; the async hooks run the host's
calls on worker threads (the host releases the GIL). Host failures other than a tool's refusal
are logged (logger `scratchpad.langchain`) and the turn goes on without the plugins'
contribution, unless the middleware was made with `strict=True`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Dict, List, Optional, Set, Tuple, Union

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ExtendedModelResponse,
        ModelRequest,
        ModelResponse,
    )
    from langchain.agents.middleware.types import PrivateStateAttr
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately
    from langchain_core.tools import BaseTool, ToolException
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command
    from pydantic import Field
    from typing_extensions import Annotated, NotRequired
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "scratchpad.langchain needs LangChain 1.x: pip install 'scratchpad-host[langchain]'"
    ) from error

from . import AsyncHost, Host, PluginError, Prompt, ToolError, Turn, _tool_spec, api_tool_name, check_project
from ._adapt import describe, quietly

__all__ = ["ScratchpadMiddleware", "ScratchpadState", "api_tool_name"]

logger = logging.getLogger(__name__)

_SESSION = "scratchpad_session"
_TURN = "scratchpad_turn"
_COMPACTED = "scratchpad_compacted"
_KEPT_TURNS = 256  # records kept of turns that never reached `after_agent` (a failed run)


class ScratchpadState(AgentState):
    """The agent state with the middleware's private keys: the host session and turn of the
    current run, and the id of the last summary the plugins were told about. Private: not part
    of the agent's input or output, never sent to the model."""

    scratchpad_session: NotRequired[Annotated[str, PrivateStateAttr]]
    scratchpad_turn: NotRequired[Annotated[str, PrivateStateAttr]]
    scratchpad_compacted: NotRequired[Annotated[str, PrivateStateAttr]]


class _PluginTool(BaseTool):
    """One tool of the plugins, bound to a turn: runs `Host.call_tool` with the model's
    arguments. A `ToolError` (or any host failure) is raised as a `ToolException`, which LangChain
    turns into the tool's error message (`status="error"`) for the model."""

    scratchpad_host: Any = Field(exclude=True)
    scratchpad_turn: Any = Field(exclude=True)
    scratchpad_tool: str
    handle_tool_error: Any = True

    def _run(self, **arguments: Any) -> str:
        try:
            return self.scratchpad_host.call_tool(self.scratchpad_turn, self.scratchpad_tool, arguments)
        except Exception as error:  # the model reads every failure; the run goes on
            raise ToolException(describe(error)) from error

    async def _arun(self, **arguments: Any) -> str:
        return await asyncio.to_thread(self._run, **arguments)


@dataclass
class _TurnRecord:
    """What the middleware keeps of a running turn: its tool calls' steps (the next one, and
    each call's by its id) and the context window of its model."""

    next: int = 1
    by_call: Dict[str, int] = field(default_factory=dict)
    window: Optional[int] = None


@dataclass
class _PreparedModelCall:
    request: ModelRequest
    compacted: Optional[str]  # the summary id to record in the state, when one was counted

    def result(self, response: ModelResponse) -> Union[ModelResponse, ExtendedModelResponse]:
        if self.compacted is None:
            return response
        return ExtendedModelResponse(model_response=response, command=Command(update={_COMPACTED: self.compacted}))


@dataclass
class _PreparedToolCall:
    request: ToolCallRequest
    turn: Turn
    name: str  # the host's name of the tool
    arguments: Any
    step: int


class ScratchpadMiddleware(AgentMiddleware):
    """Agent working memory for a LangChain 1.x agent (`create_agent`): the scratchpad host's
    plugins take part in every model call and tool call of the agent. See the module's
    documentation for what each hook does.

    Args:
        host: the host (`scratchpad.Host`, or an `AsyncHost`, whose `Host` is used).
        context_window: the model's context window in tokens, given to the plugins with each
            query and reply (context pressure); without it, the model's profile
            (`max_input_tokens`) when it has one.
        default_session: the session of runs invoked without a thread id.
        project: the project the sessions this middleware creates belong to (recall: a new
            session's first prompt holds what earlier sessions of the project saved), e.g.
            `scratchpad.project_of_dir(repo)` or any key of the caller's; default none. A bad
            key raises `ValueError` here.
        strict: raise host failures instead of logging them and going on (a tool's refusal
            is always the tool's error text for the model).
    """

    state_schema = ScratchpadState

    def __init__(
        self,
        host: Host,
        *,
        context_window: Optional[int] = None,
        default_session: str = "default",
        project: Optional[str] = None,
        strict: bool = False,
    ) -> None:
        super().__init__()
        if project is not None:
            check_project(project)
        self.host = host.host if isinstance(host, AsyncHost) else host
        self.context_window = context_window
        self.default_session = default_session
        self.project = project
        self.strict = strict
        self.tools = []  # the plugins' tools are added per request: they depend on the turn
        self._lock = threading.Lock()
        self._opened: Set[str] = set()
        self._names = self.host.tool_names()
        self._turns: "OrderedDict[Tuple[str, str], _TurnRecord]" = OrderedDict()
        self._fallback_turns: Dict[str, str] = {}

    # -- agent: the turn -------------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        """Starts a turn: the thread's session (opened on first sight) and a new turn id, kept
        in the state's private keys."""
        session = self._thread_session(runtime)
        self._open(session)
        return {_SESSION: session, _TURN: f"lc-{uuid.uuid4().hex}"}

    async def abefore_agent(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        """`before_agent` on a worker thread."""
        return await asyncio.to_thread(self.before_agent, state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        """Ends the turn: its final reply (the last AI message's text) to `Host.after_response`."""
        session, turn_id = self._turn_of(state, runtime)
        messages = _messages(state)
        text = next((_text(m.content) for m in reversed(messages) if isinstance(m, AIMessage)), "")
        with self._lock:
            record = self._turns.pop((session, turn_id), None)
        window = record.window if record is not None else None
        turn = Turn(session, turn_id, _count_tokens(messages), self.context_window or window)
        self._quietly("after_response", self.host.after_response, turn, text)
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        """`after_agent` on a worker thread."""
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # -- model calls: injections and tools -------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Union[ModelResponse, ExtendedModelResponse]:
        """Calls the model with the plugins' injections and tools added to this request only
        (the agent's messages are left as they are), after telling the plugins about a new
        summary of the history."""
        prepared = self._prepare_model_call(request)
        return prepared.result(handler(prepared.request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Union[ModelResponse, ExtendedModelResponse]:
        """`wrap_model_call` for async agents: the host's calls run on a worker thread."""
        prepared = await asyncio.to_thread(self._prepare_model_call, request)
        return prepared.result(await handler(prepared.request))

    def _prepare_model_call(self, request: ModelRequest) -> _PreparedModelCall:
        session, turn_id = self._turn_of(request.state, request.runtime)
        turn = Turn(session, turn_id)
        window = self.context_window or _profile_window(request.model)
        if window:
            with self._lock:
                self._record(session, turn_id).window = window

        compacted = None
        summary = _latest_summary(request.messages)
        if summary is not None and summary != _state_get(request.state, _COMPACTED):
            self._quietly("after_compaction", self.host.after_compaction, turn)
            compacted = summary

        tools = self._plugin_tools(turn, request.tools)
        self._open(session)
        at, human = _last_human(request.messages)
        message = _text(human.content) if human is not None else ""
        system = [request.system_message] if request.system_message is not None else []
        tokens = _count_tokens(system + list(request.messages))
        # The host's prompt holds the session's guidance (once) and the turn's injections;
        # each tool is named as the model is offered it.
        prompt = self._quietly("before_query", self.host.before_query, Turn(session, turn_id, tokens, window), message)
        prompt = prompt.naming(self._names) if prompt is not None else Prompt()

        overrides: Dict[str, Any] = {}
        if human is not None and (prompt.text("prepend-context") or prompt.text("append-context")):
            messages = list(request.messages)
            messages[at] = human.model_copy(update={"content": _user_content(prompt, human.content)})
            overrides["messages"] = messages
        # With no human message to put the context around, the system prompt takes it.
        system_message = _system_message(prompt, request.system_message, with_context=human is None)
        if system_message is not None:
            overrides["system_message"] = system_message

        if tools:
            overrides["tools"] = list(request.tools) + tools
        return _PreparedModelCall(request.override(**overrides) if overrides else request, compacted)

    def _plugin_tools(self, turn: Turn, present: List[Any]) -> List[BaseTool]:
        """The plugins' tools offered in `turn`, as agent tools, except a name already taken."""
        specs = self._quietly("tools", self.host.tools, turn, default=[])
        taken = {_tool_name(t) for t in present}
        tools = []
        for spec in specs:
            if spec.api_name in taken:
                continue
            taken.add(spec.api_name)
            tools.append(self._bind(spec, spec.api_name, turn))
        return tools

    def _bind(self, spec: Any, name: str, turn: Turn) -> BaseTool:
        parameters = spec.parameters if isinstance(spec.parameters, dict) and spec.parameters else {"type": "object"}
        return _PluginTool(
            name=name,
            description=self._names.rewrite(spec.description or spec.name),
            args_schema=parameters,
            scratchpad_host=self.host,
            scratchpad_turn=turn,
            scratchpad_tool=spec.name,
        )

    # -- tool calls: before_tool_call and after_tool_result --------------------------------

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Union[ToolMessage, Command]]
    ) -> Union[ToolMessage, Command]:
        """Runs a tool call between `Host.before_tool_call` and `Host.after_tool_result`; runs
        the plugins' own tools with `Host.call_tool`."""
        prepared = self._prepare_tool_call(request)
        if isinstance(prepared, ToolMessage):
            return prepared
        return self._finish_tool_call(prepared, handler(prepared.request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[Union[ToolMessage, Command]]],
    ) -> Union[ToolMessage, Command]:
        """`wrap_tool_call` for async agents: the host's calls run on a worker thread."""
        prepared = await asyncio.to_thread(self._prepare_tool_call, request)
        if isinstance(prepared, ToolMessage):
            return prepared
        result = await handler(prepared.request)
        return await asyncio.to_thread(self._finish_tool_call, prepared, result)

    def _prepare_tool_call(self, request: ToolCallRequest) -> Union[_PreparedToolCall, ToolMessage]:
        call = request.tool_call
        session, turn_id = self._turn_of(request.state, request.runtime)
        turn = Turn(session, turn_id)
        name = call["name"]
        if request.tool is None:  # not one of the agent's tools: a plugin's (by either name)?
            spec = self._spec(name, turn)
            if spec is not None:
                name = spec.name
                request = request.override(tool=self._bind(spec, call["name"], turn))
        step = self._step(session, turn_id, call, request.state)
        arguments = call.get("args") or {}
        try:
            rewritten = self.host.before_tool_call(turn, name, arguments, step)
        except (ToolError, PluginError) as error:  # blocked: the model reads why
            return ToolMessage(
                content=describe(error), tool_call_id=call["id"], name=call["name"], status="error"
            )
        except Exception:
            if self.strict:
                raise
            logger.exception("scratchpad: before_tool_call of %s failed", name)
            rewritten = arguments
        if rewritten != arguments:
            request = request.override(tool_call={**call, "args": rewritten})
        return _PreparedToolCall(request, turn, name, rewritten, step)

    def _spec(self, name: str, turn: Turn) -> Optional[Any]:
        """The plugin tool the model called `name` (its API name or its own), if any."""
        own = self._names.tool(name) or name
        for plugin in self._quietly("plugins", self.host.plugins, default=[]):
            for raw in plugin.get("tools", []):
                if raw.get("name") == own:
                    return _tool_spec(raw)
        return None

    def _finish_tool_call(self, prepared: _PreparedToolCall, result: Any) -> Any:
        if isinstance(result, ToolMessage):
            return self._observed(prepared, result)
        update = getattr(result, "update", None)
        if isinstance(result, Command) and isinstance(update, dict) and isinstance(update.get("messages"), list):
            call_id = prepared.request.tool_call["id"]
            messages = [
                self._observed(prepared, m) if isinstance(m, ToolMessage) and m.tool_call_id == call_id else m
                for m in update["messages"]
            ]
            return replace(result, update={**update, "messages": messages})
        return result

    def _observed(self, prepared: _PreparedToolCall, message: ToolMessage) -> ToolMessage:
        """The tool's message as the model should see it: `Host.after_tool_result`'s
        replacement when there is one (media-only results are left alone)."""
        text = _tool_text(message.content)
        if text is None:
            return message
        metadata = prepared.arguments if isinstance(prepared.arguments, dict) else None
        replacement = self._quietly(
            "after_tool_result",
            self.host.after_tool_result,
            prepared.turn,
            prepared.name,
            prepared.arguments,
            prepared.step,
            text,
            metadata,
        )
        if replacement is None:
            return message
        return message.model_copy(update={"content": replacement})

    def _step(self, session: str, turn_id: str, call: Dict[str, Any], state: Any) -> int:
        """The call's step in its turn: the model's tool calls are numbered in their order in
        its message, whatever order their (parallel) executions start in."""
        call_id = call.get("id")
        with self._lock:
            steps = self._record(session, turn_id)
            if call_id is not None and call_id in steps.by_call:
                return steps.by_call[call_id]
            if call_id is not None:
                for message in reversed(_messages(state)):
                    calls = getattr(message, "tool_calls", None) or []
                    if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in calls):
                        for c in calls:
                            if c.get("id") is not None and c["id"] not in steps.by_call:
                                steps.by_call[c["id"]] = steps.next
                                steps.next += 1
                        return steps.by_call[call_id]
            step = steps.next
            steps.next += 1
            if call_id is not None:
                steps.by_call[call_id] = step
            return step

    def _record(self, session: str, turn_id: str) -> _TurnRecord:
        """The running turn's record (the caller holds the lock)."""
        key = (session, turn_id)
        record = self._turns.get(key)
        if record is None:
            record = self._turns[key] = _TurnRecord()
            while len(self._turns) > _KEPT_TURNS:
                self._turns.popitem(last=False)
        return record

    # -- sessions ---------------------------------------------------------------------------

    def _thread_session(self, runtime: Any = None) -> str:
        """The session of the running graph: its thread id, else `default_session`."""
        thread = None
        config = getattr(runtime, "config", None)  # a ToolRuntime carries its config
        if config is None:
            try:
                from langgraph.config import get_config

                config = get_config()
            except RuntimeError:
                config = None
        if isinstance(config, dict):
            thread = (config.get("configurable") or {}).get("thread_id")
        if thread is None:
            thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
        return str(thread) if thread is not None and str(thread) else self.default_session

    def _turn_of(self, state: Any, runtime: Any = None) -> Tuple[str, str]:
        """The run's session and turn, as `before_agent` put them in the state."""
        session = _state_get(state, _SESSION) or self._thread_session(runtime)
        turn_id = _state_get(state, _TURN)
        if not turn_id:  # a graph run without before_agent: one turn per session and process
            with self._lock:
                turn_id = self._fallback_turns.setdefault(session, f"lc-{uuid.uuid4().hex}")
        return session, turn_id

    def _open(self, session: str) -> None:
        """Opens the session (created in `project` when missing) the first time this middleware
        sees it."""
        with self._lock:
            if session in self._opened:
                return
        if self._quietly("open_session", self.host.open_session, session, self.project) is not None:
            with self._lock:
                self._opened.add(session)

    def _quietly(self, hook: str, method: Callable[..., Any], *args: Any, default: Any = None) -> Any:
        """A host call whose failure is logged (raised when `strict`)."""
        return quietly(logger, self.strict, hook, method, *args, default=default)


# -- helpers -------------------------------------------------------------------------------


def _state_get(state: Any, key: str) -> Any:
    if isinstance(state, dict):
        return state.get(key)
    return getattr(state, key, None)


def _messages(state: Any) -> List[AnyMessage]:
    messages = _state_get(state, "messages")
    return list(messages) if isinstance(messages, list) else []


def _text(content: Any) -> str:
    """The text of a message's content (a string, or content blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def _tool_text(content: Any) -> Optional[str]:
    """A tool result's text for `after_tool_result`; None when it has no text (media only)."""
    if isinstance(content, str):
        return content
    text = _text(content)
    return text if text else None


def _user_content(prompt: Prompt, content: Any) -> Any:
    """The user message's `content` with the prompt's context placements around it, as
    `Prompt.render` puts them (content blocks: a text block before and after)."""
    if isinstance(content, str):
        return prompt.render("", content)[1]
    before, after = prompt.text("prepend-context"), prompt.text("append-context")
    blocks = list(content or [])
    if before:
        blocks.insert(0, {"type": "text", "text": before})
    if after:
        blocks.append({"type": "text", "text": after})
    return blocks


def _system_message(prompt: Prompt, message: Optional[SystemMessage], with_context: bool) -> Optional[SystemMessage]:
    """The system message with the prompt's system placements around it (and its context ones
    after, `with_context`), as `Prompt.render` puts them; None when nothing changes."""
    def rendered(text: str) -> str:
        return prompt.render_system_only(text) if with_context else prompt.render(text, "")[0]

    content = message.content if message is not None else ""
    if isinstance(content, str):
        text = rendered(content)
        if text == content:
            return None
        return SystemMessage(content=text) if message is None else message.model_copy(update={"content": text})
    # Content blocks: the prepend-system texts in a block before them, the rest in one after.
    before = prompt.text("prepend-system")
    rest = Prompt([i for i in prompt.injections if i.placement != "prepend-system"])
    after = rest.render_system_only("") if with_context else rest.render("", "")[0]
    if not before and not after:
        return None
    blocks = list(content)
    if before:
        blocks.insert(0, {"type": "text", "text": before})
    if after:
        blocks.append({"type": "text", "text": after})
    return message.model_copy(update={"content": blocks})


def _last_human(messages: List[AnyMessage]) -> Tuple[int, Optional[HumanMessage]]:
    for at in range(len(messages) - 1, -1, -1):
        if isinstance(messages[at], HumanMessage):
            return at, messages[at]
    return -1, None


def _latest_summary(messages: List[AnyMessage]) -> Optional[str]:
    """The id of the newest summary `SummarizationMiddleware` put in the history, if any."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and (message.additional_kwargs or {}).get("lc_source") == "summarization":
            if message.id:
                return str(message.id)
            return hashlib.sha256(_text(message.content).encode()).hexdigest()
    return None


def _tool_name(tool: Any) -> Optional[str]:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        return tool.get("name") or (tool.get("function") or {}).get("name")
    return getattr(tool, "__name__", None)


def _count_tokens(messages: List[Any]) -> Optional[int]:
    try:
        return int(count_tokens_approximately(messages))
    except Exception:  # an unusual message: no pressure figure this time
        return None


def _profile_window(model: Any) -> Optional[int]:
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None
