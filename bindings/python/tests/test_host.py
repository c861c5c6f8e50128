"""The installed wheel's host: every method, its errors, threads and processes on one database,
PostgreSQL, and a plugin that loops forever. Run by `tests/tests/python_wheel.rs` in a fresh
virtualenv with the wheel installed; `SCRATCHPAD_TEST_POSTGRES` is a fresh database on the test
run's PostgreSQL server and `SCRATCHPAD_PROBE` the hostile test component."""

import json
import multiprocessing
import os
import threading
import time

import pytest

import scratchpad
from conftest import big_log
from scratchpad import Host, PluginTimeout, Prompt, ToolError, Turn

PLAN = {"action": "set_plan", "content": "1. PY-PLAN-7\n2. test it"}


def test_a_whole_session_through_every_method(host):
    guidance = host.create_session("s1")
    assert guidance and guidance[0].placement == "append-system" and "session.scratchpad" in guidance[0].text
    assert host.open_session("s1") == guidance, "open_session returns the stored guidance"
    t1 = Turn("s1", "t1", tokens_used=1000, context_window=200_000)
    assert "session.scratchpad" in [t.name for t in host.tools(t1)]
    assert host.tools(t1)[0].parameters["type"] == "object"
    assert host.call_tool(t1, "session.scratchpad", PLAN).startswith("Plan set.")
    assert host.before_tool_call(t1, "fs_read", {"path": "a"}, 1) == {"path": "a"}
    assert host.after_tool_result(t1, "fs_read", {"path": "a"}, 1, "small") is None
    replaced = host.after_tool_result(t1, "fs_read", {"path": "/var/log/big"}, 2, big_log(), {"path": "/var/log/big"})
    view = json.loads(replaced)
    assert view["scratchpad_id"] and len(replaced) < 20_000, "the large-observation store's synthetic observation"
    read = json.loads(host.call_tool(t1, "scratchpad_read",
                                     {"scratchpad_id": view["scratchpad_id"], "mode": "grep", "pattern": "LAST_CRITICAL"}))
    assert read["matches"] == [{"line": 2096, "text": "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT"}]
    assert host.before_tool_call(t1, "bash", {"cmd": "tail {{step2.path}}"}, 3) == {"cmd": "tail /var/log/big"}
    host.after_response(t1, "I saved the plan.")

    prompt = host.before_query(Turn("s1", "t2"), "continue")
    assert isinstance(prompt, Prompt)
    system, user = prompt.render("You are a coding agent.", "continue")
    assert system.startswith("You are a coding agent.")
    assert "PY-PLAN-7" in user and user.endswith("continue"), "the plan goes before the untouched message"

    warnings = host.before_compaction(Turn("s1", "t2", tokens_used=190_000, context_window=200_000))
    assert any("compact" in w for w in warnings), warnings
    host.after_compaction(Turn("s1", "t2"))
    shown = host.show("s1")
    assert shown["session"]["compaction_count"] == 1
    assert any(e["key"] == "plan" and "PY-PLAN-7" in e["text"] for e in shown["state"])
    assert [p["name"] for p in host.plugins()] == ["scratchpad", "observations"]


def test_a_refusal_is_a_tool_error_and_stores_nothing(host):
    host.create_session("s")
    turn = Turn("s", "t")
    with pytest.raises(ToolError) as refused:
        host.call_tool(turn, "session.scratchpad", {"action": "append_notes", "content": "x" * 5000})
    error = refused.value
    assert (error.kind, error.plugin, error.tool) == ("rejected", "scratchpad", "session.scratchpad")
    assert "4000 char budget" in error.message
    with pytest.raises(ToolError) as malformed:
        host.call_tool(turn, "session.scratchpad", '{"action": "set_plan"')
    assert malformed.value.kind == "invalid-arguments"
    assert host.show("s")["state"] == [], "nothing was stored"


def test_wrong_types_name_the_argument(host):
    host.create_session("s")
    with pytest.raises(TypeError, match="turn must be a scratchpad.Turn"):
        host.call_tool("s", "session.scratchpad", PLAN)
    with pytest.raises(TypeError, match="arguments must be a dict or a JSON str"):
        host.call_tool(Turn("s", "t"), "session.scratchpad", 42)
    with pytest.raises(TypeError, match="Turn.tokens_used must be an int"):
        host.before_query(Turn("s", "t", tokens_used="many"), "hi")
    with pytest.raises(TypeError, match="session_id must be a str"):
        host.create_session(7)
    with pytest.raises(scratchpad.SessionNotFound):
        host.before_query(Turn("ghost", "t"), "hi")
    with pytest.raises(ValueError):
        host.create_session("s")


def append(path, worker, count):
    host = Host.open(path)
    for i in range(count):
        host.call_tool(Turn("shared", f"{worker}-{i}"), "session.scratchpad",
                       {"action": "append_notes", "content": f"line-{worker}-{i}"})


def notes(host):
    state = host.show("shared")["state"]
    return next(e["text"] for e in state if e["key"] == "notes").splitlines()


def test_two_threads_and_two_processes_on_one_file_lose_no_update(tmp_path):
    path = str(tmp_path / "shared.db")
    host = Host.open(path)
    host.create_session("shared")
    threads = [threading.Thread(target=append, args=(path, f"thread{k}", 15)) for k in range(2)]
    processes = [multiprocessing.get_context("spawn").Process(target=append, args=(path, f"proc{k}", 15)) for k in range(2)]
    for worker in threads + processes:
        worker.start()
    for worker in threads + processes:
        worker.join(timeout=300)
    assert all(p.exitcode == 0 for p in processes)
    lines = notes(host)
    assert sorted(lines) == sorted(f"line-{w}-{i}" for w in ["thread0", "thread1", "proc0", "proc1"] for i in range(15))


def test_postgresql_through_the_same_api():
    url = os.environ["SCRATCHPAD_TEST_POSTGRES"]
    host = Host.open(url)
    host.create_session("pg")
    host.call_tool(Turn("pg", "t1"), "session.scratchpad", PLAN)
    again = Host.open(url)
    _, user = again.before_query(Turn("pg", "t2"), "go").render("", "go")
    assert "PY-PLAN-7" in user


def test_a_plugin_that_loops_times_out_while_other_threads_go_on(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[[plugin]]\nname = "scratchpad"\n[[plugin]]\nname = "probe"\n'
        f'path = {json.dumps(os.environ["SCRATCHPAD_PROBE"])}\n'
        'allow_unsigned = true\ngrants = ["config"]\n[plugin.config]\npowers = ["config"]\n'
    )
    host = Host.open(str(tmp_path / "loop.db"), config=str(config))
    host.create_session("loop")
    host.create_session("calm")
    done = []

    def calm_calls():
        for i in range(20):
            host.call_tool(Turn("calm", f"t{i}"), "session.scratchpad", PLAN)
            done.append(time.monotonic())

    started = time.monotonic()
    other = threading.Thread(target=calm_calls)
    other.start()
    with pytest.raises(PluginTimeout) as timeout:
        host.call_tool(Turn("loop", "t"), "probe.loop", {})
    ended = time.monotonic()
    other.join(timeout=120)
    assert timeout.value.plugin == "probe"
    assert len(done) == 20, "the other thread's calls all completed"
    assert any(started < t < ended for t in done), "and some ran while the plugin looped"
