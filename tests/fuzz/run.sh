#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each): ./tests/fuzz/run.sh [SECONDS]
# Needs the nightly toolchain (on the machine) and cargo-fuzz (`cargo install cargo-fuzz`).
# A crash leaves its input under tests/fuzz/artifacts/<target>/: turn it into a regression
# test next to the code it broke, then fix the code.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in scratchpad_tool_args observations_tool_args openclaw_jsonl; do
  echo "== $target (${seconds}s)"
  cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=4096
done
