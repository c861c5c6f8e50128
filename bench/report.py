"""Turns the benchmark's figures (target/criterion) into the README's markdown tables.

Usage: python3 bench/report.py [TARGET_DIR]  (after `cargo bench -p scratchpad-bench`)

Latency rows give p50 and p99 of single calls (`percentiles.json`, written by the benchmark,
which times every call) beside each other in one process run: the component (scratchpad
only; with both default plugins; one reused instance), native and Extism, with ratios to
native and to Extism. Then the append with its commit, instantiation, plugin load, the
observations store (criterion's medians; throughput in MB/s; the guest's memory growth) and
concurrent throughput. Last, fleet mode: the same rows on PostgreSQL beside SQLite,
throughput of 1, 2 and 4 host processes on one PostgreSQL database, and the round trips and
transactions each operation costs there.
"""

import json
import os
import platform
import sys
import time

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target")
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


# Fleet mode: PostgreSQL beside SQLite, from the same run.
def p50(group, name):
    return load(group, name, "percentiles.json")


def latency(r):
    return f"{fmt(r['p50_ns'])} (p99 {fmt(r['p99_ns'])})"


try:
    print()
    print("PostgreSQL (fleet mode), same run; latency rows p50 of single calls (p99), others criterion's medians:")
    print()
    print("| row | SQLite | PostgreSQL | PostgreSQL / SQLite |")
    print("| --- | --- | --- | --- |")
    for label, group, sqlite, postgres in [
        ("`before_query`, scratchpad only", "before_query", "component", "component_postgres"),
        ("`before_query`, both default plugins", "before_query", "component_defaults", "component_defaults_postgres"),
        ("one trip (`Host::session`: one statement)", "one_trip", "sqlite", "postgres"),
    ]:
        a, b = p50(group, sqlite), p50(group, postgres)
        print(f"| {label} | {latency(a)} | {latency(b)} | {b['p50_ns'] / a['p50_ns']:.2f}× |")
    a = median_ns("append_notes", "component")
    for label, name in [("`append_notes` with its commit", "component_postgres"),
                        ("`append_notes`, PostgreSQL with `synchronous_commit = off`",
                         "component_postgres_async_commit")]:
        b = median_ns("append_notes", name)
        print(f"| {label} | {fmt(a)} | {fmt(b)} | {b / a:.2f}× |")
    for name, size in [("offload_1mb", 1e6), ("offload_100mb", 1e8), ("range_read_2kb_of_100mb", None)]:
        a, b = median_ns("observations", name), median_ns("observations_postgres", name)
        if size:
            mbs = lambda ns: size / (ns / 1e9) / 1e6
            print(f"| `observations/{name}` | {fmt(a)} ({mbs(a):.0f} MB/s) | {fmt(b)} ({mbs(b):.0f} MB/s) "
                  f"| {b / a:.2f}× the time |")
        else:
            print(f"| `observations/{name}` | {fmt(a)} | {fmt(b)} | {b / a:.2f}× |")
    s1 = load("throughput", "processes_sqlite_1", "throughput.json")
    runs = [("SQLite, 1 process", s1)]
    for n in [1, 2, 4]:
        t = load("throughput", f"processes_postgres_{n}", "throughput.json")
        runs.append((f"PostgreSQL, {n} process{'es' if n > 1 else ''}", t))
        print(f"| throughput, {n} host process{'es' if n > 1 else ''} on PostgreSQL vs 1 on SQLite "
              f"({t['tasks']} tasks each, {t['sessions']:,} sessions, {t['seconds']:.0f} s, before_query) "
              f"| {s1['calls_per_second']:,.0f} calls/s | {t['calls_per_second']:,.0f} calls/s "
              f"| {t['calls_per_second'] / s1['calls_per_second']:.2f}× |")
    print()
    print("Throughput runs (separate host processes; CPU time per call measured from /proc over the window):")
    print()
    print("| run | calls/s | each process | host CPU per call | server CPU per call "
          "| machine: busy / idle / stolen cores |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, t in runs:
        each = ", ".join(f"{r:,.0f}" for r in t["per_process"])
        server = f"{t['server_cpu_us_per_call']:.0f} µs" if label.startswith("PostgreSQL") else "(in the host)"
        machine = (f"{t['machine_busy_cores']:.2f} / {t['machine_idle_cores']:.2f} / {t['machine_steal_cores']:.2f}"
                   if "machine_busy_cores" in t else "")
        print(f"| {label} | {t['calls_per_second']:,.0f} | {each} | {t['host_cpu_us_per_call']:.0f} µs | {server} "
              f"| {machine} |")
    print()
    print("Per operation on PostgreSQL: round trips (counted on the wire by a relay), committed transactions")
    print("(`pg_stat_database.xact_commit`), statements and the server's time in them")
    print("(`log_min_duration_statement = 0`: parse + bind + execute; the commit at Sync is not in it):")
    print()
    print("| operation | round trips | transactions | statements | server time in statements (bind / execute) "
          "| operations counted |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, label in [
        ("before_query", "`before_query` (both default plugins, within a turn)"),
        ("append_notes", "`append_notes` tool call with its commit"),
        ("before_query_new_turn", "`before_query`, first of a new turn"),
        ("range_read_2kb", "2 KB range read (`scratchpad_read`)"),
        ("offload_1mb", "offload 1 MB (`after_tool_result`)"),
        ("session_read", "`Host::session` (one statement: the check)"),
    ]:
        t = load("round_trips", name, "trips.json")
        v = load("round_trips", name, "server.json")
        extra = f"; {t['new_connections']} new connections" if t["new_connections"] else ""
        print(f"| {label} | {t['trips_per_operation']:.2f} | {t['transactions_per_operation']:.2f} "
              f"| {v['statements_per_operation']:.0f} | {fmt(v['server_us_per_operation'] * 1e3)} "
              f"({fmt(v['bind_us_per_operation'] * 1e3)} / {fmt(v['execute_us_per_operation'] * 1e3)}) "
              f"| {t['operations']}{extra} |")
except OSError as e:
    print(f"(no PostgreSQL figures: {e})")
