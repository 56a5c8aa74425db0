#!/usr/bin/env bash
# Creates (or refreshes) the Python virtualenv that holds the independent
# peers used by interop tests, and prints the path of its python.
#   THALWEG_CACHE  cache folder (default ~/.cache/thalweg)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${THALWEG_CACHE:-$HOME/.cache/thalweg}
venv=$cache/venv
req=$here/testdata/python/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  echo "$want" >"$stamp"
fi
echo "$venv/bin/python"
