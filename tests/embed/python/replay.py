"""Replays the shared test vectors (tests/embed/vectors/scratchpad.json) through the Python host
and compares every answer with the expected one, exactly.

    python3 replay.py --wasm scratchpad_guest.wasm --vectors scratchpad.json

Prints each divergence, then `N passed, M failed` (vectors) and a last line
`summary: {"host": "python", "vectors": N, "steps": S, "failed": M}`. Exits 1 when any vector
failed or when the file holds no vector.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scratchpad_host import LoadError, ScratchpadHost, ToolError, UnknownTool  # noqa: E402


def injections(pairs):
    return [{"placement": placement, "text": text} for placement, text in pairs]


def origin(value):
    if value["kind"] == "spawn":
        return ("spawn", value["parent"], value["copy"])
    if value["kind"] == "fork":
        return ("fork", value["parent"])
    return ("new",)


def run_step(host, step):
    """The step's answer in the vectors' JSON shape."""
    op, session = step["op"], step.get("session")
    turn = step.get("turn")
    if op == "create_session":
        return {"guidance": injections(host.create_session(session, origin(step.get("origin", {"kind": "new"}))))}
    if op == "tools":
        return {"tools": host.tools(session, turn)}
    if op == "call_tool":
        arguments = step["arguments_text"] if "arguments_text" in step else json.dumps(step["arguments"])
        try:
            return {"ok": host.call_tool(session, turn, step["name"], arguments)}
        except ToolError as error:
            return {"error": {"variant": error.variant, "message": error.message}}
        except UnknownTool:
            return {"host_error": "unknown-tool"}
    if op == "before_query":
        return {"injections": injections(host.before_query(session, turn, step["message"]))}
    if op == "after_response":
        return host.after_response(session, turn, step["text"])
    if op == "before_compaction":
        return {"warning": host.before_compaction(session, turn)}
    if op == "after_compaction":
        return host.after_compaction(session, turn)
    if op == "after_tool_result":
        content = step["observation"].encode()
        return {"replacement": host.after_tool_result(session, turn, step["call"], content)}
    if op == "state":
        return {"state": {key: value.decode() for key, value in sorted(host.state(session).items())}}
    raise ValueError(f"unknown op `{op}`")


def replay(wasm, vector):
    """The divergences of one vector: (step index, expected, actual) triples."""
    steps = vector["steps"]
    try:
        quota = vector.get("limits", {}).get("storage_quota_bytes")
        host = ScratchpadHost(wasm, vector["config"], **({"quota_bytes": quota} if quota else {}))
        loaded = {"manifest": host.manifest}
    except LoadError as error:
        host, loaded = None, {"load_error": str(error)}
    if steps and steps[0]["op"] == "load":
        if loaded != steps[0]["expect"]:
            return [(0, steps[0]["expect"], loaded)]
        steps = steps[1:]
    if host is None:
        return [(0, "the component to load", loaded)] if steps else []
    failures = []
    for index, step in enumerate(steps, start=len(vector["steps"]) - len(steps)):
        try:
            actual = run_step(host, step)
        except Exception as error:  # a trap or a host error: the vector stops here
            return failures + [(index, step.get("expect"), f"raised {type(error).__name__}: {error}")]
        if "expect" in step and actual != step["expect"]:
            failures.append((index, step["expect"], actual))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wasm", required=True, help="the scratchpad component (scratchpad_guest.wasm)")
    parser.add_argument("--vectors", required=True, help="the vectors file")
    args = parser.parse_args()
    vectors = json.loads(Path(args.vectors).read_text(encoding="utf-8"))["vectors"]
    failed = 0
    for vector in vectors:
        failures = replay(args.wasm, vector)
        failed += bool(failures)
        for index, expected, actual in failures:
            print(f"DIVERGENCE in \"{vector['name']}\", step {index}:", file=sys.stderr)
            print(f"  expected {json.dumps(expected, ensure_ascii=False)}", file=sys.stderr)
            print(f"  actual   {json.dumps(actual, ensure_ascii=False)}", file=sys.stderr)
    steps = sum(len(v["steps"]) for v in vectors)
    print(f"{len(vectors) - failed} passed, {failed} failed")
    print("summary: " + json.dumps({"host": "python", "vectors": len(vectors), "steps": steps, "failed": failed}))
    sys.exit(1 if failed or not vectors else 0)


if __name__ == "__main__":
    main()
