"""Rolling checkpoints through a non-Rust runtime's model over `scratchpad serve --summarize`.

Usage: python3 rpc_checkpoints.py PATH/TO/scratchpad
The sidecar sends the client a `summarize` request (server -> client, as LSP servers do) when
context-guard asks for a checkpoint; this client answers it with a scripted model's summary and
the checkpoint is stored with the context-pressure policy's fields. A client that answers with an error gets
-32006 for the turn and no checkpoint, with the turn's hooks kept. Stdlib only.
"""

import os
import sys
import tempfile

from support import SUMMARY, Sidecar, write_config

def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        rpc = Sidecar(binary, os.path.join(tmp, "rpc.db"), ["--config", write_config(tmp)], ["--summarize"])

        def request(method, params, answer_summarize=None):
            """Sends a request, answering the server's `summarize` requests on the way; returns
            the response and the summarize requests seen."""
            response = rpc.call(method, params, answer_summarize)
            return response, rpc.asked

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

        rpc.close()
        print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1])
