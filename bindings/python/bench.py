"""What the Python binding costs over the Rust host: a measurement script, not a test.

Usage: python bench.py [CALLS]   (in a virtualenv with the release wheel installed:
    maturin build --release --manifest-path bindings/python/Cargo.toml --out dist
    pip install dist/scratchpad_host-*.whl)

The same host, the same session, in one run: `before_query` and a `session.scratchpad` tool
call through the Python API (`Host`), then the same calls looped in Rust inside the extension
(`_time_in_rust`, no Python between calls). Prints each side's p50 and the ratio.
"""

import json
import statistics
import sys
import tempfile
import time

from scratchpad import Host, Turn

CALL = {"action": "set_plan", "content": "1. Reproduce\n2. Fix token expiry\n3. Add a regression test"}


def p50_us(samples_ns):
    return statistics.median(samples_ns) / 1000


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        host = Host.open(f"{tmp}/bench.db")
        host.create_session("bench")
        turn = Turn("bench", "t")
        host.call_tool(turn, "session.scratchpad", CALL)
        native, turn_json = host._native, turn._json()
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {calls} calls each")
        for op, python_call, argument in [
            ("before_query", lambda: host.before_query(turn, "continue"), "continue"),
            ("call_tool", lambda: host.call_tool(turn, "session.scratchpad", CALL), json.dumps(CALL)),
        ]:
            for _ in range(200):
                python_call()
            samples = []
            for _ in range(calls):
                start = time.perf_counter_ns()
                python_call()
                samples.append(time.perf_counter_ns() - start)
            rust = native._time_in_rust(op, turn_json, argument, calls)
            py, rs = p50_us(samples), p50_us(rust)
            print(f"{op}: Python {py:.1f} us, Rust {rs:.1f} us (p50), ratio {py / rs:.2f}")


if __name__ == "__main__":
    main()
