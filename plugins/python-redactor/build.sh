#!/usr/bin/env bash
# Builds the redactor into a WebAssembly component of the `plugin` world in ../../wit.
#
#   plugins/python-redactor/build.sh [OUT.wasm]     (default: target/third-party/python_redactor.wasm)
#
# componentize-py (pinned in requirements.txt) is installed under the workspace's target/ when
# the interpreter does not already have that version, so nothing touches the system Python.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/target/third-party/python_redactor.wasm}"
deps="$root/target/third-party/componentize-py"
pin="$(grep -o 'componentize-py==[0-9.]*' "$here/requirements.txt")"

command -v python3 >/dev/null || { echo "python3 is required to build $here (componentize-py runs on it)" >&2; exit 1; }
have() { PYTHONPATH="$deps" python3 -c "from importlib.metadata import version; assert version('componentize-py') == '${pin#*==}'" 2>/dev/null; }
if ! have; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$deps" -r "$here/requirements.txt" \
    || { echo "installing $pin with pip failed (is PyPI reachable?)" >&2; exit 1; }
fi
mkdir -p "$(dirname "$out")"
# `-d wit -w plugin`: the world the host loads; `-p $here`: where app.py lives.
PYTHONPATH="$deps" python3 -c 'import sys; from componentize_py import script; sys.argv[0] = "componentize-py"; sys.exit(script())' \
  -d "$root/wit" -w plugin componentize -p "$here" app -o "$out"
