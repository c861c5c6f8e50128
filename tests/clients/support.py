"""What the Python clients of the test suite share (stdlib only): the environment a
`scratchpad` process runs in, the context-guard configuration that asks for checkpoints, a
scripted model's summary, and the sidecar's newline-delimited JSON-RPC 2.0 framing.

Each client is run as `python3 tests/clients/NAME.py PATH/TO/scratchpad`, so this file's
directory is on `sys.path` and `import support` finds it.
"""

import json
import os
import subprocess

# Both default plugins, context-guard asking for a checkpoint from the first turn on.
CHECKPOINT_CONFIG = """
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

# What the scripted model answers a summary request with (the context-pressure policy's fields).
SUMMARY = {
    "summary": "Checkpoints through the client's model.",
    "topics": ["JSON-RPC", "MCP"],
    "keyDecisions": ["the client's model writes the summary"],
    "openQuestions": ["none yet"],
}


class Checks:
    """Named checks that print `ok: NAME` and stop the script at the first failure, which
    ends with the `N passed, M failed` line the Rust side of a test reads."""

    def __init__(self):
        self.passed = 0

    def __call__(self, name, ok, detail=""):
        if not ok:
            print(f"FAILED: {name} {detail}")
            raise SystemExit(f"{self.passed} passed, 1 failed")
        self.passed += 1
        print(f"ok: {name}")

    def done(self):
        print(f"{self.passed} passed, 0 failed")


def env_for(tmp):
    """The environment of a `scratchpad` process: the test run's compiled-component cache (or
    one in `tmp`), nothing else changed."""
    cache = os.environ.get("SCRATCHPAD_TEST_CACHE_HOME") or os.path.join(tmp, "cache")
    return dict(os.environ, XDG_CACHE_HOME=cache)


def write_config(tmp, text=CHECKPOINT_CONFIG):
    """Writes `text` to `tmp/config.toml`; returns its path."""
    path = os.path.join(tmp, "config.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


class Sidecar:
    """`scratchpad --db DB [ARGS…] serve [SERVE_ARGS…]`, spoken to over stdin and stdout."""

    def __init__(self, binary, db, args=(), serve_args=()):
        self.proc = subprocess.Popen(
            [binary, "--db", db, *args, "serve", *serve_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env_for(os.path.dirname(db)),
            text=True,
            bufsize=1,
        )
        self.next_id = 0

    def send_raw(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)

    def send(self, method, params=None):
        """Sends a request; returns its id."""
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.send_raw(json.dumps(request))
        return self.next_id

    def call(self, method, params=None, answer=None):
        """Sends a request and returns its response. Requests the server sends meanwhile
        (`summarize`) are answered with `answer(params)` -> ("result" | "error", value) and
        collected in `self.asked`."""
        sent = self.send(method, params)
        self.asked = []
        while True:
            message = self.read()
            if "method" in message and answer is not None:
                self.asked.append(message)
                kind, value = answer(message["params"])
                self.send_raw(json.dumps({"jsonrpc": "2.0", "id": message["id"], kind: value}))
                continue
            assert message["id"] == sent, message
            return message

    def ok(self, method, params=None):
        response = self.call(method, params)
        assert "result" in response, f"{method} failed: {response}"
        return response["result"]

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
