"""`scratchpad.langchain.ScratchpadMiddleware` in real LangChain 1.x agent loops
(`langchain.agents.create_agent`) over the installed wheel's host, with a scripted chat model:
the plugins' tools, injections that reach the model but never the agent's state, the
large-observation store's offload and read-back, `{{stepN.field}}` references, refusals and blocked calls as error messages
for the model, sync and async agents. Run by `tests/tests/python_wheel.rs` with
`requirements-test.txt` (`langchain==1.5.0`)."""

import asyncio
import json
import threading

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from conftest import big_log
from scratchpad.langchain import ScratchpadMiddleware, api_tool_name

MARKER = "LC-PLAN-MARKER-7"
PLAN = f"1. {MARKER}: fix the parser\n2. test it"
BLOCK = "[Session Scratchpad"
LOG_PATH = "/var/log/app.log"


class Recording:
    """The real host, with every call it gets recorded (name and arguments)."""

    def __init__(self, host):
        self._host = host
        self.calls = []
        self._lock = threading.Lock()

    def __getattr__(self, name):
        method = getattr(self._host, name)

        def call(*args, **kwargs):
            with self._lock:
                self.calls.append((name, args))
            return method(*args, **kwargs)

        return call

    def named(self, name):
        return [args for called, args in self.calls if called == name]


class ScriptedModel(GenericFakeChatModel):
    """A chat model that answers from a script and keeps what it was sent: each request's
    messages (system message first) and the names of the tools bound for it. `bind_tools`
    returns the model itself, so the agent's tool-calling loop runs offline."""

    requests: list = Field(default_factory=list)
    offered: list = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        self.offered.append([convert_to_openai_tool(t)["function"]["name"] for t in tools])
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.requests.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def call(name, args, call_id):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def text(message):
    return message.content if isinstance(message.content, str) else json.dumps(message.content)


def everything(messages):
    """All the text of `messages`: contents and tool-call arguments."""
    return "\n".join(text(m) + json.dumps(getattr(m, "tool_calls", []) or []) for m in messages)


def tool_message(messages, call_id):
    return next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id)


def last_human(request):
    return next(m for m in reversed(request) if isinstance(m, HumanMessage))


def agent_tools(ran):
    @tool
    def read_log(path: str) -> str:
        """Reads a log file."""
        ran.append(("read_log", path))
        return big_log()

    @tool
    def echo(text: str) -> str:
        """Echoes its text."""
        ran.append(("echo", text))
        return f"echo: {text}"

    return [read_log, echo]


def test_api_names():
    assert api_tool_name("session.scratchpad") == "session_scratchpad"
    assert api_tool_name("scratchpad_read") == "scratchpad_read"
    assert api_tool_name("a" * 80) == "a" * 64


