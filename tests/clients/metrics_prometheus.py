"""`scratchpad mcp --http`'s /metrics scraped by a real Prometheus server.

Usage: python3 metrics_prometheus.py PATH/TO/scratchpad PATH/TO/probe.wasm PATH/TO/prometheus
Starts the server on 127.0.0.1 with a bearer token and two plugins: the scratchpad, with a
small notes budget, and the test probe, with a 300 ms deadline and a 4 KiB storage quota.
Through the official MCP Python SDK: one `set_plan`, one call of the probe's looping tool (its
timeout), one probe write past its quota (a quota refusal) and one `append_notes` past the
notes budget (a `rejected` tool error). Then Prometheus (its own config and storage in a temp
dir, on a free port of 127.0.0.1) scrapes /metrics with the token, and its query API must show
exactly one timeout for the probe's loop, one quota refusal for the probe, one rejected
`append_notes` for the scratchpad, the calls' latency histograms, and no session id in any
label. Without the token, /metrics is refused. Kills both servers by PID.
"""

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import httpx
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.client.streamable_http import streamablehttp_client
from support import Checks, env_for, write_config

SESSION = "metrics-session-7f3a"
check = Checks()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def drive(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [tool.name for tool in (await session.list_tools()).tools]
            check("the probe's tools are offered", "probe.loop" in names and "probe.write" in names, names)
            plan = await session.call_tool("session.scratchpad", {"action": "set_plan", "content": "1. scrape"})
            check("set_plan succeeds", not plan.isError, plan)
            try:
                spun = await session.call_tool("probe.loop", {})
                check("the looping tool ends in an error", False, spun)
            except McpError as error:
                check("the looping tool ends in an error that says it timed out", "timed out" in str(error), error)
            big = await session.call_tool("probe.write", {"key": "big", "value": "x" * 8000})
            check("a write past the quota is refused", big.isError or "quota" in json.dumps(big.model_dump()), big)
            over = await session.call_tool("session.scratchpad", {"action": "append_notes", "content": "n" * 500})
            check("an append past the notes budget is rejected", over.isError and "rejected" in json.dumps(over.model_dump()), over)


def query(prometheus, promql):
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as response:
        answer = json.load(response)
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def samples(prometheus, promql, deadline):
    """The query's samples once Prometheus has scraped them (polled until `deadline`)."""
    while True:
        result = query(prometheus, promql)
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


def main():
    binary, probe, prometheus_bin = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        token = secrets.token_hex(24)
        token_file = os.path.join(tmp, "token")
        with open(token_file, "w") as f:
            f.write(token + "\n")
        config = write_config(tmp, f"""
[[plugin]]
name = "scratchpad"
[plugin.config]
notesMaxChars = 100
[[plugin]]
name = "probe"
path = {json.dumps(probe)}
allow_unsigned = true
grants = ["inject", "rewrite-tool-calls", "replace-tool-results", "read-tool-traffic", "storage", "blobs", "config"]
[plugin.limits]
call_timeout_ms = 300
storage_quota_bytes = 4096
""")
        env = env_for(tmp)
        env.pop("SCRATCHPAD_MCP_TOKEN", None)
        server = subprocess.Popen(
            [binary, "--db", os.path.join(tmp, "m.db"), "--config", config, "mcp", "--http", "127.0.0.1:0",
             "--token-file", token_file],
            stdout=subprocess.PIPE, env=env, text=True)
        prometheus = None
        try:
            base = server.stdout.readline().strip()
            check("the server prints its URL", base.startswith("http://127.0.0.1:") and base.endswith("/mcp"), base)
            target = base.removeprefix("http://").removesuffix("/mcp")
            metrics_url = f"http://{target}/metrics"

            refused = httpx.get(metrics_url)
            check("/metrics without the token is refused", refused.status_code == 401, refused.status_code)
            page = httpx.get(metrics_url, headers={"Authorization": f"Bearer {token}"})
            check("/metrics with the token answers in the text format",
                  page.status_code == 200 and page.headers["content-type"].startswith("text/plain; version=0.0.4")
                  and "# TYPE scratchpad_plugin_failures_total counter" in page.text, page.text[:400])

            asyncio.run(drive(f"{base}/{SESSION}", token))

            port = free_port()
            with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
                f.write(f"""
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: scratchpad
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["{target}"]
""")
            prometheus = subprocess.Popen(
                [prometheus_bin, f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/tsdb",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
            api = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    up = query(api, 'up{job="scratchpad"}')
                    if up:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    log = open(os.path.join(tmp, "prometheus.log")).read()
                    check("Prometheus scrapes the server", False, log[-2000:])
                time.sleep(0.5)
            check("Prometheus scraped the target and found it up", up[0]["value"][1] == "1", up)

            timeouts = samples(api, 'scratchpad_plugin_failures_total{kind="timeout"}', deadline)
            check("exactly one timeout, the probe's loop",
                  [(s["metric"]["plugin"], s["metric"]["hook"], s["value"][1]) for s in timeouts]
                  == [("probe", "tool probe.loop", "1")], timeouts)
            quota = samples(api, "scratchpad_storage_quota_refusals_total", deadline)
            check("exactly one quota refusal, the probe's",
                  [(s["metric"]["plugin"], s["value"][1]) for s in quota] == [("probe", "1")], quota)
            rejected = samples(api, 'scratchpad_tool_errors_total{kind="rejected"}', deadline)
            check("exactly one rejected tool call, the scratchpad's append_notes",
                  [(s["metric"]["plugin"], s["metric"]["tool"], s["value"][1]) for s in rejected]
                  == [("scratchpad", "session.scratchpad", "1")], rejected)
            calls = samples(api, 'scratchpad_plugin_call_duration_seconds_count{hook="tool session.scratchpad"}', deadline)
            check("the scratchpad's tool calls are in the latency histogram",
                  [s["value"][1] for s in calls] == ["2"], calls)
            every = query(api, '{__name__=~"scratchpad_.+"}')
            check("the metrics are there", len(every) > 5, every)
            labels = json.dumps([s["metric"] for s in every])
            check("no session id in any label", SESSION not in labels and "1. scrape" not in labels, labels)
        finally:
            for proc in (prometheus, server):
                if proc is not None:
                    proc.kill()
                    proc.wait()
    check.done()


main()
