#!/usr/bin/env bash
# Runs every fuzz target of thalweg for FUZZTIME each (default 30s), one
# target at a time (go test -fuzz accepts one target per package run).
#
#   scripts/fuzz.sh            # 30s per target
#   scripts/fuzz.sh 10m        # a longer campaign
#   FUZZ_ONLY=FuzzDoPutMessages scripts/fuzz.sh 5m
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

# package  target  (keep in sync with `grep -rn 'func Fuzz' --include=*_test.go`)
TARGETS=(
  "./batch                    FuzzAssembleJSON"
  "./cmd/thalweg/internal/config FuzzParse"
  "./flight/internal/wire     FuzzParseBatchMeta"
  "./flight/internal/wire     FuzzParseAck"
  "./flight/internal/wire     FuzzCanonicalMatchesJSON"
  "./flight/receiver          FuzzDoPutMessages"
  "./flight/receiver          FuzzRecovery"
  "./internal/ipcguard        FuzzCheckMessage"
  "./internal/ipcguard        FuzzDeclared"
  "./zerobus                  FuzzFlightAck"
  "./zerobus                  FuzzEphemeralResponse"
  "./zerobus/server           FuzzEphemeralRequests"
  "./zerobus/server           FuzzFlightMessages"
  "./zerobus/server           FuzzRepairTail"
  "./zerobus/internal/rowjson FuzzAppendString"
)

# Fail if a fuzz target exists that is not listed above.
listed=$(printf '%s\n' "${TARGETS[@]}" | awk '{print $2}' | sort)
found=$(grep -rhoE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' --include='*_test.go' . \
  | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' | sort)
if [[ "$listed" != "$found" ]]; then
  echo "fuzz.sh: the target list is out of date:" >&2
  diff <(echo "$listed") <(echo "$found") >&2 || true
  exit 2
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
