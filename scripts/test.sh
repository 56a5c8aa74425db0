#!/usr/bin/env bash
# Runs `go test` with every peer the integration tests need:
#   - the Python virtualenv (pyarrow, the Zerobus SDK, the Pulsar client) -> THALWEG_PYTHON
#   - a Pulsar broker -> PULSAR_URL / PULSAR_ADMIN_URL; started here when PULSAR_URL
#     is unset and stopped again on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

THALWEG_PYTHON=$(scripts/pyenv.sh)
export THALWEG_PYTHON
export THALWEG_REQUIRE_PEERS=1

started_pulsar=
cleanup() {
  if [ -n "$started_pulsar" ]; then scripts/pulsar.sh stop >&2 || true; fi
}
trap cleanup EXIT

if [ -z "${PULSAR_URL:-}" ] && [ -x scripts/pulsar.sh ]; then
  out=$(scripts/pulsar.sh start)
  eval "$(echo "$out" | grep -E '^PULSAR_(ADMIN_)?URL=' | sed 's/^/export /')"
  # Stop only a broker this script started, not one an earlier start left running.
  if echo "$out" | grep -q '^PULSAR_STARTED=1'; then started_pulsar=1; fi
fi

go test "$@"
