#!/usr/bin/env bash
# What the tests of the other release targets (tests/tests/cross_targets.rs, run before a
# release: CONTRIBUTING.md) run them with: Debian's qemu-user and the arm64 C library (the
# aarch64 binary links glibc dynamically), and mingw-w64 (the Windows linker) with wine (which
# runs the Windows binary). Not in `.ci/run`'s loop (those tests are not in every CI run); the
# tests run this script themselves when one is missing (tests/src/setup.rs). Idempotent.
set -euo pipefail

missing=()
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing+=(libc6-arm64-cross)
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null || missing+=(wine wine64)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

qemu-aarch64 --version | head -n 1
x86_64-w64-mingw32-gcc --version | head -n 1
wine --version
