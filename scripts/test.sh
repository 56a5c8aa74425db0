#!/usr/bin/env bash
# Runs `go test` with every peer the integration tests need:
#   - the Python virtualenv (pyarrow, the Zerobus SDK, the Pulsar client, pyiceberg, moto)
#     -> THALWEG_PYTHON
#   - the Apache Iceberg REST catalog test fixture's classpath, from Maven Central
#     -> THALWEG_ICEBERG_REST_CP (scripts/iceberg-rest.sh)
#   - a Pulsar broker -> PULSAR_URL / PULSAR_ADMIN_URL, and its TLS URL, CA file, token
#     file and proxy listener (PULSAR_TLS_URL, PULSAR_CA_FILE, PULSAR_TOKEN_FILE,
#     PULSAR_PROXY_LISTENER, PULSAR_PROXY_ADDR, ...: every line `scripts/pulsar.sh start`
#     prints); started here when PULSAR_URL is unset and stopped again on exit. A caller
#     that sets PULSAR_URL itself sets the others too, e.g. from `scripts/pulsar.sh url`.
set -euo pipefail
# The Go toolchain the Makefile pins (see there), also when this script runs by hand.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

THALWEG_PYTHON=$(scripts/pyenv.sh)
export THALWEG_PYTHON
export THALWEG_REQUIRE_PEERS=1
if [ -z "${THALWEG_ICEBERG_REST_CP:-}" ]; then
  out=$(scripts/iceberg-rest.sh)
  export "${out%%=*}=${out#*=}"
fi

started_pulsar=
cleanup() {
  if [ -n "$started_pulsar" ]; then scripts/pulsar.sh stop >&2 || true; fi
}
trap cleanup EXIT

if [ -z "${PULSAR_URL:-}" ] && [ -x scripts/pulsar.sh ]; then
  out=$(scripts/pulsar.sh start)
  # Export every PULSAR_*=value line but PULSAR_STARTED. Values are paths and URLs, taken
  # verbatim (not evaluated).
  while IFS='=' read -r key value; do
    case $key in
    PULSAR_STARTED) ;;
    PULSAR_[A-Z_]*) export "$key=$value" ;;
    esac
  done <<<"$out"
  # Stop only a broker this script started, not one an earlier start left running.
  if echo "$out" | grep -q '^PULSAR_STARTED=1'; then started_pulsar=1; fi
fi

go test "$@"
