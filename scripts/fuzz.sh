#!/usr/bin/env bash
# Runs every fuzz target of thalweg for FUZZTIME each (default 30s), one
# target at a time (go test -fuzz accepts one target per package run).
#
#   scripts/fuzz.sh            # 30s per target
#   scripts/fuzz.sh 10m        # a longer campaign
#   FUZZ_ONLY=FuzzDoPutMessages scripts/fuzz.sh 5m
#   FUZZ_LIST=1 scripts/fuzz.sh   # list the targets
#
# New crashers are written by Go to <pkg>/testdata/fuzz/<Target>/ and then
# run by plain `go test` as regression seeds: commit them with the fix.
# The seed corpora (f.Add) run in every ordinary `go test`, so CI covers
# them without this script.
set -euo pipefail
# The Go toolchain the Makefile pins (see there), also when this script runs by hand.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}

FUZZTIME="${1:-30s}"
cd "$(dirname "$0")/.."

# Every fuzz target of the module (deploy/ has none): "<package dir> <target>",
# found in the test files, so that the list cannot go out of date.
mapfile -t TARGETS < <(grep -rHoE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' --include='*_test.go' --exclude-dir=deploy . \
  | sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort)
if ((${#TARGETS[@]} == 0)); then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 2
fi
if [[ -n "${FUZZ_LIST:-}" ]]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi

failed=()
for entry in "${TARGETS[@]}"; do
  read -r pkg target <<<"$entry"
  if [[ -n "${FUZZ_ONLY:-}" && "$target" != "$FUZZ_ONLY" ]]; then
    continue
  fi
  echo "=== $pkg $target ($FUZZTIME)"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"; then
    failed+=("$pkg $target")
  fi
done

if ((${#failed[@]} > 0)); then
  echo "fuzz.sh: failing targets:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: all targets passed ($FUZZTIME each)"
