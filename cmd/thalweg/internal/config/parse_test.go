package config_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Sections of a minimal valid document; doc replaces or adds sections.
var baseSections = map[string]string{
	"source": `
  url: pulsar://127.0.0.1:6650
  topics: [events]
  subscription: {name: thalweg}`,
	"destinations": `
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}`,
	"store": `
  dir: /var/lib/thalweg`,
}

var sectionOrder = []string{"source", "schema", "batching", "destinations", "store", "shutdown", "metrics", "log"}

// doc renders the minimal valid document with some sections replaced;
// an empty replacement drops the section.
func doc(over map[string]string) string {
	var b strings.Builder
	for _, k := range sectionOrder {
		body, ok := over[k]
		if !ok {
			body, ok = baseSections[k]
		}
		if !ok || body == "" {
			continue
		}
		b.WriteString(k + ":" + body + "\n")
	}
	return b.String()
}

func TestParseMinimalDefaults(t *testing.T) {
	cfg, err := config.Parse([]byte(doc(nil)), noEnv)
	require.NoError(t, err)

	require.Equal(t, config.SourcePulsar, cfg.Source.Kind)
	require.Equal(t, config.SubFailover, cfg.Source.Subscription.Type)
	require.Equal(t, 1000, cfg.Source.ReceiverQueueSize)
	require.Equal(t, 1<<18, cfg.Source.MaxUnacked)
	require.Equal(t, config.SchemaRaw, cfg.Schema.Mode)
	require.Equal(t, config.BatchingConfig{MaxRows: 8192, MaxBytes: 8 * config.MiB, Linger: 100 * time.Millisecond}, cfg.Batching)
	require.Equal(t, 10*time.Second, cfg.Store.TeardownTimeout)
	require.Equal(t, 30*time.Second, cfg.Shutdown.DrainTimeout)
	require.Equal(t, "127.0.0.1:9464", cfg.Metrics.Listen)
	require.Equal(t, config.LogConfig{Level: config.LevelInfo, Format: config.FormatText, StatsInterval: 30 * time.Second}, cfg.Log)
	for lvl, want := range map[config.LogLevel]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError} {
		require.Equal(t, want, config.LogConfig{Level: lvl}.SlogLevel())
	}

	require.Len(t, cfg.Destinations, 1)
	d := cfg.Destinations[0]
	require.Equal(t, []string{"raw"}, d.Path, "path defaults to [name]")
	require.Equal(t, config.CompressionNone, d.Compression)
	require.Equal(t, config.DefaultFlightMaxMessageSize, d.MaxMessageSize)
	require.Equal(t, config.DefaultFlightSilenceTimeout, d.SilenceTimeout)
	require.Equal(t, config.LaneConfig{Capacity: 4096, MaxBytes: 512 << 20, AckTimeout: 30 * time.Second, MaxRetries: 5, PermanentBudget: time.Minute}, d.Lane)
	require.Empty(t, d.Mode, "mode is a zerobus key")
	require.Same(t, &cfg.Destinations[0], cfg.RawAnchor())

	// A Config built in Go from the same defaults is equal and validates.
	want := config.Default()
	want.Source.URL, want.Source.Topics, want.Source.Subscription.Name = "pulsar://127.0.0.1:6650", []string{"events"}, "thalweg"
	want.Store.Dir = "/var/lib/thalweg"
	want.Destinations = []config.DestinationConfig{config.DefaultDestination("raw", config.KindFlight, config.RoleRawAnchor, "127.0.0.1:8815")}
	require.NoError(t, want.Validate())
	require.Equal(t, want.Destinations, cfg.Destinations)
	require.Equal(t, want.Source, cfg.Source)
}

