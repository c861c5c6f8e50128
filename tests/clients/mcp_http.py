"""`scratchpad mcp --http` driven by the official MCP Python SDK over Streamable HTTP.

Usage: python3 mcp_http.py PATH/TO/scratchpad
Starts the server on 127.0.0.1 (port chosen by the system) with a bearer token from a file,
and checks: refusals (no token, a wrong token, a foreign Origin or Host) that change nothing;
two clients on two sessions at once, isolated; the guidance prompt; one mimeType; a resource
subscription notified after a write by a separate `scratchpad call` process; logging/setLevel
with a log notification from the host; checkpoints written through the client's model by
sampling (a scripted model), and a client that declines or cannot sample (no checkpoint, the
turn's hooks kept). Exits non-zero on the first failed check; kills the server by PID.
"""

import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile

import httpx
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from support import SUMMARY, env_for, write_config

class Server:
    def __init__(self, binary, tmp):
        self.binary, self.db = binary, os.path.join(tmp, "http.db")
        self.env = env_for(tmp)
        self.env.pop("SCRATCHPAD_MCP_TOKEN", None)
        self.token = secrets.token_hex(24)
        token_file = os.path.join(tmp, "token")
        with open(token_file, "w") as f:
            f.write(self.token + "\n")
        config = write_config(tmp)
        self.proc = subprocess.Popen(
            [binary, "--db", self.db, "--config", config, "mcp", "--http", "127.0.0.1:0", "--token-file", token_file],
            stdout=subprocess.PIPE, env=self.env, text=True)
        self.base = self.proc.stdout.readline().strip()
        assert self.base.startswith("http://127.0.0.1:") and self.base.endswith("/mcp"), self.base

    def url(self, session):
        return f"{self.base}/{session}"

    def auth(self):
        return {"Authorization": f"Bearer {self.token}"}

    def cli(self, *args):
        out = subprocess.run([self.binary, "--db", self.db, "--json", *args], env=self.env, capture_output=True, text=True)
        return json.loads(out.stdout)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def refusals(server):
    url = server.url("refused")
    cases = [
        ("no token", {}, 401),
        ("a wrong token", {"Authorization": "Bearer " + "x" * 48}, 401),
        ("a foreign Origin", dict(server.auth(), Origin="http://evil.example"), 403),
        ("a foreign Host", dict(server.auth(), Host="evil.example"), 403),
    ]
    for what, headers, status in cases:
        response = httpx.post(url, json=INIT, headers=dict(ACCEPT, **headers))
        assert response.status_code == status, (what, response.status_code, response.text)
        assert server.token not in response.text, "the token never appears in an answer"
        assert response.json()["id"] is None, response.text
    sessions = server.cli("session", "list")
    assert "refused" not in json.dumps(sessions), ("a refused request changes nothing", sessions)
    # An allowed browser Origin (a page of this host) is accepted.
    response = httpx.post(url, json=INIT, headers=dict(ACCEPT, Origin=server.base.rsplit("/", 1)[0], **server.auth()))
    assert response.status_code == 200, response.text
    return len(cases) + 2


def batches(server):
    """JSON-RPC batches: answered as one array under 2025-03-26, refused under later versions."""
    url, headers = server.url("batch"), dict(ACCEPT, **server.auth())
    init = dict(INIT, params=dict(INIT["params"], protocolVersion="2025-03-26"))
    response = httpx.post(url, json=init, headers=headers)
    assert response.status_code == 200 and "2025-03-26" in response.text, response.text
    headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
    response = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert response.status_code == 202, response.text
    batch = [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]
    response = httpx.post(url, json=batch, headers=headers)
    answers = response.json()
    assert isinstance(answers, list) and sorted(a["id"] for a in answers) == [2, 3], answers
    assert any(t["name"] == "session.scratchpad" for a in answers if a["id"] == 3 for t in a["result"]["tools"]), answers
    response = httpx.post(url, json=batch, headers=dict(headers, **{"MCP-Protocol-Version": "2025-06-18"}))
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["id"] is None and error["error"]["code"] == -32600 and "2025-03-26" in error["error"]["message"], error
    return 2


