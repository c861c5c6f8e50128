#!/usr/bin/env bash
# The browser of the viewer's test (cli/tests/viewer_browser.rs): Debian's `chromium`
# and `chromium-driver` (the WebDriver server Selenium drives), headless, started by the test
# with a temp profile and killed when it ends. No recommended packages.
# Idempotent: nothing is installed when both are there.
set -euo pipefail

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

chromium --version
chromedriver --version
