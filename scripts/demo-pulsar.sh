#!/usr/bin/env bash
# `make demo-pulsar`: the demo consuming from a real Pulsar broker. Starts a
# standalone broker (scripts/pulsar.sh) when PULSAR_URL is unset and stops it
# again on exit.
set -euo pipefail
# The Go toolchain the Makefile pins (see there), also when this script runs by hand.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
started=
cleanup() { if [ -n "$started" ]; then scripts/pulsar.sh stop >&2 || true; fi; }
trap cleanup EXIT
if [ -z "${PULSAR_URL:-}" ]; then
  out=$(scripts/pulsar.sh start)
  eval "$(echo "$out" | grep -E '^PULSAR_(ADMIN_)?URL=' | sed 's/^/export /')"
  # Stop only a broker this script started, not one an earlier start left running.
  if echo "$out" | grep -q '^PULSAR_STARTED=1'; then started=1; fi
fi
bin/thalweg demo --pulsar "$PULSAR_URL" ${PULSAR_ADMIN_URL:+--pulsar-admin "$PULSAR_ADMIN_URL"} --records "${RECORDS:-200000}" "$@"