func TestParseGood(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		env   map[string]string
		check func(t *testing.T, c *config.Config)
	}{
		{
			name: "metrics listen empty disables, null keeps default",
			yaml: doc(map[string]string{"metrics": `
  listen: ""`}),
			check: func(t *testing.T, c *config.Config) { require.Equal(t, "", c.Metrics.Listen) },
		},
		{
			name: "null value keeps the default",
			yaml: doc(map[string]string{"metrics": `
  listen:`, "batching": `
  max_rows:
  linger: ~`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.DefaultMetricsListen, c.Metrics.Listen)
				require.Equal(t, 8192, c.Batching.MaxRows)
				require.Equal(t, 100*time.Millisecond, c.Batching.Linger)
			},
		},
		{
			name: "a null block of the other source kind is absent",
			yaml: doc(map[string]string{"source": baseSections["source"] + "\n  generator:"}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.Default().Source.Generator, c.Source.Generator)
			},
		},
		{
			name: "explicit zero retries is kept, not defaulted",
			yaml: doc(map[string]string{"destinations": `
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: localhost:1
    lane: {max_retries: 0, capacity: 1, ack_timeout: 1ms}`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.LaneConfig{Capacity: 1, MaxBytes: config.DefaultLaneMaxBytes, AckTimeout: time.Millisecond, MaxRetries: 0, PermanentBudget: time.Minute}, c.Destinations[0].Lane)
			},
		},
		{
			name: "sizes as strings and integers",
			yaml: doc(map[string]string{"batching": `
  max_bytes: 512KiB`, "destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "h:1", max_message_size: 1048576}
  - {name: b, kind: zerobus, role: secondary, endpoint: "h:2", table: c.s.t, max_message_size: 64 MB}`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, 512*config.KiB, c.Batching.MaxBytes)
				require.Equal(t, config.MiB, c.Destinations[0].MaxMessageSize)
				require.Equal(t, 64*config.MB, c.Destinations[1].MaxMessageSize)
				require.Equal(t, config.ZerobusEphemeral, c.Destinations[1].Mode, "zerobus mode default")
				require.Nil(t, c.Destinations[1].Path, "path is a flight key")
			},
		},
		{
			name: "generator source",
			yaml: doc(map[string]string{"source": `
  kind: generator
  generator: {seed: 7, partitions: 2, records: 0, rate: 1.5e3, payload_size: 1KiB, malformed_fraction: 1, mode: json}`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.GeneratorConfig{Seed: 7, Partitions: 2, Records: 0, Rate: 1500, PayloadSize: config.KiB, MalformedFraction: 1, Mode: config.GenJSON}, c.Source.Generator)
			},
		},
		{
			name: "generator defaults",
			yaml: doc(map[string]string{"source": `
  kind: generator`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.GeneratorConfig{Seed: 1, Partitions: 4, Records: 1_000_000, PayloadSize: 256, Mode: config.GenRaw}, c.Source.Generator)
			},
		},
		{
			name: "pattern only, ssl with CA, token file, several brokers",
			yaml: doc(map[string]string{"source": `
  url: pulsar+ssl://a.example:6651,b.example:6651/
  auth: {token_file: /run/token, tls_ca_file: /etc/ca.pem}
  listener_name: external-1
  topics_pattern: persistent://public/default/ev-.*
  subscription: {name: s, type: key_shared}
  dead_letter_topic: t-dlq`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.SubKeyShared, c.Source.Subscription.Type)
				require.Equal(t, "/run/token", c.Source.Auth.TokenFile)
				require.Equal(t, "external-1", c.Source.ListenerName)
			},
		},
		{
			name: "json schema nullable and timestamp unit default",
			yaml: doc(map[string]string{"schema": `
  mode: json
  fields:
    - {name: a, type: timestamp, nullable: false}
    - {name: l, type: list, items: {type: list, items: {type: timestamp, unit: s}}}`}),
			check: func(t *testing.T, c *config.Config) {
				f := c.Schema.Fields
				require.False(t, f[0].IsNullable())
				require.Equal(t, config.UnitMillisecond, f[0].Unit, "timestamp unit default")
				require.True(t, f[1].IsNullable())
				require.Equal(t, config.UnitSecond, f[1].Items.Items.Unit)
			},
		},
		{
			name: "anchors, aliases and merge keys",
			yaml: doc(map[string]string{"destinations": `
  - name: a
    kind: flight
    role: raw_anchor
    endpoint: &ep "h:1"
    tls: &tls {enabled: true, server_name: x}
    lane: &lane {capacity: 8, ack_timeout: 2s}
  - name: b
    kind: flight
    role: secondary
    endpoint: *ep
    tls: *tls
    lane:
      <<: *lane
      capacity: 9`}),
			check: func(t *testing.T, c *config.Config) {
				b := c.Destinations[1]
				require.Equal(t, "h:1", b.Endpoint)
				require.Equal(t, config.TLSConfig{Enabled: true, ServerName: "x"}, b.TLS)
				require.Equal(t, config.LaneConfig{Capacity: 9, MaxBytes: config.DefaultLaneMaxBytes, AckTimeout: 2 * time.Second, MaxRetries: 5, PermanentBudget: time.Minute}, b.Lane)
			},
		},
		{
			name: "interpolated numbers, durations and enums",
			env:  map[string]string{"ROWS": "100", "LINGER": "5ms", "LEVEL": "debug"},
			yaml: doc(map[string]string{"batching": `
  max_rows: ${ROWS}
  linger: ${LINGER}
  max_bytes: ${BYTES:-1MiB}`, "log": `
  level: ${LEVEL}
  format: ${FORMAT:-json}`}),
			check: func(t *testing.T, c *config.Config) {
				require.Equal(t, config.BatchingConfig{MaxRows: 100, MaxBytes: config.MiB, Linger: 5 * time.Millisecond}, c.Batching)
				require.Equal(t, config.LogConfig{Level: config.LevelDebug, Format: config.FormatJSON, StatsInterval: config.DefaultStatsInterval}, c.Log)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml), envOf(tc.env))
			require.NoError(t, err, "document:\n%s", tc.yaml)
			require.NoError(t, cfg.Validate(), "a parsed Config validates again")
			tc.check(t, cfg)
		})
	}
}

func TestParseBad(t *testing.T) {
	type bad struct {
		name string
		yaml string
		// want holds "path: message substring" or just "path:" entries;
		// each must be one problem of the error.
		want []string
	}
	d := func(over map[string]string) string { return doc(over) }
	src := func(extra string) string {
		return d(map[string]string{"source": baseSections["source"] + extra})
	}
	dest := func(extra string) string {
		return d(map[string]string{"destinations": `
  - name: raw
    kind: flight
    role: raw_anchor
    endpoint: "h:1"` + extra})
	}
	zb := func(extra string) string {
		return d(map[string]string{"destinations": baseSections["destinations"] + `
  - name: zb
    kind: zerobus
    role: secondary
    endpoint: "h:2"` + extra})
	}
	schema := func(body string) string { return d(map[string]string{"schema": body}) }

	cases := []bad{
		// The examples of the brief, verbatim.
		{"endpoint missing", zb("\n    table: c.s.t\n  - {name: x, kind: flight, role: secondary}"), []string{"destinations[2].endpoint: required (host:port)"}},
		{"max_rows negative", d(map[string]string{"batching": "\n  max_rows: -3"}), []string{"batching.max_rows: must be > 0, got -3"}},
		{"subscription type", d(map[string]string{"source": `
  url: pulsar://h:6650
  topics: [t]
  subscription: {name: s, type: foo}`}), []string{`source.subscription.type: must be one of exclusive|failover|shared|key_shared, got "foo"`}},

		// source
		{"kind", src("\n  kind: kafka"), []string{`source.kind: must be one of pulsar|generator, got "kafka"`}},
		{"url missing", d(map[string]string{"source": "\n  topics: [t]\n  subscription: {name: s}"}), []string{"source.url: required"}},
		{"url scheme", d(map[string]string{"source": "\n  url: http://h:1\n  topics: [t]\n  subscription: {name: s}"}), []string{"source.url: want pulsar://"}},
		{"url port", d(map[string]string{"source": "\n  url: pulsar://h:99999\n  topics: [t]\n  subscription: {name: s}"}), []string{"source.url: want"}},
		{"token env and file", src("\n  auth: {token_env: T, token_file: /f}"), []string{"source.auth.token_file: set token_env or token_file, not both"}},
		{"ca without ssl", src("\n  auth: {tls_ca_file: /ca.pem}"), []string{"source.auth.tls_ca_file: requires a pulsar+ssl:// url or an https:// admin_url"}},
		{"admin url scheme", src("\n  admin_url: 'pulsar://h:8080'"), []string{`source.admin_url: want http://host:port or https://host:port (the brokers' admin REST API), got "pulsar://h:8080"`}},
		{"admin url path", src("\n  admin_url: 'http://h:8080/admin/v2'"), []string{`source.admin_url: want http://host:port or https://host:port`}},
		{"admin url port", src("\n  admin_url: 'https://h:0'"), []string{`source.admin_url: want http://host:port or https://host:port`}},
		{"listener name", src("\n  listener_name: 'pulsar://h:1'"), []string{`source.listener_name: want letters, digits, '_' and '-' (a name from the brokers' advertisedListeners), got "pulsar://h:1"`}},
		{"no topics", d(map[string]string{"source": "\n  url: pulsar://h:1\n  subscription: {name: s}"}), []string{"source.topics: required"}},
		{"bad and duplicate topics", d(map[string]string{"source": "\n  url: pulsar://h:1\n  subscription: {name: s}\n  topics: [a, 'b c', a, 'kafka://x/y/z', 'x/y', '']"}),
			[]string{"source.topics[1]: want a topic name", "source.topics[2]: duplicate topic", "source.topics[3]:", "source.topics[4]:", "source.topics[5]: must not be empty"}},
		{"pattern", src("\n  topics_pattern: '('"), []string{"source.topics_pattern: want a regular expression"}},
		{"subscription name", d(map[string]string{"source": "\n  url: pulsar://h:1\n  topics: [t]"}), []string{"source.subscription.name: required"}},
		{"queue sizes", src("\n  receiver_queue_size: 0\n  max_unacked: -1"), []string{"source.receiver_queue_size: must be > 0, got 0", "source.max_unacked: must be > 0, got -1"}},
		{"dlq", src("\n  dead_letter_topic: 'persistent://x'"), []string{"source.dead_letter_topic: want a topic name"}},
		{"generator block with pulsar", src("\n  generator: {seed: 2}"), []string{"source.generator: only allowed with source.kind generator"}},
		{"pulsar keys with generator", d(map[string]string{"source": "\n  kind: generator\n  url: pulsar://h:1\n  subscription: {name: s}\n  receiver_queue_size: 5\n  listener_name: x"}),
			[]string{"source.url: only allowed with source.kind pulsar", "source.subscription: only allowed", "source.receiver_queue_size: only allowed", "source.listener_name: only allowed"}},
		{"admin url with generator", d(map[string]string{"source": "\n  kind: generator\n  admin_url: http://h:8080"}), []string{"source.admin_url: only allowed with source.kind pulsar"}},
		{"generator ranges", d(map[string]string{"source": "\n  kind: generator\n  generator: {partitions: 0, records: -1, rate: -1, payload_size: 0, malformed_fraction: 1.5, mode: xml}"}),
			[]string{"source.generator.partitions: must be in [1, 65536], got 0", "source.generator.records: must be >= 0", "source.generator.rate:", "source.generator.payload_size:", "source.generator.malformed_fraction: must be in [0, 1], got 1.5", `source.generator.mode: must be one of raw|json, got "xml"`}},
		{"generator NaN and Inf", d(map[string]string{"source": "\n  kind: generator\n  generator: {rate: .inf, malformed_fraction: .nan}"}),
			[]string{"source.generator.rate: must be a finite number", "source.generator.malformed_fraction: must be in [0, 1], got NaN"}},
		{"generator raw with json schema", d(map[string]string{"source": "\n  kind: generator", "schema": "\n  mode: json\n  fields: [{name: a, type: int64}]"}),
			[]string{"source.generator.mode: must be json when schema.mode is json"}},

		// schema
		{"schema mode", schema("\n  mode: avro"), []string{`schema.mode: must be one of raw|json|pulsar, got "avro"`}},
		{"pulsar without registry", schema("\n  mode: pulsar"), []string{"schema.registry_url: required with schema.mode pulsar unless source.admin_url is set"}},
		{"pulsar registry not http", schema("\n  mode: pulsar\n  registry_url: pulsar://h:6650"), []string{`schema.registry_url: want http://host:port or https://host:port (the brokers' admin REST API), got "pulsar://h:6650"`}},
		{"pulsar with fields", schema("\n  mode: pulsar\n  registry_url: http://h:8080\n  fields: [{name: a, type: int64}]"), []string{"schema.fields: not allowed with schema.mode pulsar"}},
		{"registry without pulsar", schema("\n  registry_url: http://h:8080"), []string{"schema.registry_url: only used with schema.mode pulsar"}},
		{"pulsar schemas with generator", d(map[string]string{"source": "\n  kind: generator", "schema": "\n  mode: pulsar\n  registry_url: http://h:8080"}),
			[]string{"schema.mode: pulsar needs source.kind pulsar"}},
		{"raw with fields", schema("\n  fields: [{name: a, type: int64}]"), []string{"schema.fields: not allowed with schema.mode raw"}},
		{"json without fields", schema("\n  mode: json"), []string{"schema.fields: required with schema.mode json"}},
		{"field problems", schema(`
  mode: json
  fields:
    - {type: int64}
    - {name: b, type: decimal}
    - {name: c, type: struct}
    - {name: d, type: list}
    - {name: e, type: int32, items: {type: int8}, fields: [{name: x, type: bool}], unit: ms}
    - {name: f, type: timestamp, unit: h}
    - {name: b, type: bool}
    - {name: g}
    - {name: h, type: struct, fields: [{name: i, type: list, items: {type: struct, fields: [{name: j, type: float16}]}}]}`),
			[]string{
				"schema.fields[0].name: required",
				`schema.fields[1].type: must be one of bool|int8|`, `got "decimal"`,
				"schema.fields[2].fields: required for type struct",
				"schema.fields[3].items: required for type list",
				`schema.fields[4].items: only allowed for type list, got type "int32"`,
				"schema.fields[4].fields: only allowed for type struct",
				"schema.fields[4].unit: only allowed for type timestamp",
				`schema.fields[5].unit: must be one of s|ms|us|ns, got "h"`,
				`schema.fields[6].name: duplicate field name "b" (also schema.fields[1])`,
				"schema.fields[7].type: required",
				`schema.fields[8].fields[0].items.fields[0].type: must be one of`,
			}},
		{"schema too deep", schema("\n  mode: json\n  fields:\n" + deepStruct(40)), []string{"nested deeper than 32 levels"}},

		// batching
		{"batching", d(map[string]string{"batching": "\n  max_bytes: 0\n  linger: 0s"}), []string{"batching.max_bytes: must be > 0, got 0B", "batching.linger: must be > 0, got 0s"}},
		{"size strings", d(map[string]string{"batching": "\n  max_bytes: 8XB"}), []string{`batching.max_bytes: unknown size unit "XB"`}},
		{"negative size", d(map[string]string{"batching": "\n  max_bytes: -5"}), []string{"batching.max_bytes: must be >= 0, got -5"}},
		{"size list", d(map[string]string{"batching": "\n  max_bytes: [1]"}), []string{"batching.max_bytes: want a size such as 8MiB or an integer, got a list"}},
		{"duration as integer", d(map[string]string{"batching": "\n  linger: 100"}), []string{`batching.linger: want a duration with a unit such as 100ms, 30s or 1m30s, got "100"`}},
		{"duration word", d(map[string]string{"batching": "\n  linger: fast"}), []string{`batching.linger: want a duration`, `got "fast"`}},
		{"float into int", d(map[string]string{"batching": "\n  max_rows: 1.5"}), []string{`batching.max_rows: want an integer, got "1.5"`}},
		{"string into int", d(map[string]string{"batching": "\n  max_rows: lots"}), []string{`batching.max_rows: want an integer, got "lots"`}},
		{"quoted int", d(map[string]string{"batching": "\n  max_rows: '10'"}), []string{`batching.max_rows: want an integer, got "10"`}},
		{"int overflow", d(map[string]string{"batching": "\n  max_rows: 99999999999999999999"}), []string{"batching.max_rows: want an integer"}},

		// destinations
		{"no destinations", d(map[string]string{"destinations": ""}), []string{"destinations: required"}},
		{"empty destinations", d(map[string]string{"destinations": " []"}), []string{"destinations: required"}},
		{"destinations mapping", d(map[string]string{"destinations": "\n  raw: {kind: flight}"}), []string{"destinations: want a list, got a mapping"}},
		{"no raw anchor", d(map[string]string{"destinations": "\n  - {name: a, kind: flight, role: secondary, endpoint: 'h:1'}"}), []string{"destinations: exactly one destination must have role raw_anchor, found 0"}},
		{"two raw anchors", zb("\n    table: c.s.t\n  - {name: b, kind: flight, role: raw_anchor, endpoint: 'h:3'}"), []string{`destinations: exactly one destination must have role raw_anchor, found 2 ("raw", "b")`}},
		{"name", d(map[string]string{"destinations": "\n  - {kind: flight, role: raw_anchor, endpoint: 'h:1'}\n  - {name: Bad!, kind: flight, role: secondary, endpoint: 'h:1'}\n  - {name: " + strings.Repeat("x", 65) + ", kind: flight, role: secondary, endpoint: 'h:1'}"}),
			[]string{"destinations[0].name: required", `destinations[1].name: must match [a-z0-9_-]+`, "destinations[2].name: must match"}},
		{"duplicate names", d(map[string]string{"destinations": "\n  - {name: a, kind: flight, role: raw_anchor, endpoint: 'h:1'}\n  - {name: a, kind: flight, role: secondary, endpoint: 'h:1'}"}),
			[]string{`destinations[1].name: duplicate name "a" (also destinations[0])`}},
		{"kind and role", d(map[string]string{"destinations": "\n  - {name: a, kind: kafka, role: primary, endpoint: 'h:1'}"}),
			[]string{`destinations[0].kind: must be one of flight|zerobus|iceberg, got "kafka"`, `destinations[0].role: must be one of raw_anchor|secondary, got "primary"`}},
		{"kind and role missing", d(map[string]string{"destinations": "\n  - {name: a, endpoint: 'h:1'}"}),
			[]string{"destinations[0].kind: required (one of flight|zerobus|iceberg)", "destinations[0].role: required (one of raw_anchor|secondary)"}},
		{"endpoints", d(map[string]string{"destinations": `
  - {name: a, kind: flight, role: raw_anchor, endpoint: "grpc://h:1"}
  - {name: b, kind: flight, role: secondary, endpoint: "h"}
  - {name: c, kind: flight, role: secondary, endpoint: "h:70000"}
  - {name: e, kind: flight, role: secondary, endpoint: ":1"}`}),
			[]string{"destinations[0].endpoint: want host:port without a scheme", `destinations[1].endpoint: want host:port, got "h"`, "destinations[2].endpoint: want host:port", "destinations[3].endpoint: want host:port"}},
		{"flight path", dest("\n    path: []\n  - {name: b, kind: flight, role: secondary, endpoint: 'h:1', path: [a, '']}"),
			[]string{"destinations[0].path: must not be empty", "destinations[1].path[1]: must not be empty"}},
		{"flight with zerobus keys", dest("\n    table: c.s.t\n    mode: flight"), []string{"destinations[0].table: only allowed for kind zerobus", "destinations[0].mode: only allowed for kind zerobus"}},
		{"zerobus keys", zb("\n    path: [x]\n    mode: grpc"), []string{"destinations[1].path: only allowed for kind flight", "destinations[1].table: required for kind zerobus", `destinations[1].mode: must be one of ephemeral|flight, got "grpc"`}},
		{"zerobus table form", zb("\n    table: just_a_table"), []string{`destinations[1].table: want catalog.schema.table, got "just_a_table"`}},
		{"tls without enabled", dest("\n    tls: {ca_file: /ca, server_name: x, insecure_skip_verify: true}"),
			[]string{"destinations[0].tls.ca_file: requires destinations[0].tls.enabled: true", "destinations[0].tls.server_name: requires", "destinations[0].tls.insecure_skip_verify: requires"}},
		{"tls pairs", dest("\n    tls: {enabled: true, cert_file: /c, ca_file: /ca, insecure_skip_verify: true}"),
			[]string{"destinations[0].tls.key_file: required with cert_file", "destinations[0].tls.insecure_skip_verify: contradicts ca_file"}},
		{"tls bool", dest("\n    tls: {enabled: maybe}"), []string{`destinations[0].tls.enabled: want true or false, got "maybe"`}},
		{"compression and size", dest("\n    compression: gzip\n    max_message_size: 1KiB"),
			[]string{`destinations[0].compression: must be one of none|lz4|zstd, got "gzip"`, "destinations[0].max_message_size: must be in [64KiB, 2GiB-1], got 1KiB"}},
		{"lane", dest("\n    lane: {capacity: 0, ack_timeout: -1s, max_retries: -1, permanent_budget: 0s}\n  - {name: b, kind: flight, role: secondary, endpoint: 'h:1', lane: {capacity: 100000, max_bytes: 0}}"),
			[]string{"destinations[0].lane.capacity: must be in [1, 65536], got 0", "destinations[0].lane.ack_timeout: must be > 0, got -1s", "destinations[0].lane.max_retries: must be >= 0, got -1", "destinations[0].lane.permanent_budget: must be > 0, or negative to never give up, got 0", "destinations[1].lane.capacity: must be in [1, 65536], got 100000", "destinations[1].lane.max_bytes: must be > 0, got 0B"}},

		// store, shutdown, metrics, log
		{"store", d(map[string]string{"store": "\n  teardown_timeout: 0s"}), []string{"store.dir: required", "store.teardown_timeout: must be > 0, got 0s"}},
		{"store missing", d(map[string]string{"store": ""}), []string{"store.dir: required"}},
		{"shutdown", d(map[string]string{"shutdown": "\n  drain_timeout: 0s"}), []string{"shutdown.drain_timeout: must be > 0"}},
		{"metrics", d(map[string]string{"metrics": "\n  listen: nope"}), []string{`metrics.listen: want host:port, got "nope"`}},
		{"log", d(map[string]string{"log": "\n  level: verbose\n  format: xml"}), []string{`log.level: must be one of debug|info|warn|error, got "verbose"`, `log.format: must be one of text|json, got "xml"`}},

		// shape
		{"source as list", d(map[string]string{"source": " [a]"}), []string{"source: want a mapping, got a list"}},
		{"string as mapping", src("\n  topics_pattern: {a: b}"), []string{"source.topics_pattern: want a string, got a mapping"}},
		{"unknown top-level key", doc(nil) + "sources: {}\n", []string{`sources: unknown key "sources", did you mean "source"?`}},
		{"unknown key lists the valid ones", doc(nil) + "pipeline: {}\n", []string{`pipeline: unknown key "pipeline" (want one of batching, destinations, log, metrics, schema, shutdown, source, store)`}},
		{"unknown nested key", dest("\n    lane: {capacty: 3}\n    tls: {enable: true}"),
			[]string{`destinations[0].lane.capacty: unknown key "capacty", did you mean "capacity"?`, `destinations[0].tls.enable: unknown key "enable", did you mean "enabled"?`}},
		{"unknown schema field key", schema("\n  mode: json\n  fields: [{name: a, type: int64, nulable: false}]"), []string{`schema.fields[0].nulable: unknown key "nulable", did you mean "nullable"?`}},
		{"duplicate key", d(map[string]string{"batching": "\n  max_rows: 1\n  max_rows: 2"}), []string{"batching.max_rows: duplicate key (first written on line"}},
		{"literal token in destination", dest("\n    token: abc.def.ghi"), []string{"destinations[0].token: literal secrets are not accepted", "use token_env"}},
		{"literal token in auth", src("\n  auth: {token: abc.def.ghi}"), []string{"source.auth.token: literal secrets are not accepted", "or token_file"}},
		{"token_env holding a token", dest("\n    token_env: eyJhbGciOiJIUzI1NiJ9.e30.sig"), []string{"destinations[0].token_env: want the name of an environment variable"}},

		// documents
		{"empty", "", []string{"configuration is empty"}},
		{"comments only", "# nothing\n", []string{"configuration is empty"}},
		{"scalar document", "hello\n", []string{": want a mapping, got \"hello\""}},
		{"two documents", doc(nil) + "---\nsource: {}\n", []string{"more than one YAML document"}},
		{"syntax", "source: [\n", []string{"did not find expected node content"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.yaml), noEnv)
			require.Error(t, err, "document:\n%s", tc.yaml)
			require.Nil(t, cfg)
			require.ErrorIs(t, err, config.ErrInvalid)
			var e *config.Error
			require.ErrorAs(t, err, &e)
			msg := err.Error()
			for _, w := range tc.want {
				require.Contains(t, msg, w, "document:\n%s", tc.yaml)
			}
			// Each message line is one problem.
			require.Len(t, strings.Split(msg, "\n"), len(e.Problems))
		})
	}
}

