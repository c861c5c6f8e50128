#!/usr/bin/env bash
# The Prometheus server of the metrics test (cli/tests/metrics_prometheus.rs):
# Debian's `prometheus` 2.42, run by the test on a free port of 127.0.0.1 with its own config
# file and storage, scraping `scratchpad mcp --http`'s /metrics. Installing it does not start a
# service on this kind of machine (no systemd); if a packaged instance runs anyway, it is
# stopped, since the test never uses it. No recommended packages (node exporter and friends).
# Idempotent: nothing is installed when `prometheus` is there.
set -euo pipefail

if ! command -v prometheus >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends prometheus
fi
if command -v service >/dev/null && service prometheus status >/dev/null 2>&1; then
  service prometheus stop || true
fi

prometheus --version
