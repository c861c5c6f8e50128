#!/usr/bin/env python3
"""Many processes hammering one session: PROCESSES real host processes each append COUNT notes to
the same session at once (the durability tests' child, `crash_child DB SESSION append TAG COUNT`),
timed from the first start to the last exit. Prints appends per second, the commits that lost a
race (the host's own count, `scratchpad_storage_commits_total{outcome="conflict"}`) and the
processes that failed (an append that gave up). For docs/benchmarks.md ("Contention on one
session"), run against the binary of the revision to compare:

    cargo build -p scratchpad-tests --bin crash_child
    python3 bench/contention.py --processes 8 --count 60 --runs 3
    python3 bench/contention.py --db postgres://USER:PASSWORD@127.0.0.1:PORT/DB   # a fresh database

Each run on SQLite uses a fresh file in a temp dir; on PostgreSQL, a fresh session id.
"""

import argparse
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(child, db, session, processes, count):
    started = time.monotonic()
    children = [
        subprocess.Popen([child, db, session, "append", f"p{p}", str(count)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for p in range(processes)
    ]
    outputs = [c.communicate() for c in children]
    seconds = time.monotonic() - started
    lost, failed, errors = 0, 0, []
    for c, (out, err) in zip(children, outputs):
        if c.returncode != 0:
            failed += 1
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {c.returncode}")
        for line in out.splitlines():
            if line.startswith("lost "):
                lost += int(line.split()[1])
    return seconds, lost, failed, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", default=os.path.join(ROOT, "target/debug/crash_child"))
    parser.add_argument("--db", help="a PostgreSQL URL (default: a fresh SQLite file per run)")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    appends = args.processes * args.count
    print(f"{args.processes} processes x {args.count} appends to one session, {args.child}")
    print("run | seconds | appends/s | commits lost | processes failed")
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="scratchpad-contention-") as work:
            db = args.db or os.path.join(work, "contention.db")
            # A first child creates the session, so the timed ones race only on appends.
            subprocess.run([args.child, db, f"s{run}", "append", "setup", "1"], check=True, capture_output=True)
            seconds, lost, failed, errors = run_once(args.child, db, f"s{run}", args.processes, args.count)
        print(f"{run + 1} | {seconds:.2f} | {appends / seconds:.0f} | {lost} | {failed}")
        for error in errors[:3]:
            print(f"    {error}")


if __name__ == "__main__":
    main()
