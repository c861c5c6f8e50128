#!/usr/bin/env bash
# PostgreSQL for the tests of the PostgreSQL storage backend: Debian's `postgresql` package.
# tests/src/postgres.rs runs its binaries (initdb, postgres, psql, pg_isready under
# /usr/lib/postgresql/<version>/bin) to start one private server per test process, in its own
# temp dir on its own port, stopped when that process ends. The package's own cluster is never
# used: when installing starts it, it is stopped again and set to manual start so it holds no
# memory, port or connections during the tests.
# Idempotent: nothing is installed when an initdb is already there.
set -euo pipefail

# The newest installed version's initdb (the one the tests use), or nothing.
newest_initdb() {
  local found
  found=(/usr/lib/postgresql/*/bin/initdb)
  [ -x "${found[0]}" ] || return 0
  printf '%s\n' "${found[@]}" | sort -V | tail -n 1
}

initdb=$(newest_initdb)
if [ -z "$initdb" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends postgresql
  initdb=$(newest_initdb)
  if [ -z "$initdb" ]; then
    echo "postgres.sh: the postgresql package is installed but there is no /usr/lib/postgresql/*/bin/initdb" >&2
    exit 1
  fi
  # The package creates and starts a default cluster (`main`, port 5432) where it can; the
  # tests start their own, so stop it and keep it from starting again.
  pg_lsclusters --no-header | while read -r version cluster _port status _rest; do
    echo manual >"/etc/postgresql/$version/$cluster/start.conf"
    case "$status" in
      online*) pg_ctlcluster "$version" "$cluster" stop ;;
    esac
  done
fi

"$(dirname "$initdb")/postgres" --version
