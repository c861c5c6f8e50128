"""Turns criterion's estimates (target/criterion) into the README's markdown tables.

Usage: python3 host/bench/report.py [TARGET_DIR]  (after `cargo bench -p scratchpad-bench`)
Prints p50 (criterion's median) per row: the component, native and Extism side by side with
their ratios (all three measured in one process run), then plugin load and the observations.
"""

import json
import os
import platform
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "target")
CRITERION = os.path.join(ROOT, "criterion")


def median_ns(group, name):
    path = os.path.join(CRITERION, group, name, "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"]


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


print(f"Machine: {os.cpu_count()} cores, {cpu()}")
print()
print("| benchmark (median) | component | native | Extism | component / native | Extism / native | component / Extism |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for group, label in [
    ("before_query", "`before_query` (all three spaces filled)"),
    ("append_notes", "`append_notes` with its commit"),
]:
    c, n, e = (median_ns(group, name) for name in ["component", "native", "extism"])
    print(f"| {label} | {fmt(c)} | {fmt(n)} | {fmt(e)} | {c / n:.2f}× | {e / n:.2f}× | {c / e:.2f}× |")

print()
print("| benchmark | measured (median) | baseline (median) | ratio |")
print("| --- | --- | --- | --- |")
x, y = median_ns("plugin_load", "cold_compile"), median_ns("plugin_load", "cached")
print(f"| `plugin_load` (open a host) | cold compile {fmt(x)} | cached {fmt(y)} | cold / cached = {x / y:.2f}× |")
for name in ["offload_1mb", "range_read_2kb_of_100mb"]:
    try:
        ns = median_ns("observations", name)
    except OSError:
        continue
    extra = f" ({1e9 / ns:.0f} MB/s)" if name == "offload_1mb" else ""  # 1 MB / seconds
    print(f"| `observations/{name}` | {fmt(ns)}{extra} | | |")
