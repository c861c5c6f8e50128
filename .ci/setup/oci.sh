#!/usr/bin/env bash
# The OCI registry and push client of the tests of OCI plugin sources
# (tests/src/registry.rs): Debian's `docker-registry` (the CNCF distribution registry 2.8), run
# by each test on a free port of 127.0.0.1 with its own config file and storage, and `skopeo`,
# an independent client that pushes the artifacts. Installing `docker-registry` does not start
# a service on this kind of machine (no systemd); if a packaged instance runs anyway, it is
# stopped, since the tests never use it. `ssh-keygen` (openssh-client) signs in the tests.
# Idempotent: nothing is installed when all three are there.
set -euo pipefail

missing=()
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v skopeo >/dev/null || missing+=(skopeo)
command -v ssh-keygen >/dev/null || missing+=(openssh-client)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
if command -v service >/dev/null && service docker-registry status >/dev/null 2>&1; then
  service docker-registry stop || true
fi

docker-registry --version
skopeo --version
