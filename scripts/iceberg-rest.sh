#!/usr/bin/env bash
# Resolves the Apache Iceberg REST catalog test fixture and its dependencies
# (testdata/iceberg/rest/pom.xml) from Maven Central into the local Maven
# repository, once per pom, and prints THALWEG_ICEBERG_REST_CP=<file>: a file
# holding the classpath that testdata/iceberg/rest/RestCatalog.java runs with
# (internal/testkit/icebergrest starts it).
#   THALWEG_CACHE  cache folder (default ~/.cache/thalweg)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${THALWEG_CACHE:-$HOME/.cache/thalweg}/iceberg-rest
pom=$here/testdata/iceberg/rest/pom.xml
want=$(sha256sum "$pom" | cut -d' ' -f1)
cp=$cache/classpath-$want.txt
if [ ! -s "$cp" ]; then
  mkdir -p "$cache"
  mvn -q -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$cp.tmp" >&2
  mv "$cp.tmp" "$cp"
fi
echo "THALWEG_ICEBERG_REST_CP=$cp"
