#!/usr/bin/env bash
# The real Codex CLI (pinned in tests/codex/package-lock.json) for the Codex end-to-end tests
# (tests/tests/codex_e2e.rs), which install it too when missing. Its native binary comes in an
# optional dependency (no download at install); its launcher runs on Node 24. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/node24.sh
npm_ci_once tests/codex
tests/codex/node_modules/.bin/codex --version
