"""`scratchpad.openai_agents.Scratchpad` in real OpenAI Agents SDK runs (`Runner.run`, several
turns, `SQLiteSession` and `OpenAIResponsesCompactionSession`) over the installed wheel's host,
against a scripted Responses API on loopback (`AsyncOpenAI(base_url=...)`): the plugins' tools,
injections in every request that never reach the session's stored items, compaction (forced and
automatic) and trimming, the large-observation store's offload and read-back, blocked calls, and a plugin that
fails. Run by `tests/tests/python_wheel.rs` with `requirements-test.txt` (`openai-agents==0.24.0`)."""

import asyncio
import json
import logging
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agents import (
    Agent,
    OpenAIResponsesModel,
    RunHooks,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from agents.memory import OpenAIResponsesCompactionSession, SessionSettings
from openai import AsyncOpenAI

from conftest import big_log
from scratchpad import Host
from scratchpad.openai_agents import Scratchpad
from test_langchain import BLOCK, LOG_PATH, MARKER, PLAN, Recording

set_tracing_disabled(True)
WARNING = "will be compacted"


class ScriptedResponses:
    """A Responses API on 127.0.0.1: `POST /v1/responses` answers from `script` (a generator
    of output item lists, free to look at the requests so far), `POST /v1/responses/compact`
    answers with the input's user messages and one compaction item. Keeps every request body."""

    def __init__(self):
        self.requests = []
        self.compactions = []
        self.events = []  # "responses" or "compact", in the order they came
        self.script = iter(())
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.events.append("compact" if self.path.endswith("/responses/compact") else "responses")
                if self.path.endswith("/responses/compact"):
                    server.compactions.append(body)
                    answer = server.compacted(body)
                else:
                    server.requests.append(body)
                    answer = response(next(server.script), len(server.requests))
                    if body.get("stream"):
                        return self.stream(answer)
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def stream(self, answer):
                """`answer` as the server-sent events of a streamed response."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                events = [{"type": "response.created", "response": dict(answer, status="in_progress", output=[])}]
                for index, item in enumerate(answer["output"]):
                    events.append({"type": "response.output_item.added", "output_index": index, "item": item})
                    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
                events.append({"type": "response.completed", "response": answer})
                for n, event in enumerate(events):
                    event["sequence_number"] = n
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def compacted(self, body):
        kept = [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("role") == "user"]
        item = {"type": "compaction", "id": f"cmp_{len(self.compactions)}", "encrypted_content": "opaque"}
        return {"id": f"resp_compact_{len(self.compactions)}", "object": "response.compaction", "created_at": 0,
                "output": kept + [item], "usage": usage()}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def usage():
    return {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}


def response(output, n):
    return {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": "gpt-4.1", "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": usage()}


def call(name, args, call_id):
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(args), "status": "completed"}


def say(text):
    return [{"type": "message", "id": f"msg_{abs(hash(text))}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}]


def output_of(request, call_id):
    """What the model was sent as the output of tool call `call_id`."""
    return next(i["output"] for i in request["input"] if i.get("type") == "function_call_output"
                and i.get("call_id") == call_id)


def last_user(request):
    """The texts of the user's turn: the last user message with the user messages beside it
    (the injected context)."""
    items = request["input"]
    at = max(i for i, item in enumerate(items) if item.get("role") == "user")
    start, end = at, at
    while start > 0 and items[start - 1].get("role") == "user":
        start -= 1
    while end + 1 < len(items) and items[end + 1].get("role") == "user":
        end += 1
    return "\n\n".join(text_of(item["content"]) for item in items[start:end + 1])


def text_of(content):
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def offered(request):
    return [t["name"] for t in request.get("tools") or []]


@pytest.fixture
def api():
    server = ScriptedResponses()
    yield server
    server.close()


@pytest.fixture
def client(api):
    return AsyncOpenAI(base_url=api.url, api_key="sk-test")


def coder(client, ran):
    @function_tool
    def read_log(path: str) -> str:
        """Reads a log file."""
        ran.append(("read_log", path))
        return big_log()

    @function_tool
    def echo(text: str) -> str:
        """Echoes its text."""
        ran.append(("echo", text))
        return f"echo: {text}"

    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
    return Agent(name="coder", instructions="You are a coding agent.", model=model, tools=[read_log, echo])


def test_a_session_across_offload_compaction_and_trimming(host, api, client, tmp_path):
    """Turn 1 saves a plan with the scratchpad tool (a refused append is only the tool's
    output); turn 2 reads a huge log, which reaches the model as the large-observation store's synthetic
    observation, greps it back with `scratchpad_read` and references `{{step1.path}}`; then a
    forced compaction replaces the stored history, and turn 3 (after it) and turn 4 (with the
    history trimmed to two items) still give the model the plan. No injected text is ever
    stored in the session."""

    recording = Recording(host)
    ran = []
    pad = Scratchpad(recording, context_window=128_000, strict=True)
    agent = coder(client, ran)
    session = OpenAIResponsesCompactionSession(
        "oa-thread", underlying_session=SQLiteSession("oa-thread", str(tmp_path / "history.db")),
        client=client, model="gpt-4.1", should_trigger_compaction=lambda context: False,
    )

    def script():
        # turn 1: the plan, and an append over the notes budget
        yield [call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "c-plan"),
               call("session_scratchpad", {"action": "append_notes", "content": "x" * 5000}, "c-notes")]
        yield say("Plan saved.")
        # turn 2: the big log, then the read-back and a reference to step 1's metadata
        yield [call("read_log", {"path": LOG_PATH}, "c-log")]
        observation = json.loads(output_of(api.requests[-1], "c-log"))
        yield [call("scratchpad_read", {"scratchpad_id": observation["scratchpad_id"], "mode": "grep",
                                        "pattern": "LAST_CRITICAL_EVENT"}, "c-read"),
               call("echo", {"text": "{{step1.path}}"}, "c-echo")]
        yield say("The last line is LAST_CRITICAL_EVENT.")
        # turn 3, after the compaction: two model calls
        yield [call("echo", {"text": "step 2"}, "c-next")]
        yield say("Next is step 2 of the plan.")
        # turn 4, trimmed
        yield say("Still step 2.")

    api.script = script()

    async def turns():
        results = [await pad.run(agent, "fix the parser", session=session),
                   await pad.run(agent, "find the last critical event in the log", session=session)]
        await session.run_compaction({"force": True})
        results.append(await pad.run(agent, "what's next?", session=session))
        trimmed = {"session_settings": SessionSettings(limit=2)}  # a RunConfig's fields as a dict, as the SDK takes
        results.append(await pad.run(agent, "and now?", session=session, run_config=trimmed))
        return results, await session.get_items(), await session.underlying_session.get_items()

    results, items, stored = asyncio.run(turns())
    requests = api.requests
    assert len(requests) == 8 and len(api.compactions) == 1

    # -- turn 1
    assert output_of(requests[1], "c-plan").startswith("Plan set.")
    assert "4000" in output_of(requests[1], "c-notes"), "a refusal is the tool's output for the model"
    assert results[0].final_output == "Plan saved.", "the run went on after the refusal"
    assert any(MARKER in e["text"] for e in host.show("oa-thread")["state"]), "the plan is in the host's session"
    for request in requests:
        assert json.dumps(request).count("## Session Scratchpad") == 1, "the guidance goes once in every model call"
    first = requests[0]
    assert first["instructions"].startswith("You are a coding agent.") and "## Session Scratchpad" in first["instructions"]
    assert "session_scratchpad" in first["instructions"] and "session.scratchpad" not in first["instructions"], \
        "the guidance names the tool as the model is offered it"
    assert "session_scratchpad" in offered(first) and "scratchpad_read" not in offered(first), \
        "scratchpad_read is offered only once the turn has an offloaded observation"
    assert BLOCK in last_user(requests[1]) and MARKER in last_user(requests[1]), "the block is fresh on every call"
    assert last_user(requests[1]).endswith("fix the parser"), "around the user's untouched message"

    # -- turn 2: the large-observation store's offload and read-back
    log_seen = output_of(requests[3], "c-log")
    observation = json.loads(log_seen)
    assert observation["scratchpad_id"] and "summary" in observation
    assert len(log_seen) < 20_000 < 89_042, "the model saw the synthetic observation, not the log"
    assert "scratchpad_read" in offered(requests[3]), "offered once the turn has an offloaded observation"
    read = json.loads(output_of(requests[4], "c-read"))
    assert {"line": 2096, "text": "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT"} in read["matches"]
    assert output_of(requests[4], "c-echo") == f"echo: {LOG_PATH}", "{{step1.path}} resolved"
    assert ("echo", LOG_PATH) in ran

    # -- turn 3: after the forced compaction
    after = requests[5]
    assert any(i.get("type") == "compaction" for i in after["input"]), "the history was compacted"
    assert not any(i.get("type") == "function_call" for i in after["input"]), "the plan's tool call is gone"
    assert MARKER in last_user(after) and MARKER in last_user(requests[6]), "yet every call still gets the plan"
    assert WARNING in last_user(after), "an unannounced compaction's warning goes with the next call"
    assert WARNING not in last_user(requests[6]), "once"
    assert host.show("oa-thread")["session"]["compaction_count"] == 1, "the plugins were told, once"

    # -- turn 4: the history trimmed to two items
    trimmed = requests[7]
    assert len([i for i in trimmed["input"] if i.get("role") == "user"]) <= 2
    assert MARKER in last_user(trimmed) and last_user(trimmed).endswith("and now?")

    # -- injected, never persisted
    for kept in (items, stored):
        text = json.dumps(kept)
        assert BLOCK not in text and "## Session Scratchpad" not in text and WARNING not in text
    assert len(log_seen) < 20_000 and all(len(json.dumps(i)) < 20_000 for i in stored), \
        "the session stores the observation, not the log"

    # -- the host's view of the four turns
    queries = recording.named("before_query")
    assert len({args[0].turn_id for args in queries}) == 4
    assert all(args[0].session_id == "oa-thread" and args[0].context_window == 128_000 and args[0].tokens_used
               for args in queries)
    steps = [(args[1], args[3]) for args in recording.named("before_tool_call")]
    assert steps == [("session.scratchpad", 1), ("session.scratchpad", 2), ("read_log", 1),
                     ("scratchpad_read", 2), ("echo", 3), ("echo", 1)], "steps numbered per turn, in the model's order"
    replies = [args[1] for args in recording.named("after_response")]
    assert replies == ["Plan saved.", "The last line is LAST_CRITICAL_EVENT.", "Next is step 2 of the plan.",
                       "Still step 2."]


def test_an_automatic_compaction_is_announced_before_it_happens(host, api, client, tmp_path):
    """With the session's own decision hook due, the model call of that turn carries the
    warning (the model can still save its state); the SDK then compacts after the turn, the
    plugins count it once, and the plan is in the next request."""

    recording = Recording(host)
    pad = Scratchpad(recording, strict=True)
    agent = coder(client, [])
    due = lambda context: len(context["compaction_candidate_items"]) >= 3  # noqa: E731
    session = OpenAIResponsesCompactionSession(
        "auto-thread", underlying_session=SQLiteSession("auto-thread", str(tmp_path / "history.db")),
        client=client, model="gpt-4.1", should_trigger_compaction=due,
    )
    api.script = iter([
        [call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "a-plan")],
        say("Plan saved."),  # this call's input, with its reply, holds 3 candidate items: due
        say("Noted."),
        say("Carrying on."),
    ])

    async def turns():
        await pad.run(agent, "plan it", session=session)
        await pad.run(agent, "note it", session=session)
        await pad.run(agent, "go on", session=session)
        return await session.get_items()

    items = asyncio.run(turns())
    requests = api.requests
    assert api.events == ["responses"] * 2 + ["compact"] + ["responses"] * 2, "compacted after turn 1"
    assert WARNING not in last_user(requests[0]), "not due yet"
    assert WARNING in last_user(requests[1]), "announced in the call before the compaction"
    assert any(i.get("type") == "compaction" for i in requests[2]["input"])
    assert MARKER in last_user(requests[2]) and WARNING not in last_user(requests[2]), "the plan after it, no repeat"
    assert WARNING not in last_user(requests[3])
    assert len(recording.named("before_compaction")) == 1
    assert host.show("auto-thread")["session"]["compaction_count"] == 1, "counted once"
    assert WARNING not in json.dumps(items) and BLOCK not in json.dumps(items)


def test_a_blocked_call_never_runs_and_malformed_arguments_store_nothing(host, api, client):
    ran = []
    api.script = iter([
        [call("echo", {"text": "{{step9.content}}"}, "b-bad"),
         call("session_scratchpad", {"action": "set_plan", "content": 42}, "b-args")],
        say("I could not."),
    ])
    pad = Scratchpad(host, strict=True)
    result = asyncio.run(pad.run(coder(client, ran), "echo step 9", session_id="blocked"))
    blocked = output_of(api.requests[1], "b-bad")
    assert "step 9" in blocked, blocked
    assert ran == [], "before_tool_call refused it: the tool did not run"
    refused = output_of(api.requests[1], "b-args")
    assert "`content` must be a string" in refused, "malformed arguments are refused with the reason"
    assert host.show("blocked")["state"] == [], "nothing stored"
    assert result.final_output == "I could not."


def test_run_sync_without_a_session_uses_the_default_session_in_the_project(host, api, client):
    api.script = iter([[call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "s1")], say("done"),
                       say("picked up")])
    pad = Scratchpad(host, default_session="solo", project="acme/parser", strict=True)
    result = pad.run_sync(coder(client, []), "plan it")
    assert result.final_output == "done"
    assert output_of(api.requests[1], "s1").startswith("Plan set.")
    assert any(MARKER in e["text"] for e in host.show("solo")["state"])
    assert host.show("solo")["session"]["project"] == "acme/parser", "the session is in the adapter's project"

    # Recall: a new session of the project starts from what the earlier one saved.
    pad.run_sync(coder(client, []), "fix the parser", session_id="next")
    assert host.show("next")["session"]["project"] == "acme/parser"
    first = json.dumps(api.requests[-1])
    assert "What earlier sessions of this project left" in first and MARKER in first, first
    with pytest.raises(ValueError, match="project key is empty"):
        Scratchpad(host, project="")


def test_a_failing_plugin_costs_its_hook_never_the_turn(tmp_path, api, client, caplog):
    """A plugin whose `before_query` loops ends in its deadline; the run goes on (the failure is
    logged), the other plugins' tools still work, and the reply is the model's."""
    config = tmp_path / "config.toml"
    config.write_text(
        '[limits]\ncall_timeout_ms = 300\n'
        '[[plugin]]\nname = "scratchpad"\n[[plugin]]\nname = "probe"\n'
        f'path = {json.dumps(os.environ["SCRATCHPAD_PROBE"])}\n'
        'allow_unsigned = true\ngrants = ["config", "inject", "storage"]\n[plugin.config]\npowers = ["config", "inject", "storage"]\nqueryMode = "loop"\n'
    )
    host = Host.open(str(tmp_path / "loop.db"), config=str(config))
    api.script = iter([[call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "f1")], say("Saved anyway.")])
    with caplog.at_level(logging.ERROR, logger="scratchpad.openai_agents"):
        result = asyncio.run(Scratchpad(host).run(coder(client, []), "plan it", session_id="flaky"))
    assert any("before_query failed" in r.getMessage() and "PluginTimeout" in r.exc_text for r in caplog.records), \
        "the looping plugin's call timed out, and was logged"
    assert result.final_output == "Saved anyway."
    assert output_of(api.requests[1], "f1").startswith("Plan set.")
    assert any(MARKER in e["text"] for e in host.show("flaky")["state"])


def test_a_streamed_run_hands_off_and_keeps_the_callers_hooks(host, api, client):
    """`run_streamed`: a triage agent hands off to the coder (listed in its handoffs), which gets
    the plugins' tools and saves the plan; the events stream; the caller's own run hooks are
    still called; the final output reaches `after_response` before the stream ends."""

    class Seen(RunHooks):
        def __init__(self):
            self.calls = []

        async def on_agent_start(self, context, agent):
            self.calls.append(("start", agent.name))

        async def on_agent_end(self, context, agent, output):
            self.calls.append(("end", agent.name, output))

    recording = Recording(host)
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
    coding = coder(client, [])
    triage = Agent(name="triage", instructions="Route the request.", model=model, handoffs=[coding])
    api.script = iter([
        [call("transfer_to_coder", {}, "h-1")],
        [call("session_scratchpad", {"action": "set_plan", "content": PLAN}, "h-plan")],
        say("Planned."),
    ])
    seen = Seen()

    async def streamed():
        result = Scratchpad(recording, strict=True).run_streamed(triage, "plan the fix", session_id="streamed",
                                                                 hooks=seen)
        kinds = {event.type async for event in result.stream_events()}
        return result, kinds

    result, kinds = asyncio.run(streamed())
    assert result.final_output == "Planned." and result.last_agent.name == "coder"
    assert "raw_response_event" in kinds, "the events streamed"
    assert "session_scratchpad" in offered(api.requests[0]) and "session_scratchpad" in offered(api.requests[1]), \
        "both agents are offered the plugins' tools"
    assert output_of(api.requests[2], "h-plan").startswith("Plan set."), "the coder saved the plan"
    assert all("## Session Scratchpad" in r["instructions"] for r in api.requests), "both agents get the guidance"
    assert any(MARKER in e["text"] for e in host.show("streamed")["state"])
    assert ("start", "triage") in seen.calls and ("end", "coder", "Planned.") in seen.calls, "the caller's hooks ran"
    assert [args[1] for args in recording.named("after_response")] == ["Planned."]