// deepStruct nests n structs.
func deepStruct(n int) string {
	var b strings.Builder
	indent := "    "
	for i := 0; i < n; i++ {
		b.WriteString(indent + "- name: s\n" + indent + "  type: struct\n" + indent + "  fields:\n")
		indent += "    "
	}
	b.WriteString(indent + "- {name: leaf, type: int64}\n")
	return b.String()
}

func TestFieldPathsAndLines(t *testing.T) {
	y := `source:
  url: pulsar://h:1
  topics: [t]
  subscription:
    name: s
    type: foo
batching:
  max_rows: -3
destinations:
  - name: a
    kind: flight
    role: raw_anchor
    endpoint: "h:1"
  - name: b
    kind: zerobus
    role: secondary
    table: c.s.t
store:
  dir: /d
`
	_, err := config.Parse([]byte(y), noEnv)
	var e *config.Error
	require.ErrorAs(t, err, &e)
	got := map[string]int{}
	for _, p := range e.Problems {
		got[p.Path] = p.Line
	}
	require.Equal(t, map[string]int{
		"source.subscription.type": 6,
		"batching.max_rows":        8,
		// A missing key is reported on the line of its enclosing mapping.
		"destinations[1].endpoint": 14,
	}, got)
	require.Equal(t, `line 6: source.subscription.type: must be one of exclusive|failover|shared|key_shared, got "foo"
line 8: batching.max_rows: must be > 0, got -3
line 14: destinations[1].endpoint: required (host:port)`, err.Error())

	// errors.As finds each problem through the joined error.
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "source.subscription.type", fe.Path)
}

