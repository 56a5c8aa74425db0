#!/usr/bin/env bash
# Runs govulncheck (the module's tool dependency) over every package.
#
# govulncheck needs its vulnerability database. By default that is
# https://vuln.go.dev, so this script needs network access; it checks that
# the host answers first and fails with a clear message when it does not,
# rather than reporting "no vulnerabilities" it never looked for.
#
# Offline: point GOVULNDB at a local copy of the database
# (GOVULNDB=file:///path/to/vulndb, the layout of
# https://go.googlesource.com/vulndb served files) and the script uses it.
set -euo pipefail
cd "$(dirname "$0")/.."

DB="${GOVULNDB:-https://vuln.go.dev}"
case "$DB" in
  file://*)
    dir="${DB#file://}"
    if [[ ! -f "$dir/index/db.json" && ! -f "$dir/index/db.json.gz" ]]; then
      echo "vulncheck.sh: GOVULNDB=$DB has no index/db.json: not a vulnerability database" >&2
      exit 2
    fi
    ;;
  http://* | https://*)
    if ! curl -fsS --max-time 10 -o /dev/null "$DB/index/db.json.gz" 2>/dev/null &&
       ! curl -fsS --max-time 10 -o /dev/null "$DB/index/db.json" 2>/dev/null; then
      echo "vulncheck.sh: cannot reach the vulnerability database at $DB" >&2
      echo "  govulncheck cannot check anything without it; this is not a pass." >&2
      echo "  Run with network access, or set GOVULNDB=file:///path/to/a/local/copy." >&2
      exit 3
    fi
    ;;
  *)
    echo "vulncheck.sh: GOVULNDB=$DB: want an http(s):// or file:// URL" >&2
    exit 2
    ;;
esac

exec go tool govulncheck -db "$DB" ./...
