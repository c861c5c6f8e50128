"""Rolling checkpoints through a non-Rust runtime's model over `scratchpad serve --summarize`.

Usage: python3 rpc_checkpoints.py PATH/TO/scratchpad
The sidecar sends the client a `summarize` request (server -> client, as LSP servers do) when
context-guard asks for a checkpoint; this client answers it with a scripted model's summary and
the checkpoint is stored with seed 002's fields. A client that answers with an error gets
-32006 for the turn and no checkpoint, with the turn's hooks kept. Stdlib only.
"""

import json
import os
import subprocess
import sys
import tempfile

CONFIG = """
[[plugin]]
name = "scratchpad"
[[plugin]]
name = "context-guard"
[plugin.limits]
call_timeout_ms = 5000
[plugin.config]
showContext = false
[plugin.config.checkpoint]
enabled = true
minTokensForGen = 0
"""

SUMMARY = {
    "summary": "Checkpoints from Python.",
    "topics": ["JSON-RPC"],
    "keyDecisions": ["the client answers summarize"],
    "openQuestions": [],
}


def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        env = dict(os.environ, XDG_CACHE_HOME=os.environ.get("SCRATCHPAD_TEST_CACHE_HOME") or os.path.join(tmp, "cache"))
        proc = subprocess.Popen([binary, "--db", os.path.join(tmp, "rpc.db"), "--config", config, "serve", "--summarize"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        next_id = [0]

        def send(message):
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()

        def read():
            line = proc.stdout.readline()
            assert line, "the server closed its output"
            return json.loads(line)

        def request(method, params, answer_summarize=None):
            """Sends a request; answers the server's `summarize` requests on the way with
            `answer_summarize(params)` -> ("result" | "error", value); returns the response
            and the summarize requests seen."""
            next_id[0] += 1
            send({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params})
            asked = []
            while True:
                message = read()
                if message.get("method") == "summarize":
                    asked.append(message)
                    kind, value = answer_summarize(message["params"])
                    send({"jsonrpc": "2.0", "id": message["id"], kind: value})
                    continue
                assert message["id"] == next_id[0], message
                return message, asked

        def turn(session, turn_id, tokens):
            return {"session_id": session, "turn_id": turn_id, "tokens_used": tokens, "context_window": 200000}

        checks = 0
        request("session.create", {"session": "py-cp"})
        model = lambda params: ("result", dict(SUMMARY, summary=f"{params['message_count']} messages at {params['tokens']} tokens"))
        response, asked = request("after_response", {"turn": turn("py-cp", "t1", 20000), "text": "ok"}, model)
        assert response["result"] == {} and asked == [], (response, asked)
        response, asked = request("after_response", {"turn": turn("py-cp", "t2", 60000), "text": "ok"}, model)
        assert response["result"] == {}, response
        assert len(asked) == 1, asked
        params = asked[0]["params"]
        assert (params["session_id"], params["turn_id"], params["plugin"]) == ("py-cp", "t2", "context-guard"), params
        assert params["trigger"] == {"kind": "token-percent", "value": 25}, params
        checks += 2
        shown, _ = request("session.show", {"session": "py-cp"})
        checkpoint = shown["result"]["latest_checkpoint"]
        assert checkpoint["checkpoint"] == dict(SUMMARY, summary="2 messages at 60000 tokens"), checkpoint
        assert checkpoint["tokensAtCheckpoint"] == 60000 and checkpoint["messageCountAtCheckpoint"] == 2, checkpoint
        assert checkpoint["parentId"] is None and checkpoint["sessionId"] == "py-cp", checkpoint
        checks += 1

        request("session.create", {"session": "py-decline"})
        decline = lambda params: ("error", {"code": -1, "message": "the model is unavailable"})
        response, asked = request("after_response", {"turn": turn("py-decline", "t1", 60000), "text": "ok"}, decline)
        assert len(asked) == 1, asked
        assert response["error"]["code"] == -32006 and response["error"]["data"] == {"session": "py-decline"}, response
        assert "the model is unavailable" in response["error"]["message"], response
        shown, _ = request("session.show", {"session": "py-decline"})
        assert shown["result"]["latest_checkpoint"] is None, shown
        assert any(e["plugin"] == "context-guard" for e in shown["result"]["state"]), "the turn's hooks are kept"
        checks += 2

        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1])
