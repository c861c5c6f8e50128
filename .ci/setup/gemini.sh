#!/usr/bin/env bash
# The real Gemini CLI (pinned in tests/gemini/package-lock.json) for the Gemini CLI end-to-end
# tests (tests/tests/gemini_e2e.rs), which install it too when missing. One bundled package, no
# download at install; it runs on the pinned Node 24. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/node24.sh
npm_ci_once tests/gemini
tests/gemini/node_modules/.bin/gemini --version
