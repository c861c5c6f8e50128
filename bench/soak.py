#!/usr/bin/env python3
"""A long run with many clients: `scratchpad mcp --http` on loopback, CLIENTS concurrent MCP
clients (each its own scratchpad session and a kept-alive connection) making tool calls and
reading the session's scratchpad resource for MINUTES minutes — bounded in time and in count
(at most MAX_CALLS per client). Every SAMPLE seconds it reads the server's resident memory and
open file descriptors (/proc); per minute, the calls made, their p50 and p99 latency, and the
last sample of each. The figures go in docs/benchmarks.md ("A long run with many clients");
what matters is that minute 10 looks like minute 1.

    cargo build --release -p scratchpad-cli
    python3 bench/soak.py                      # 50 clients, 10 minutes, target/release/scratchpad
    python3 bench/soak.py --clients 5 --minutes 1 --json out.json

Python's standard library only. A call that fails (an HTTP status other than 200/202, a
JSON-RPC error, a tool result with isError) is counted and its first message printed; the run
exits 1 when any call failed.
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Client:
    """One MCP client over Streamable HTTP, on one kept-alive connection."""

    def __init__(self, host, port, session):
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.path = f"/mcp/{session}"
        self.session = session
        self.mcp_session = None
        self.next_id = 0

    def post(self, message):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.mcp_session:
            headers["Mcp-Session-Id"] = self.mcp_session
        self.conn.request("POST", self.path, body=json.dumps(message), headers=headers)
        response = self.conn.getresponse()
        body = response.read().decode()
        if response.status not in (200, 202):
            raise RuntimeError(f"HTTP {response.status}: {body[:300]}")
        self.mcp_session = response.getheader("Mcp-Session-Id") or self.mcp_session
        if "id" not in message:
            return None
        # A JSON body, or server-sent events whose `data:` lines hold JSON-RPC messages.
        texts = [body] if body.lstrip().startswith("{") else [
            line[5:].strip() for line in body.splitlines() if line.startswith("data:") and line[5:].strip()
        ]
        for text in texts:
            answer = json.loads(text)
            if answer.get("id") == message["id"]:
                if "error" in answer:
                    raise RuntimeError(f"JSON-RPC error: {answer['error']}")
                result = answer.get("result", {})
                if result.get("isError"):
                    raise RuntimeError(f"tool error: {result}")
                return result
        raise RuntimeError(f"no answer to request {message['id']}: {body[:300]}")

    def request(self, method, params):
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def start(self):
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "soak", "version": "1"}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})


def calls(client, n):
    """The n-th call of a client's cycle: the scratchpad's tool three ways, then a read of what a
    client re-injects."""
    tool = "session.scratchpad"
    kind = n % 4
    if kind == 0:
        return "tools/call", {"name": tool, "arguments": {"action": "set_plan", "content": f"1. step {n}\n2. next"}}
    if kind == 1:
        return "tools/call", {"name": tool, "arguments": {"action": "set_notes", "content": f"finding {n}: " + "x" * 200}}
    if kind == 2:
        return "tools/call", {"name": tool, "arguments": {"action": "refs.add", "ref": f"src/file_{n % 80}.rs:{n}"}}
    return "resources/read", {"uri": f"scratchpad://session/{client.session}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/scratchpad"))
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--max-calls", type=int, default=200_000, help="per client")
    parser.add_argument("--sample", type=float, default=10, help="seconds between samples")
    parser.add_argument("--json", help="also write the per-minute figures here")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="scratchpad-soak-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    env.pop("SCRATCHPAD_MCP_TOKEN", None)
    server = subprocess.Popen(
        [args.binary, "--db", os.path.join(work, "soak.db"), "mcp", "--http", "127.0.0.1:0", "--no-project"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    url = server.stdout.readline().strip()
    host, port = url.removeprefix("http://").removesuffix("/mcp").split(":")
    port = int(port)

    started = time.monotonic()
    deadline = started + args.minutes * 60
    lock = threading.Lock()
    latencies = {}  # minute -> [seconds]
    failures = []

    def run(index):
        client = Client(host, port, f"soak-{index}")
        try:
            client.start()
        except Exception as error:  # noqa: BLE001 - counted and reported
            with lock:
                failures.append(f"client {index} start: {error}")
            return
        for n in range(args.max_calls):
            now = time.monotonic()
            if now >= deadline:
                return
            method, params = calls(client, n)
            try:
                client.request(method, params)
            except Exception as error:  # noqa: BLE001 - counted and reported
                with lock:
                    failures.append(f"client {index} call {n} ({method}): {error}")
                client = Client(host, port, f"soak-{index}")
                client.start()
                continue
            done = time.monotonic()
            with lock:
                latencies.setdefault(int((now - started) // 60), []).append(done - now)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    samples = {}  # minute -> (rss, fds), the last sample in that minute
    while any(thread.is_alive() for thread in threads):
        minute = int((time.monotonic() - started) // 60)
        samples[minute] = (rss_mib(server.pid), open_fds(server.pid))
        time.sleep(args.sample)
    samples[int((time.monotonic() - started) // 60)] = (rss_mib(server.pid), open_fds(server.pid))
    server.terminate()
    server.wait(timeout=30)

    rows = []
    print(f"{args.clients} clients, {args.minutes} min, {args.binary}")
    print("minute | calls | p50 ms | p99 ms | RSS MiB | open fds")
    for minute in sorted(latencies):
        values = sorted(latencies[minute])
        p50 = statistics.median(values) * 1000
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))] * 1000
        rss, fds = samples.get(minute, (float("nan"), -1))
        rows.append({"minute": minute + 1, "calls": len(values), "p50_ms": round(p50, 2), "p99_ms": round(p99, 2),
                     "rss_mib": round(rss, 1), "fds": fds})
        print(f"{minute + 1} | {len(values)} | {p50:.2f} | {p99:.2f} | {rss:.1f} | {fds}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"clients": args.clients, "minutes": args.minutes, "failures": len(failures), "rows": rows}, out,
                      indent=2)
    print(f"failures: {len(failures)}")
    for failure in failures[:5]:
        print(f"  {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
