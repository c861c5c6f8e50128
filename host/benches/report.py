"""Turns criterion's estimates (target/criterion) into the README's markdown table.

Usage: python3 host/benches/report.py [TARGET_DIR]  (after `cargo bench -p scratchpad-host --bench host`)
Prints p50 (criterion's median) per row and the component/native and cold/cached ratios.
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


rows = []
for group, a, b, label in [
    ("before_query", "component", "native", "component / native"),
    ("append_notes", "component", "native", "component / native"),
    ("plugin_load", "cold_compile", "cached", "cold / cached"),
]:
    x, y = median_ns(group, a), median_ns(group, b)
    rows.append(f"| `{group}` | {a} {fmt(x)} | {b} {fmt(y)} | {label} = {x / y:.2f}× |")

print(f"Machine: {os.cpu_count()} cores, {cpu()}")
print()
print("| benchmark | measured (median) | baseline (median) | ratio |")
print("| --- | --- | --- | --- |")
print("\n".join(rows))
for name in ["offload_1mb", "range_read_2kb_of_100mb"]:
    try:
        ns = median_ns("observations", name)
    except OSError:
        continue
    extra = f" ({1e9 / ns:.0f} MB/s)" if name == "offload_1mb" else ""  # 1 MB / seconds
    print(f"| `observations/{name}` | {fmt(ns)}{extra} | | |")
