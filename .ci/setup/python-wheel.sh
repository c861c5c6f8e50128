#!/usr/bin/env bash
# The pinned maturin (bindings/python/requirements-build.txt) the Python wheel's test
# (tests/tests/python_wheel.rs) builds the wheel with, installed where that test looks for it
# (target/python-wheel/maturin); the test installs it too when missing. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! PYTHONPATH=target/python-wheel/maturin python3 -c "from importlib.metadata import version as v; assert v('maturin') == '1.16.0'" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target target/python-wheel/maturin \
    -r bindings/python/requirements-build.txt
fi
target/python-wheel/maturin/bin/maturin --version