def test_a_session_across_compaction_offload_and_read_back(host):
    """Turn 1 saves a plan with the scratchpad tool (and a refused append is only an error
    message); turn 2 reads a huge log, which reaches the model as the large-observation store's synthetic
    observation, greps it back with `scratchpad_read` and references `{{step1.path}}`; turn 3
    runs after LangChain's SummarizationMiddleware compacted the history, and the model still
    gets the plan. No injected text is ever saved in the agent's messages."""

    recording = Recording(host)
    ran = []

    def script():
        # turn 1: the plan, and an append over the notes budget
        yield AIMessage("", tool_calls=[
            call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "c-plan"),
            call("session_scratchpad", {"action": "append_notes", "content": "x" * 5000}, "c-notes"),
        ])
        yield AIMessage("Plan saved.")
        # turn 2: the big log, then the read-back and a reference to step 1's metadata
        yield AIMessage("", tool_calls=[call("read_log", {"path": LOG_PATH}, "c-log")])
        observation = json.loads(tool_message(model.requests[-1], "c-log").content)
        yield AIMessage("", tool_calls=[
            call("scratchpad_read",
                 {"scratchpad_id": observation["scratchpad_id"], "mode": "grep", "pattern": "LAST_CRITICAL_EVENT"},
                 "c-read"),
            call("echo", {"text": "{{step1.path}}"}, "c-echo"),
        ])
        yield AIMessage("The last line is LAST_CRITICAL_EVENT.")
        # turn 3: after the compaction, two model calls
        yield AIMessage("", tool_calls=[call("echo", {"text": "step 2"}, "c-next")])
        yield AIMessage("Next is step 2 of the plan.")

    model = ScriptedModel(messages=script())
    summarizer = GenericFakeChatModel(messages=iter([]))
    agent = create_agent(
        model,
        tools=agent_tools(ran),
        system_prompt="You are a coding agent.",
        middleware=[
            ScratchpadMiddleware(recording, context_window=200_000, strict=True),
            SummarizationMiddleware(summarizer, trigger=("messages", 12), keep=("messages", 2),
                                    summarizer=lambda messages: "SUMMARY: earlier work on the parser."),
        ],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "lc-thread"}}

    # -- turn 1
    first = agent.invoke({"messages": [HumanMessage("fix the parser")]}, config)
    plan = tool_message(first["messages"], "c-plan")
    assert plan.content.startswith("Plan set.") and plan.status != "error"
    refused = tool_message(first["messages"], "c-notes")
    assert refused.status == "error" and "4000" in refused.content, "a refusal is the tool's error text"
    assert first["messages"][-1].content == "Plan saved.", "the run went on after the refusal"
    shown = host.show("lc-thread")
    assert any(MARKER in e["text"] for e in shown["state"]), "the plan is in the host's session"

    for sent in model.requests:
        assert everything(sent).count("## Session Scratchpad") == 1, "the guidance goes once in every model call"
    request = model.requests[0]
    assert isinstance(request[0], SystemMessage)
    assert request[0].content.startswith("You are a coding agent.") and "## Session Scratchpad" in request[0].content
    assert "session_scratchpad" in request[0].content and "session.scratchpad" not in request[0].content, \
        "the guidance names the tool as the model is offered it"
    assert "session_scratchpad" in model.offered[0] and "session.scratchpad" not in model.offered[0]
    assert "scratchpad_read" not in model.offered[0], "nothing offloaded in the turn yet"
    after_plan = last_human(model.requests[1])
    assert BLOCK in text(after_plan) and MARKER in text(after_plan), "the block is fresh on every model call"
    assert text(after_plan).endswith("fix the parser"), "around the user's untouched message"

    # -- turn 2
    second = agent.invoke({"messages": [HumanMessage("find the last critical event in the log")]}, config)
    log_seen = tool_message(model.requests[3], "c-log").content
    observation = json.loads(log_seen)
    assert observation["scratchpad_id"] and "_note" in observation and "summary" in observation
    assert len(log_seen) < 20_000 < 89_042, "the model saw the synthetic observation, not the log"
    assert "scratchpad_read" in model.offered[3], "offered once the turn has an offloaded observation"
    read = json.loads(tool_message(model.requests[4], "c-read").content)
    assert {"line": 2096, "text": "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT"} in read["matches"]
    assert tool_message(model.requests[4], "c-echo").content == f"echo: {LOG_PATH}", "{{step1.path}} resolved"
    assert ("echo", LOG_PATH) in ran
    assert all(len(text(m)) < 20_000 for m in second["messages"]), "the state keeps the observation, not the log"

    # -- turn 3: SummarizationMiddleware compacts the history before the model call
    third = agent.invoke({"messages": [HumanMessage("what's next?")]}, config)
    request = model.requests[5]
    assert any(m.additional_kwargs.get("lc_source") == "summarization" for m in request), "the history was compacted"
    assert not any(getattr(m, "tool_calls", None) for m in request), "the plan's tool call is gone from the history"
    assert MARKER not in everything(third["messages"]), "nothing in the agent's history has the plan any more"
    assert MARKER in text(last_human(request)), "yet the model still gets the plan"
    assert MARKER in text(last_human(model.requests[6])), "on every call"
    assert host.show("lc-thread")["session"]["compaction_count"] == 1, "the plugins were told, once"

    # -- injected, never persisted
    stored = agent.get_state(config).values["messages"]
    for messages in (first["messages"], second["messages"], third["messages"], stored):
        assert BLOCK not in everything(messages) and "## Session Scratchpad" not in everything(messages)

    # -- the host's view of the three turns
    turns = {args[0].turn_id for args in recording.named("before_query")}
    assert len(turns) == 3 and all(args[0].session_id == "lc-thread" for args in recording.named("before_query"))
    assert all(args[0].context_window == 200_000 and args[0].tokens_used for args in recording.named("before_query"))
    steps = {(args[1], args[3]) for args in recording.named("before_tool_call")}
    assert steps == {("session.scratchpad", 1), ("session.scratchpad", 2), ("read_log", 1),
                     ("scratchpad_read", 2), ("echo", 3), ("echo", 1)}, "steps numbered per turn, in the model's order"
    replies = [args[1] for args in recording.named("after_response")]
    assert replies == ["Plan saved.", "The last line is LAST_CRITICAL_EVENT.", "Next is step 2 of the plan."]
    assert [args[0] for args in recording.named("open_session")] == ["lc-thread"], "opened on first sight"


