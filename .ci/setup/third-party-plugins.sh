#!/usr/bin/env bash
# The pinned build tools of the plugins written in other languages, installed once
# so the tests that build them (tests/src/third_party.rs) find them in place:
# componentize-py (plugins/python-redactor/requirements.txt) under target/, and ComponentizeJS
# (plugins/js-todo/package-lock.json) in plugins/js-todo/node_modules (gitignored).
# Idempotent: a tool already at its pinned version is left alone.
set -euo pipefail
cd "$(dirname "$0")/../.."

deps=target/third-party/componentize-py
pin="$(grep -o 'componentize-py==[0-9.]*' plugins/python-redactor/requirements.txt)"
if PYTHONPATH="$deps" python3 -c "from importlib.metadata import version; assert version('componentize-py') == '${pin#*==}'" 2>/dev/null; then
  echo "$pin: already in $deps"
else
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$deps" -r plugins/python-redactor/requirements.txt
fi

# `npm ls` fails when a package is missing or not the locked version.
if (cd plugins/js-todo && npm ls --depth=0 >/dev/null 2>&1); then
  echo "plugins/js-todo: locked packages already installed"
else
  # Not `npm ci`: npm 11 refuses this lock file for optional packages of other platforms it did
  # not record; `install --no-save` installs the locked versions and leaves the lock file alone.
  (cd plugins/js-todo && npm install --no-save --no-audit --no-fund)
fi
