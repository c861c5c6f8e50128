"""Turns the benchmark's figures (target/criterion) into the README's markdown tables.

Usage: python3 host/bench/report.py [TARGET_DIR]  (after `cargo bench -p scratchpad-bench`)

Latency rows give p50 and p99 of single calls (`percentiles.json`, written by the benchmark,
which times every call) beside each other in one process run: the component (scratchpad
only; with both default plugins; one reused instance), native and Extism, with ratios to
native and to Extism. Then the append with its commit, instantiation, plugin load, the
observations store (criterion's medians; throughput in MB/s; the guest's memory growth) and
concurrent throughput.
"""

import json
import os
import platform
import sys
import time

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "target")
CRITERION = os.path.join(ROOT, "criterion")


def load(group, name, file):
    with open(os.path.join(CRITERION, group, name, file)) as f:
        return json.load(f)


def median_ns(group, name):
    return load(group, name, os.path.join("new", "estimates.json"))["median"]["point_estimate"]


def fmt(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


print(f"Machine: {os.cpu_count()} cores, {cpu()}; load average {os.getloadavg()[0]:.2f}; "
      f"{time.strftime('%Y-%m-%d', time.gmtime())}")
print()

# before_query: per-call percentiles, everything relative to native and to Extism.
rows = [
    ("component", "component (scratchpad only, fresh instance per call: the design)"),
    ("component_defaults", "component, both default plugins (scratchpad + observations)"),
    ("component_reused", "component, one instance reused (what fresh instances cost)"),
    ("native", "native (the same code compiled in)"),
    ("extism", "Extism (the same code, one reused `Plugin`)"),
]
p = {name: load("before_query", name, "percentiles.json") for name, _ in rows}
native, extism = p["native"]["p50_ns"], p["extism"]["p50_ns"]
print("`before_query` with all three spaces filled, per call:")
print()
print("| contender | p50 | p99 | p50 / native | p50 / Extism |")
print("| --- | --- | --- | --- | --- |")
for name, label in rows:
    r = p[name]
    print(f"| {label} | {fmt(r['p50_ns'])} | {fmt(r['p99_ns'])} | {r['p50_ns'] / native:.2f}× | {r['p50_ns'] / extism:.2f}× |")

print()
print("| benchmark (criterion median) | component | native | Extism | component / native | component / Extism |")
print("| --- | --- | --- | --- | --- | --- |")
c, n, e = (median_ns("append_notes", name) for name in ["component", "native", "extism"])
print(f"| `append_notes` with its commit | {fmt(c)} | {fmt(n)} | {fmt(e)} | {c / n:.2f}× | {c / e:.2f}× |")

print()
print("| benchmark | measured (median) | baseline (median) | ratio |")
print("| --- | --- | --- | --- |")
x, y = median_ns("plugin_load", "cold_compile"), median_ns("plugin_load", "cached")
print(f"| `plugin_load` (open a host) | cold compile {fmt(x)} | cached {fmt(y)} | cold / cached = {x / y:.1f}× |")
x, y = median_ns("instantiate", "on_demand"), median_ns("instantiate", "pooling")
print(f"| `instantiate` (no call) | on demand {fmt(x)} | pooling {fmt(y)} | on demand / pooling = {x / y:.2f}× |")
for name, size in [("offload_1mb", 1e6), ("offload_100mb", 1e8), ("grep_100mb", 1e8), ("range_read_2kb_of_100mb", None)]:
    try:
        ns = median_ns("observations", name)
    except OSError:
        continue
    extra = f" ({size / (ns / 1e9) / 1e6:.0f} MB/s)" if size else ""
    note = ""
    if name == "offload_100mb":
        try:
            m = load("observations", name, "memory.json")
            note = f"guest memory grew {m['growth_bytes'] / 2**20:.2f} MiB (from {m['initial_bytes'] / 2**20:.2f} MiB)"
        except OSError:
            pass
    print(f"| `observations/{name}` | {fmt(ns)}{extra} | | {note} |")
try:
    t = {name: load("throughput", name, "throughput.json") for name in ["component", "native"]}
    c, n = t["component"], t["native"]
    label = f"`throughput` ({c['tasks']} tasks, {c['sessions']:,} sessions, {c['seconds']:.0f} s, before_query)"
    ratio = c["calls_per_second"] / n["calls_per_second"]
    print(f"| {label} | component {c['calls_per_second']:,.0f} calls/s | native {n['calls_per_second']:,.0f} calls/s "
          f"| component / native = {ratio:.2f}× |")
except OSError:
    pass