def test_a_blocked_call_is_an_error_message_and_the_tool_never_runs(host):
    ran = []
    model = ScriptedModel(messages=iter([
        AIMessage("", tool_calls=[call("echo", {"text": "{{step9.content}}"}, "c-bad")]),
        AIMessage("I could not."),
    ]))
    agent = create_agent(model, tools=agent_tools(ran), middleware=[ScratchpadMiddleware(host, strict=True)])
    result = agent.invoke({"messages": [HumanMessage("echo step 9")]}, {"configurable": {"thread_id": "blocked"}})
    blocked = tool_message(result["messages"], "c-bad")
    assert blocked.status == "error" and "step 9" in blocked.content, blocked.content
    assert ran == [], "before_tool_call refused it: the tool did not run"
    assert result["messages"][-1].content == "I could not."


def test_without_a_thread_id_the_default_session_is_used_in_the_project(host):
    model = ScriptedModel(messages=iter([
        AIMessage("", tool_calls=[call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "c1")]),
        AIMessage("done"),
        AIMessage("picked up"),
    ]))
    middleware = ScratchpadMiddleware(host, default_session="solo", project="acme/parser", strict=True)
    agent = create_agent(model, tools=[], middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage("plan it")]})
    assert tool_message(result["messages"], "c1").content.startswith("Plan set.")
    assert any(MARKER in e["text"] for e in host.show("solo")["state"])
    assert host.show("solo")["session"]["project"] == "acme/parser", "the session is in the middleware's project"

    # Recall: a new thread of the project starts from what the earlier session saved.
    agent.invoke({"messages": [HumanMessage("fix the parser")]}, {"configurable": {"thread_id": "next"}})
    assert host.show("next")["session"]["project"] == "acme/parser"
    first = everything(model.requests[-1])
    assert "What earlier sessions of this project left" in first and MARKER in first, first
    with pytest.raises(ValueError, match="project key is empty"):
        ScratchpadMiddleware(host, project="")


def test_an_async_agent_runs_the_same_hooks(host):
    ran = []

    def script():
        yield AIMessage("", tool_calls=[call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "a-plan")])
        yield AIMessage("Plan saved.")
        yield AIMessage("", tool_calls=[call("read_log", {"path": LOG_PATH}, "a-log")])
        observation = json.loads(tool_message(model.requests[-1], "a-log").content)
        grep = {"scratchpad_id": observation["scratchpad_id"], "mode": "grep", "pattern": "LAST_CRITICAL_EVENT"}
        yield AIMessage("", tool_calls=[call("scratchpad_read", grep, "a-read")])
        yield AIMessage("Found it.")

    model = ScriptedModel(messages=script())
    agent = create_agent(model, tools=agent_tools(ran), middleware=[ScratchpadMiddleware(host, strict=True)],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "async-thread"}}

    async def run():
        await agent.ainvoke({"messages": [HumanMessage("fix the parser")]}, config)
        return await agent.ainvoke({"messages": [HumanMessage("read the log")]}, config)

    result = asyncio.run(run())
    assert MARKER in text(last_human(model.requests[2])), "turn 2 starts with the plan injected"
    assert "scratchpad_id" in tool_message(model.requests[3], "a-log").content
    read = json.loads(tool_message(result["messages"], "a-read").content)
    assert read["matches"][-1]["text"].endswith("LAST_CRITICAL_EVENT")
    assert BLOCK not in everything(result["messages"])
    assert ran == [("read_log", LOG_PATH)]


def test_a_system_message_of_content_blocks_gets_the_system_placements_as_blocks():
    from scratchpad import Injection, Prompt
    from scratchpad.langchain import _system_message

    prompt = Prompt([
        Injection("p", "prepend-system", "first"),
        Injection("p", "append-system", "guidance"),
        Injection("p", "prepend-context", "[block]"),
    ])
    own = SystemMessage(content=[{"type": "text", "text": "You are a coding agent."}])
    around = _system_message(prompt, own, with_context=False).content
    assert [b["text"] for b in around] == ["first", "You are a coding agent.", "guidance"]
    alone = _system_message(prompt, own, with_context=True).content
    assert [b["text"] for b in alone] == ["first", "You are a coding agent.", "guidance\n\n[block]"]
    assert _system_message(Prompt([]), own, with_context=True) is None, "nothing to add: unchanged"
