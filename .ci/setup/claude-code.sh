#!/usr/bin/env bash
# The real Claude Code (pinned in tests/claude-code/package-lock.json) and the Claude Agent SDK
# example's SDK (integrations/claude-code/examples/agent-sdk/package-lock.json) for the Claude
# Code end-to-end tests (tests/tests/claude_code_e2e.rs), which install them too when missing.
# Both carry their native binaries in optional dependencies (no download at install) and need
# Node >= 22. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/node24.sh
npm_ci_once tests/claude-code
npm_ci_once integrations/claude-code/examples/agent-sdk
tests/claude-code/node_modules/.bin/claude --version
