#!/usr/bin/env bash
# The real opencode (its native package opencode-linux-x64, pinned in
# tests/opencode/package-lock.json) and the opencode plugin's own dependency (@opencode-ai/plugin,
# integrations/opencode/package-lock.json) for the opencode end-to-end tests
# (tests/tests/opencode_e2e.rs), which install them too when missing. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/node24.sh
npm_ci_once tests/opencode
npm_ci_once integrations/opencode
tests/opencode/node_modules/opencode-linux-x64/bin/opencode --version
