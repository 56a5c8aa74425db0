package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

// memGoldenConfigs cover every term of the memory bound: a Pulsar source
// with a Flight anchor (compressed and not), Zerobus secondaries in both
// modes and encodings' default, an Iceberg anchor of an ordered and of a
// Shared subscription, an Iceberg secondary, small lanes whose capacity
// binds, and a generator source.
var memGoldenConfigs = []struct{ name, yaml string }{
	{"pulsar flight+zerobus", keyBases["pulsar"]},
	{"pulsar small lanes, compression, zerobus flight", `
source: {url: pulsar://127.0.0.1:6650, topics: [a, b], subscription: {name: s}, receiver_queue_size: 500}
batching: {max_bytes: 2MiB, max_rows: 1000}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815", compression: zstd, max_message_size: 1MiB, lane: {capacity: 8}}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c, mode: flight, lane: {max_bytes: 1MiB}}
  - {name: zb2, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9001", table: a.b.d, max_message_size: 1MiB, lane: {capacity: 4}}
store: {dir: /tmp/offsets}
`},
	{"iceberg anchor, ordered", `
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: raw.events}}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c}
store: {dir: /tmp/offsets}
`},
	{"iceberg anchor, partitioned", `
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: raw.events, partition_by: ["day(publish_time)", "bucket(16, key)"]}}
store: {dir: /tmp/offsets}
`},
	{"iceberg anchor, shared", `
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s, type: shared}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: raw.events}}
store: {dir: /tmp/offsets}
`},
	{"iceberg anchor, 100ms commits, maintenance off", `
source: {url: pulsar://127.0.0.1:6650, topics: [events], subscription: {name: s, type: shared}}
destinations:
  - {name: lake, kind: iceberg, role: raw_anchor, iceberg: {warehouse: /tmp/wh, table: raw.events, commit_interval: 100ms, maintenance: {enabled: false}}}
store: {dir: /tmp/offsets}
`},
	{"iceberg secondary, generator", `
source: {kind: generator}
batching: {max_bytes: 4MiB}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - {name: lake, kind: iceberg, role: secondary, iceberg: {warehouse: /tmp/wh, table: raw.events}, lane: {capacity: 16}}
store: {dir: /tmp/offsets}
`},
}

// TestMemoryBoundPrinted: what `thalweg validate` prints of the memory
// bound, for configurations that reach every term, is the reviewed text of
// testdata/membound.golden, to the byte (go test -run
// TestMemoryBoundPrinted -update rewrites it).
func TestMemoryBoundPrinted(t *testing.T) {
	var sb strings.Builder
	for _, c := range memGoldenConfigs {
		cfg, err := config.Parse([]byte(c.yaml), func(string) (string, bool) { return "", false })
		require.NoError(t, err, c.name)
		sb.WriteString("# " + c.name + "\n")
		memoryBound(cfg).print(&sb)
	}
	golden := filepath.Join("testdata", "membound.golden")
	if *updateDocs {
		require.NoError(t, os.WriteFile(golden, []byte(sb.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), sb.String())
}
