#!/usr/bin/env bash
# The real openclaw (pinned in tests/openclaw/package-lock.json) for the OpenClaw end-to-end
# test (tests/tests/openclaw_e2e.rs), which installs it too when missing. openclaw needs
# Node >= 24.16 (.ci/node24.sh). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

source .ci/node24.sh
npm_ci_once tests/openclaw
