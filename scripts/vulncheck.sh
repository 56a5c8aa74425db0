#!/usr/bin/env bash
# Runs govulncheck (the module's tool dependency) over every package.
#
# govulncheck needs its vulnerability database. vuln.go.dev is not reachable
# from this project's machines, but the database's source, golang.org/x/vulndb
# (OSV files under data/osv plus the indexdb command that publishes them), is
# an ordinary module on the Go module proxy. By default this script downloads
# a pinned version of it, builds the database from it into the cache
# (${THALWEG_CACHE:-~/.cache/thalweg}/vulndb-<version>, once), and checks
# against that. GOVULNDB=https://vuln.go.dev or file:///another/copy
# overrides it. Bump VULNDB_VERSION to refresh (`go list -m golang.org/x/vulndb@latest`).
set -euo pipefail
# The Go toolchain the Makefile pins (see there), also when this script runs by hand.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
cd "$(dirname "$0")/.."

readonly VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018

if [ -z "${GOVULNDB:-}" ]; then
  out=${THALWEG_CACHE:-$HOME/.cache/thalweg}/vulndb-$VULNDB_VERSION
  if [ ! -f "$out/index/db.json" ]; then
    echo "vulncheck.sh: building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION" >&2
    src=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -d "$src/data/osv" ] || { echo "vulncheck.sh: no data/osv in $src" >&2; exit 2; }
    rm -rf "$out.tmp"
    (cd "$src" && GOFLAGS=-mod=mod go run ./cmd/indexdb -vulns data/osv -out "$out.tmp") >&2
    mv "$out.tmp" "$out"
  fi
  GOVULNDB=file://$out
fi
DB=$GOVULNDB
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
      exit 3
    fi
    ;;
  *)
    echo "vulncheck.sh: GOVULNDB=$DB: want an http(s):// or file:// URL" >&2
    exit 2
    ;;
esac

go tool govulncheck -db "$DB" ./...
# deploy/ is a module of its own (the image builder, the manifests' tests).
exec go tool govulncheck -C deploy -db "$DB" ./...
