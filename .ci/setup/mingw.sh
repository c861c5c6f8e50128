#!/usr/bin/env bash
# The Windows linker and C compiler (Debian's mingw-w64): `.ci/run` lints the CLI for
# x86_64-pc-windows-gnu, whose SQLite build script compiles C. Idempotent.
set -euo pipefail

if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends gcc-mingw-w64-x86-64
fi
x86_64-w64-mingw32-gcc --version | head -n 1