async def isolated_sessions_prompt_mime_subscription_and_logs(server):
    checks = 0
    updated = asyncio.Event()
    logs = []

    async def on_message(message):
        if isinstance(message, types.ServerNotification) and isinstance(message.root, types.ResourceUpdatedNotification):
            if str(message.root.params.uri) == "scratchpad://session/alpha":
                updated.set()

    async def on_log(params):
        logs.append(params)

    async with streamablehttp_client(server.url("alpha"), headers=server.auth()) as (ra, wa, _), \
            streamablehttp_client(server.url("beta"), headers=server.auth()) as (rb, wb, _):
        async with ClientSession(ra, wa, message_handler=on_message, logging_callback=on_log) as alpha, \
                ClientSession(rb, wb) as beta:
            await alpha.initialize()
            await beta.initialize()
            await asyncio.gather(
                alpha.call_tool("session.scratchpad", {"action": "set_plan", "content": "1. alpha plan"}),
                beta.call_tool("session.scratchpad", {"action": "set_plan", "content": "1. beta plan"}),
            )
            a = (await alpha.read_resource("scratchpad://session/alpha")).contents[0]
            b = (await beta.read_resource("scratchpad://session/beta")).contents[0]
            assert "alpha plan" in a.text and "beta plan" not in a.text, a.text
            assert "beta plan" in b.text and "alpha plan" not in b.text, b.text
            foreign = None
            try:
                await beta.read_resource("scratchpad://session/alpha")
            except Exception as e:  # the SDK raises McpError for an error response
                foreign = e
            assert foreign is not None, "a client reads only its own session"
            checks += 3

            listed = (await alpha.list_resources()).resources
            assert [str(r.uri) for r in listed] == ["scratchpad://session/alpha"], listed
            assert listed[0].mimeType == a.mimeType == "text/markdown", (listed[0].mimeType, a.mimeType)
            prompts = (await alpha.list_prompts()).prompts
            assert [p.name for p in prompts] == ["session-guidance"], prompts
            guidance = await alpha.get_prompt("session-guidance")
            assert "session.scratchpad" in guidance.messages[0].content.text, guidance
            checks += 2

            await alpha.subscribe_resource("scratchpad://session/alpha")
            other = subprocess.run(
                [server.binary, "--db", server.db, "call", "alpha", "session.scratchpad",
                 json.dumps({"action": "append_notes", "content": "written by another process"})],
                env=server.env, capture_output=True, text=True)
            assert other.returncode == 0, other.stderr
            await asyncio.wait_for(updated.wait(), 30)
            a = (await alpha.read_resource("scratchpad://session/alpha")).contents[0]
            assert "written by another process" in a.text, a.text
            checks += 1

            # alpha cannot sample: a checkpoint due after its call fails; the tool's result
            # stands, the turn's hooks are kept, and the client hears of it in a log message.
            await alpha.set_logging_level("warning")
            meta = {"scratchpad/turn": {"turn_id": "a1", "tokens_used": 120000, "context_window": 200000}}
            result = await alpha.call_tool("session.scratchpad", {"action": "set_notes", "content": "n"}, meta=meta)
            assert not result.isError, result
            for _ in range(100):
                if logs:
                    break
                await asyncio.sleep(0.1)
            assert any("sampling" in json.dumps(log.data) for log in logs), logs
            shown = server.cli("show", "alpha")
            assert shown["latest_checkpoint"] is None, shown
            assert any(e["plugin"] == "context-guard" for e in shown["state"]), "the hooks' writes are kept"
            checks += 2
    return checks


async def sampling(server):
    requests = []

    async def scripted_model(context, params):
        requests.append(params)
        text = "```json\n" + json.dumps(SUMMARY) + "\n```"
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text), model="scripted")

    async def declining_model(context, params):
        return types.ErrorData(code=-1, message="the user declined")

    checks = 0
    async with streamablehttp_client(server.url("gamma"), headers=server.auth()) as (r, w, _):
        async with ClientSession(r, w, sampling_callback=scripted_model) as gamma:
            await gamma.initialize()
            turn = {"turn_id": "g1", "tokens_used": 20000, "context_window": 200000}
            await gamma.call_tool("session.scratchpad", {"action": "set_plan", "content": "1. sample"}, meta={"scratchpad/turn": turn})
            assert requests == [], "below the first threshold nothing is asked"
            turn = {"turn_id": "g2", "tokens_used": 60000, "context_window": 200000}
            await gamma.call_tool("session.scratchpad", {"action": "set_notes", "content": "n"}, meta={"scratchpad/turn": turn})
            assert len(requests) == 1, requests
            assert "keyDecisions" in (requests[0].systemPrompt or ""), requests[0]
            checks += 2
    checkpoint = server.cli("show", "gamma")["latest_checkpoint"]
    assert checkpoint is not None, "the checkpoint is stored"
    assert checkpoint["checkpoint"] == SUMMARY, checkpoint
    assert checkpoint["trigger"] == {"kind": "token-percent", "value": 25}, checkpoint
    assert checkpoint["tokensAtCheckpoint"] == 60000 and checkpoint["sessionId"] == "gamma", checkpoint
    assert checkpoint["parentId"] is None and checkpoint["plugin"] == "context-guard", checkpoint
    checks += 1

    async with streamablehttp_client(server.url("delta"), headers=server.auth()) as (r, w, _):
        async with ClientSession(r, w, sampling_callback=declining_model) as delta:
            await delta.initialize()
            turn = {"turn_id": "d1", "tokens_used": 60000, "context_window": 200000}
            result = await delta.call_tool("session.scratchpad", {"action": "set_notes", "content": "kept"}, meta={"scratchpad/turn": turn})
            assert not result.isError, result
    shown = server.cli("show", "delta")
    assert shown["latest_checkpoint"] is None, shown
    assert any(e["plugin"] == "context-guard" for e in shown["state"]), "the turn's hooks are kept"
    assert any(e["key"] == "notes" and e["text"] == "kept" for e in shown["state"]), shown["state"]
    checks += 1
    return checks


async def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(binary, tmp)
        try:
            checks = refusals(server)
            checks += batches(server)
            checks += await isolated_sessions_prompt_mime_subscription_and_logs(server)
            checks += await sampling(server)
        finally:
            server.stop()
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