// Schema-walk problems and validation problems come back together, in
// file order, without reporting a broken value twice.
func TestMultipleErrorsAtOnce(t *testing.T) {
	y := `source:
  url: pulsar://h:1
  topic: [t]
  subscription: [s]
batching:
  max_rows: -3
  max_bytes: 8MB!
  linger: 100
destinations:
  - name: A
    kind: flight
    role: raw_anchor
    tls: {enable: true}
log:
  level: loud
`
	_, err := config.Parse([]byte(y), noEnv)
	var e *config.Error
	require.ErrorAs(t, err, &e)
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, p.Error())
	}
	require.Equal(t, []string{
		"line 1: source.topics: required: topics and/or topics_pattern",
		`line 3: source.topic: unknown key "topic", did you mean "topics"?`,
		"line 4: source.subscription: want a mapping, got a list",
		"line 6: batching.max_rows: must be > 0, got -3",
		`line 7: batching.max_bytes: unknown size unit "MB!" in "8MB!" (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)`,
		`line 8: batching.linger: want a duration with a unit such as 100ms, 30s or 1m30s, got "100"`,
		`line 10: destinations[0].name: must match [a-z0-9_-]+ and be at most 64 bytes, got "A"`,
		"line 10: destinations[0].endpoint: required (host:port)",
		`line 13: destinations[0].tls.enable: unknown key "enable", did you mean "enabled"?`,
		`line 15: log.level: must be one of debug|info|warn|error, got "loud"`,
		"store.dir: required (directory of the offset store)",
	}, lines)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc(map[string]string{"batching": "\n  max_rows: -3"})), 0o600))
	_, err := config.Load(path)
	require.ErrorIs(t, err, config.ErrInvalid)
	require.Contains(t, err.Error(), path+":6: batching.max_rows: must be > 0, got -3")

	_, err = config.Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, config.ErrInvalid)

	t.Setenv("THALWEG_TEST_DIR", "/srv/data")
	require.NoError(t, os.WriteFile(path, []byte(doc(map[string]string{"store": "\n  dir: ${THALWEG_TEST_DIR}/offsets"})), 0o600))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	require.Equal(t, "/srv/data/offsets", cfg.Store.Dir)
}

func TestValidateGoBuilt(t *testing.T) {
	c := config.Default()
	c.Source.Kind = config.SourceGenerator
	c.Source.URL = "pulsar://h:1"
	c.Store.Dir = "d"
	c.Destinations = []config.DestinationConfig{
		config.DefaultDestination("raw", config.KindFlight, config.RoleRawAnchor, "h:1"),
		config.DefaultDestination("zb", config.KindZerobus, config.RoleSecondary, "h:2"),
	}
	err := c.Validate()
	var e *config.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "source.url: only allowed with source.kind pulsar\ndestinations[1].table: required for kind zerobus (catalog.schema.table)", err.Error())
	for _, p := range e.Problems {
		require.Zero(t, p.Line, "a Go-built config has no lines")
	}
	c.Source.URL = ""
	c.Destinations[1].Table = "a.b.c"
	require.NoError(t, c.Validate())
	require.True(t, errors.Is(&config.Error{}, config.ErrInvalid))
}
