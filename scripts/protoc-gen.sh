#!/usr/bin/env bash
# Regenerates Go code from a .proto file with the protoc plugins pinned in
# go.mod (go tool protoc-gen-go / protoc-gen-go-grpc), so the output depends
# only on go.mod and the protoc on PATH (Debian protobuf-compiler).
#   usage: scripts/protoc-gen.sh path/to/file.proto   (run from anywhere)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
proto=${1:?usage: protoc-gen.sh file.proto}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
module=$(go list -m)
protoc -I . \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
  --go_out=. --go_opt=module="$module" \
  --go-grpc_out=. --go-grpc_opt=module="$module" \
  "$proto"
