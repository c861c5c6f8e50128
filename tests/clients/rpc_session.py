"""A whole agent session driven through `scratchpad serve` by a Python client (stdlib only).

Usage: python3 rpc_session.py PATH/TO/scratchpad
This is what a non-Rust runtime does: spawn the sidecar, speak newline-delimited JSON-RPC 2.0.
Exits non-zero on the first failed check.
"""

import json
import os
import sys
import tempfile

from support import Sidecar


def turn(turn_id, **extra):
    return dict({"session_id": "py-1", "turn_id": turn_id}, **extra)


def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        rpc = Sidecar(binary, os.path.join(tmp, "rpc.db"))
        checks = 0

        plugins = rpc.ok("plugins")["plugins"]
        assert "scratchpad" in [p["name"] for p in plugins], plugins
        guidance = rpc.ok("session.create", {"session": "py-1"})["guidance"]
        assert any("session.scratchpad" in g["text"] for g in guidance), guidance
        checks += 2

        tools = rpc.ok("tools.list", {"turn": turn("t1")})["tools"]
        assert [t["name"] for t in tools if t["plugin"] == "scratchpad"] == ["session.scratchpad"], tools
        out = rpc.ok("tools.call", {"turn": turn("t1"), "name": "session.scratchpad",
                                    "arguments": {"action": "set_plan", "content": "1. port to Python"}})
        assert out["plugin"] == "scratchpad" and "plan" in out["content"].lower(), out
        refused = rpc.call("tools.call", {"turn": turn("t1"), "name": "session.scratchpad",
                                          "arguments": {"action": "refs.remove", "ref": "nope"}})
        assert refused["error"]["code"] == -32001, refused
        assert refused["error"]["data"]["kind"] == "not-found", refused
        checks += 3

        args = rpc.ok("before_tool_call", {"turn": turn("t1"), "call": {"name": "fs_read", "arguments": "{\"path\":\"a\"}", "step": 1}})
        assert json.loads(args["arguments"]) == {"path": "a"}, args
        view = rpc.ok("after_tool_result", {"turn": turn("t1"), "call": {"name": "fs_read", "arguments": "{}", "step": 1}, "text": "small"})
        assert view["replacement"] is None, view
        rpc.ok("after_response", {"turn": turn("t1"), "text": "Saved the plan."})
        checks += 3

        prompt = rpc.ok("before_query", {"turn": turn("t2"), "message": "continue", "system": "You are an agent."})
        block = prompt["injections"]["prepend-context"]
        assert block and "1. port to Python" in block[0]["text"], prompt
        assert prompt["rendered"]["user"].endswith("continue"), prompt
        assert prompt["rendered"]["system"].startswith("You are an agent."), prompt
        checks += 3

        warnings = rpc.ok("before_compaction", {"turn": turn("t2", tokens_used=190000, context_window=200000)})["warnings"]
        assert any("compacted" in w["text"] for w in warnings), warnings
        rpc.ok("after_compaction", {"turn": turn("t2")})
        shown = rpc.ok("session.show", {"session": "py-1"})
        assert shown["session"]["compaction_count"] == 1, shown
        assert any(e["key"] == "plan" for e in shown["state"]), shown
        assert "removed" in rpc.ok("gc")
        metrics = rpc.ok("metrics")["text"]
        assert 'scratchpad_tool_errors_total{plugin="scratchpad",tool="session.scratchpad",kind="not-found"} 1' in metrics, metrics
        assert 'scratchpad_plugin_call_duration_seconds_count{plugin="scratchpad",hook="before-query"} 1' in metrics, metrics
        assert "py-1" not in metrics, "no session id in the metrics"
        checks += 5

        # Tool names as the client's model is offered them: each tool's API name, texts naming
        # tools by it (`api_names`), the guidance once among the injections, calls by either name.
        named = rpc.ok("plugins", {"api_names": True})["plugins"]
        pad = next(t for p in named for t in p["tools"] if t["name"] == "session.scratchpad")
        assert pad["api_name"] == "session_scratchpad", pad
        api = rpc.ok("before_query", {"turn": turn("t3"), "message": "continue", "api_names": True})
        texts = [i["text"] for placed in api["injections"].values() for i in placed]
        assert sum(t.count("## Session Scratchpad") for t in texts) == 1, "the guidance once"
        assert not any("session.scratchpad" in t for t in texts) and any("session_scratchpad" in t for t in texts), api
        assert "session_scratchpad" in api["rendered"]["system"] and "session.scratchpad" not in api["rendered"]["system"], api
        noted = rpc.ok("tools.call", {"turn": turn("t3"), "name": "session_scratchpad",
                                      "arguments": {"action": "set_notes", "content": "by API name"}})
        assert noted["plugin"] == "scratchpad", noted
        assert rpc.call("plugins", {"api_names": "yes"})["error"]["code"] == -32602
        checks += 6

        # Bad input gets an error response and the server keeps going.
        rpc.send_raw("this is not json")
        assert rpc.read()["error"]["code"] == -32700
        rpc.send_raw(json.dumps({"jsonrpc": "2.0", "id": 99, "method": 7}))
        assert rpc.read()["error"]["code"] == -32600
        assert rpc.call("no.such.method")["error"]["code"] == -32601
        assert rpc.call("tools.list", {"turn": {"session_id": "py-1"}})["error"]["code"] == -32602
        assert rpc.call("tools.list", {"turn": turn("t3"), "surprise": 1})["error"]["code"] == -32602
        missing = rpc.call("before_query", {"turn": {"session_id": "ghost", "turn_id": "t"}, "message": "hi"})
        assert missing["error"]["code"] == -32003, missing
        exists = rpc.call("session.create", {"session": "py-1"})
        assert exists["error"]["code"] == -32004, exists
        checks += 7

        # Concurrent requests are answered, each exactly once, matched by id.
        sent = set()
        for i in range(20):
            session = f"c-{i}"
            sent.add(rpc.send("session.create", {"session": session}))
        answers = [rpc.read() for _ in sent]
        assert {a["id"] for a in answers} == sent, answers
        assert all("result" in a for a in answers), answers
        checks += 1

        rpc.close()
        print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1])
