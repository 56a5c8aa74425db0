package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"gopkg.in/yaml.v3"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
	"github.com/thalweg/thalweg/source/pulsar"
	"github.com/thalweg/thalweg/zerobus"
)

// lake is an iceberg secondary appended to a base document's
// destinations; lakeWith adds keys to its iceberg section.
const lake = "{name: lake, kind: iceberg, role: secondary, iceberg: {table: raw.events}}"

func lakeWith(keys string) string {
	return "{name: lake, kind: iceberg, role: secondary, iceberg: {table: raw.events, " + keys + "}}"
}

var updateDocs = flag.Bool("update", false, "rewrite docs/configuration.md from the key table")

// keyCase is one configuration key: what docs/configuration.md says about
// it, and a check that fails when the key stops reaching its component.
// The check runs on the options the worker's own mapping functions
// (configmap.go, pulsar.go, newLogger) build from base with yaml merged in.
type keyCase struct {
	key  string // dotted path; [] marks a list element
	def  string // the default, as the docs show it
	sets string // the option it sets
	base string // "pulsar" (default) or "generator"
	yaml string // merged into the base document; lists merge by index
	// check asserts that the non-default value written in yaml arrived.
	check func(t *testing.T, b *built)
}

// keyCases is the exhaustive table; TestEveryKeyHasAMappingTest fails for
// a key of the config structs that is missing here.
var keyCases = []keyCase{
	// source
	{key: "source.kind", def: "pulsar", sets: "which source opens: source/pulsar (pulsar) or source/gen (generator)", base: "generator",
		check: func(t *testing.T, b *built) {
			src, err := openSource(context.Background(), b.cfg, nil, nil, b.env, b.log, nil)
			require.NoError(t, err)
			require.IsType(t, &gen.Source{}, src)
		}},
	{key: "source.url", def: "(required for pulsar)", sets: "pulsar.Options.URL", yaml: "source: {url: 'pulsar+ssl://b1:6651,b2:6651'}",
		check: func(t *testing.T, b *built) { require.Equal(t, "pulsar+ssl://b1:6651,b2:6651", b.pulsar.URL) }},
	{key: "source.auth.token_env", def: "none", sets: "pulsar.Options.Token (the variable's value)", yaml: "source: {auth: {token_env: PULSAR_TOKEN}}",
		check: func(t *testing.T, b *built) { require.Equal(t, "pulsar-secret", b.pulsar.Token) }},
	{key: "source.auth.token_file", def: "none", sets: "pulsar.Options.TokenFile (reread on every reconnect)", yaml: "source: {auth: {token_file: '${TOKEN_FILE}'}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, b.tokenFile, b.pulsar.TokenFile)
			require.Empty(t, b.pulsar.Token)
		}},
	{key: "source.admin_url", def: "none (offsets reset refuses to run without it)", sets: "pulsaradmin.Options.URL (thalweg offsets reset; with the source's token and, for https://, its tls_ca_file)",
		yaml: "source: {admin_url: 'https://b1:8443', auth: {token_env: PULSAR_TOKEN, tls_ca_file: /etc/ca.pem}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "https://b1:8443", b.admin.URL)
			require.Equal(t, "pulsar-secret", b.admin.Token)
			require.Equal(t, "/etc/ca.pem", b.admin.TLSCAFile)
			require.Empty(t, buildKeys(t, "pulsar", "").admin.URL, "none by default")
			f := buildKeys(t, "pulsar", "source: {admin_url: 'http://b1:8080', auth: {token_file: '${TOKEN_FILE}'}}")
			require.Equal(t, f.tokenFile, f.admin.TokenFile)
			require.Empty(t, f.admin.Token)
		}},
	{key: "source.auth.tls_ca_file", def: "system roots", sets: "pulsar.Options.TLSTrustCertsFile", yaml: "source: {url: 'pulsar+ssl://b:6651', auth: {tls_ca_file: /etc/ca.pem}}",
		check: func(t *testing.T, b *built) { require.Equal(t, "/etc/ca.pem", b.pulsar.TLSTrustCertsFile) }},
	{key: "source.listener_name", def: "none", sets: "pulsar.Options.ListenerName", yaml: "source: {listener_name: external}",
		check: func(t *testing.T, b *built) { require.Equal(t, "external", b.pulsar.ListenerName) }},
	{key: "source.start", def: "earliest", sets: "pulsar.Options.StartLatest", yaml: "source: {start: latest}",
		check: func(t *testing.T, b *built) {
			require.True(t, b.pulsar.StartLatest)
			require.False(t, buildKeys(t, "pulsar", "").pulsar.StartLatest, "earliest by default")
		}},
	{key: "source.topics", def: "(topics and/or topics_pattern)", sets: "pulsar.Options.Topics", yaml: "source: {topics: [a, persistent://t/n/b]}",
		check: func(t *testing.T, b *built) { require.Equal(t, []string{"a", "persistent://t/n/b"}, b.pulsar.Topics) }},
	{key: "source.topics_pattern", def: "none", sets: "pulsar.Options.TopicsPattern", yaml: "source: {topics_pattern: 'persistent://public/default/ev-.*'}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "persistent://public/default/ev-.*", b.pulsar.TopicsPattern)
		}},
	{key: "source.subscription.name", def: "(required for pulsar)", sets: "pulsar.Options.Subscription", yaml: "source: {subscription: {name: sub-7}}",
		check: func(t *testing.T, b *built) { require.Equal(t, "sub-7", b.pulsar.Subscription) }},
	{key: "source.subscription.type", def: "failover", sets: "pulsar.Options.Type; the raw anchor's flight.Options.Ordered (exclusive, failover: idempotent append)",
		yaml: "source: {subscription: {type: key_shared}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, pulsar.KeyShared, b.pulsar.Type)
			require.False(t, b.dest("raw").Flight.Ordered, "key_shared is not ordered")
			for typ, ordered := range map[string]bool{"exclusive": true, "failover": true, "shared": false, "key_shared": false} {
				o := buildKeys(t, "pulsar", "source: {subscription: {type: "+typ+"}}")
				require.Equal(t, ordered, o.dest("raw").Flight.Ordered, typ)
				// A secondary's rebuild fills gaps below what it stores:
				// never ordered.
				sec := buildKeys(t, "pulsar", "source: {subscription: {type: "+typ+"}}\ndestinations: [{}, {}, {name: fs, kind: flight, role: secondary, endpoint: '127.0.0.1:9001'}]")
				require.False(t, sec.dest("fs").Flight.Ordered, typ)
			}
			require.False(t, buildKeys(t, "generator", "").dest("raw").Flight.Ordered, "the generator is not a broker")
		}},
	{key: "source.receiver_queue_size", def: "1000", sets: "pulsar.Options.ReceiverQueueSize", yaml: "source: {receiver_queue_size: 77}",
		check: func(t *testing.T, b *built) { require.Equal(t, 77, b.pulsar.ReceiverQueueSize) }},
	{key: "source.max_unacked", def: "262144 (1048576 when the raw anchor is kind iceberg)", sets: "pipeline.Options.MaxUnacked (every source kind); pulsar.Options.MaxUnacked", yaml: "source: {max_unacked: 999}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 999, b.pulsar.MaxUnacked)
			require.Equal(t, 999, b.worker.MaxUnacked)
			g := buildKeys(t, "generator", "source: {max_unacked: 998}")
			require.Equal(t, 998, g.worker.MaxUnacked)
		}},
	{key: "source.dead_letter_topic", def: "none (rejected records are counted and dropped)", sets: "pulsar.Options.DeadLetterTopic", yaml: "source: {dead_letter_topic: dlq}",
		check: func(t *testing.T, b *built) { require.Equal(t, "dlq", b.pulsar.DeadLetterTopic) }},
	{key: "source.generator.seed", def: "1", sets: "gen.Options.Seed", base: "generator", yaml: "source: {generator: {seed: 42}}",
		check: func(t *testing.T, b *built) { require.EqualValues(t, 42, b.gen.Seed) }},
	{key: "source.generator.partitions", def: "4", sets: "gen.Options.Partitions", base: "generator", yaml: "source: {generator: {partitions: 9}}",
		check: func(t *testing.T, b *built) { require.Equal(t, 9, b.gen.Partitions) }},
	{key: "source.generator.records", def: "1000000 (0 = unbounded)", sets: "gen.Options.Records", base: "generator", yaml: "source: {generator: {records: 0}}",
		check: func(t *testing.T, b *built) { require.Zero(t, b.gen.Records, "an explicit 0 means unbounded") }},
	{key: "source.generator.rate", def: "0 (unlimited)", sets: "gen.Options.Rate", base: "generator", yaml: "source: {generator: {rate: 12.5}}",
		check: func(t *testing.T, b *built) { require.Equal(t, 12.5, b.gen.Rate) }},
	{key: "source.generator.payload_size", def: "256B", sets: "gen.Options.PayloadSize", base: "generator", yaml: "source: {generator: {payload_size: 1KiB}}",
		check: func(t *testing.T, b *built) { require.Equal(t, 1024, b.gen.PayloadSize) }},
	{key: "source.generator.malformed_fraction", def: "0", sets: "gen.Options.MalformedFraction", base: "generator", yaml: "source: {generator: {mode: json, malformed_fraction: 0.25}}",
		check: func(t *testing.T, b *built) { require.Equal(t, 0.25, b.gen.MalformedFraction) }},
	{key: "source.generator.mode", def: "raw", sets: "gen.Options.Mode", base: "generator", yaml: "source: {generator: {mode: json}}",
		check: func(t *testing.T, b *built) { require.Equal(t, gen.ModeJSON, b.gen.Mode) }},

	// schema
	{key: "schema.mode", def: "raw", sets: "batch.AssemblerOptions.Mode (json: ModeJSON with IncludeMeta; pulsar: ModeDecoded with IncludeMeta, and pulsar.Options.Schemas)", yaml: "schema: {mode: json, fields: [{name: a, type: int8}]}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, batch.ModeJSON, b.asm.Mode)
			require.True(t, b.asm.IncludeMeta)
			p := buildKeys(t, "pulsar", "schema: {mode: pulsar, registry_url: 'http://127.0.0.1:1'}")
			require.Equal(t, batch.ModeDecoded, p.asm.Mode)
			require.True(t, p.asm.IncludeMeta)
			require.NotNil(t, p.pulsar.Schemas)
			require.Nil(t, b.pulsar.Schemas, "only mode pulsar resolves schemas")
		}},
	{key: "schema.registry_url", def: "(source.admin_url)", sets: "the registry pulsar.Options.Schemas reads (internal/pulsarschema.Registry)",
		check: func(t *testing.T, b *built) {
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = append(asked, r.URL.Path+" "+r.Header.Get("Authorization"))
				_, _ = w.Write([]byte(`{"version":3,"type":"INT64","data":"","properties":{}}`))
			}))
			defer srv.Close()
			p := buildKeys(t, "pulsar", "schema: {mode: pulsar, registry_url: '"+srv.URL+"'}\nsource: {auth: {token_env: PULSAR_TOKEN}}")
			rs, err := p.pulsar.Schemas(context.Background(), "persistent://t/n/orders-partition-1", []byte{0, 0, 0, 0, 0, 0, 0, 3})
			require.NoError(t, err)
			require.Equal(t, "value", rs.Schema().Field(0).Name)
			require.Equal(t, []string{"/admin/v2/schemas/t/n/orders/schema/3 Bearer pulsar-secret"}, asked)
			// Without it, the registry is source.admin_url's.
			asked = nil
			p = buildKeys(t, "pulsar", "schema: {mode: pulsar}\nsource: {admin_url: '"+srv.URL+"', auth: {token_env: PULSAR_TOKEN}}")
			_, err = p.pulsar.Schemas(context.Background(), "persistent://t/n/orders-partition-1", []byte{0, 0, 0, 0, 0, 0, 0, 3})
			require.NoError(t, err)
			require.Equal(t, []string{"/admin/v2/schemas/t/n/orders/schema/3 Bearer pulsar-secret"}, asked)
			// A token_file is reread on every request (as offsets reset's
			// client does): a rotated token is sent from the next request on.
			asked = nil
			f := buildKeys(t, "pulsar", "schema: {mode: pulsar, registry_url: '"+srv.URL+"'}\nsource: {auth: {token_file: '${TOKEN_FILE}'}}")
			_, err = f.pulsar.Schemas(context.Background(), "t/n/orders", []byte{0, 0, 0, 0, 0, 0, 0, 3})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f.tokenFile, []byte("rotated-secret\n"), 0o600))
			_, err = f.pulsar.Schemas(context.Background(), "t/n/orders", []byte{0, 0, 0, 0, 0, 0, 0, 4})
			require.NoError(t, err)
			require.Equal(t, []string{"/admin/v2/schemas/t/n/orders/schema/3 Bearer file-secret", "/admin/v2/schemas/t/n/orders/schema/4 Bearer rotated-secret"}, asked)
		}},
	{key: "schema.json_bytes", def: "auto", sets: "pulsarschema.RegistryOptions.JSONBytes (auto: text for the Python client's registrations, base64 otherwise)",
		check: func(t *testing.T, b *built) {
			// A JSON schema registered as the Python client does (laid out by
			// json.dumps(indent=True)) with one bytes field.
			def := "{\n \"type\": \"record\",\n \"name\": \"R\",\n \"fields\": [\n  {\n   \"name\": \"b\",\n   \"type\": \"bytes\"\n  }\n ]\n}"
			body, err := json.Marshal(map[string]any{"version": 0, "type": "JSON", "data": def, "properties": map[string]string{}})
			require.NoError(t, err)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
			defer srv.Close()
			decode := func(mode string) (string, error) {
				yml := "schema: {mode: pulsar, registry_url: '" + srv.URL + "'}"
				if mode != "" {
					yml = "schema: {mode: pulsar, registry_url: '" + srv.URL + "', json_bytes: " + mode + "}"
				}
				p := buildKeys(t, "pulsar", yml)
				rs, err := p.pulsar.Schemas(context.Background(), "t/n/x", []byte{0, 0, 0, 0, 0, 0, 0, 0})
				require.NoError(t, err)
				rb := array.NewRecordBuilder(memory.DefaultAllocator, rs.Schema())
				defer rb.Release()
				d, err := rs.NewRowDecoder(rb, 0)
				require.NoError(t, err)
				if _, err := d.Append([]byte(`{"b": "aGk="}`)); err != nil {
					return "", err
				}
				r := rb.NewRecordBatch()
				defer r.Release()
				return string(r.Column(0).(*array.Binary).Value(0)), nil
			}
			for mode, want := range map[string]string{"": "aGk=", "auto": "aGk=", "text": "aGk=", "base64": "hi"} {
				got, err := decode(mode)
				require.NoError(t, err, "json_bytes %q", mode)
				require.Equal(t, want, got, "json_bytes %q", mode)
			}
		}},
	{key: "schema.fields", def: "(required for json)", sets: "batch.AssemblerOptions.Schema (one column each)", yaml: "schema: {mode: json, fields: [{name: a, type: int8}, {name: b, type: string}]}",
		check: func(t *testing.T, b *built) { require.Equal(t, 2, b.asm.Schema.NumFields()) }},
	{key: "schema.fields[].name", def: "(required; list items: item)", sets: "arrow.Field.Name", yaml: "schema: {mode: json, fields: [{name: amount, type: int8}]}",
		check: func(t *testing.T, b *built) { require.Equal(t, "amount", b.asm.Schema.Field(0).Name) }},
	{key: "schema.fields[].type", def: "(required)", sets: "arrow.Field.Type", yaml: "schema: {mode: json, fields: [{name: a, type: date}]}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, arrow.FixedWidthTypes.Date32, b.asm.Schema.Field(0).Type)
		}},
	{key: "schema.fields[].nullable", def: "true", sets: "arrow.Field.Nullable", yaml: "schema: {mode: json, fields: [{name: a, type: int8, nullable: false}]}",
		check: func(t *testing.T, b *built) { require.False(t, b.asm.Schema.Field(0).Nullable) }},
	{key: "schema.fields[].fields", def: "(struct only)", sets: "arrow.StructType fields", yaml: "schema: {mode: json, fields: [{name: s, type: struct, fields: [{name: x, type: int8}]}]}",
		check: func(t *testing.T, b *built) {
			st := b.asm.Schema.Field(0).Type.(*arrow.StructType)
			require.Equal(t, "x", st.Field(0).Name)
		}},
	{key: "schema.fields[].items", def: "(list only)", sets: "arrow.ListType element", yaml: "schema: {mode: json, fields: [{name: l, type: list, items: {type: uint16}}]}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, arrow.PrimitiveTypes.Uint16, b.asm.Schema.Field(0).Type.(*arrow.ListType).Elem())
		}},
	{key: "schema.fields[].unit", def: "ms", sets: "arrow.TimestampType.Unit", yaml: "schema: {mode: json, fields: [{name: ts, type: timestamp, unit: ns}]}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, arrow.Nanosecond, b.asm.Schema.Field(0).Type.(*arrow.TimestampType).Unit)
		}},

	// batching
	{key: "batching.max_rows", def: "8192", sets: "batch.AssemblerOptions.MaxRows; pulsar.Options.ChannelSize (a batch's records wait in front of the source loop)", yaml: "batching: {max_rows: 77}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 77, b.asm.MaxRows)
			require.Equal(t, 77, b.pulsar.ChannelSize)
		}},
	{key: "batching.max_bytes", def: "8MiB", sets: "batch.AssemblerOptions.MaxBytes", yaml: "batching: {max_bytes: 3MiB}",
		check: func(t *testing.T, b *built) { require.Equal(t, 3<<20, b.asm.MaxBytes) }},
	{key: "batching.linger", def: "100ms", sets: "batch.AssemblerOptions.Linger", yaml: "batching: {linger: 7ms}",
		check: func(t *testing.T, b *built) { require.Equal(t, 7*time.Millisecond, b.asm.Linger) }},
	{key: "batching.linger_when_idle", def: "false", sets: "pipeline.Options.LingerWhenIdle", yaml: "batching: {linger_when_idle: true}",
		check: func(t *testing.T, b *built) { require.True(t, b.worker.LingerWhenIdle) }},

	// destinations: the base has raw (flight, raw_anchor) and zb (zerobus, secondary).
	{key: "destinations", def: "(required: at least one, exactly one raw_anchor)", sets: "pipeline.Options.Anchor and .Secondaries: one lane each",
		yaml: "destinations: [{}, {}, {name: zb2, kind: zerobus, role: secondary, endpoint: '127.0.0.1:9001', table: a.b.d}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "raw", b.anchor.Name)
			require.Len(t, b.secondaries, 2)
			require.Equal(t, "zb2", b.secondaries[1].Name)
		}},
	{key: "destinations[].name", def: "(required)", sets: "pipeline.Destination.Name (offset-store key, {destination} label)", yaml: "destinations: [{name: lake}, {name: table7}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "lake", b.anchor.Name)
			require.Equal(t, "table7", b.secondaries[0].Name)
		}},
	{key: "destinations[].kind", def: "(required)", sets: "the transport: flight.Options (flight), zerobus.Options (zerobus) or iceberg.Options (iceberg)",
		yaml: "destinations: [{}, {}, " + lake + "]",
		check: func(t *testing.T, b *built) {
			require.NotNil(t, b.dest("raw").Flight)
			require.NotNil(t, b.dest("zb").Zerobus)
			require.NotNil(t, b.dest("lake").Iceberg)
			require.Len(t, b.secondaries, 2)
		}},
	{key: "destinations[].role", def: "(required)", sets: "pipeline.Options.Anchor (raw_anchor) or .Secondaries", yaml: "destinations: [{role: secondary}, {role: raw_anchor}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "zb", b.anchor.Name)
			require.Equal(t, "raw", b.secondaries[0].Name)
		}},
	{key: "destinations[].endpoint", def: "(required)", sets: "flight.Options.Endpoint, zerobus.Options.Endpoint", yaml: "destinations: [{endpoint: 'f.example:1'}, {endpoint: 'z.example:2'}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "f.example:1", b.dest("raw").Flight.Endpoint)
			require.Equal(t, "z.example:2", b.dest("zb").Zerobus.Endpoint)
		}},
	{key: "destinations[].path", def: "[name] (flight only)", sets: "flight.Options.Path", yaml: "destinations: [{path: [a, b]}]",
		check: func(t *testing.T, b *built) { require.Equal(t, []string{"a", "b"}, b.dest("raw").Flight.Path) }},
	{key: "destinations[].table", def: "(required for zerobus; zerobus only)", sets: "zerobus.Options.Table", yaml: "destinations: [{}, {table: c.s.t}]",
		check: func(t *testing.T, b *built) { require.Equal(t, "c.s.t", b.dest("zb").Zerobus.Table) }},
	{key: "destinations[].mode", def: "ephemeral (zerobus only)", sets: "zerobus.Options.Mode", yaml: "destinations: [{}, {mode: flight}]",
		check: func(t *testing.T, b *built) { require.Equal(t, zerobus.ModeFlight, b.dest("zb").Zerobus.Mode) }},
	{key: "destinations[].tls.enabled", def: "false", sets: "flight.Options.TLS non-nil; zerobus.Options.TLS.Insecure false",
		yaml: "destinations: [{tls: {enabled: true}}, {tls: {enabled: true}}]",
		check: func(t *testing.T, b *built) {
			require.NotNil(t, b.dest("raw").Flight.TLS)
			require.False(t, b.dest("zb").Zerobus.TLS.Insecure)
			plain := buildKeys(t, "pulsar", "")
			require.Nil(t, plain.dest("raw").Flight.TLS)
			require.True(t, plain.dest("zb").Zerobus.TLS.Insecure)
		}},
	{key: "destinations[].tls.ca_file", def: "system roots", sets: "flight.TLSOptions.CAFile, zerobus.TLSOptions.CAFile",
		yaml: "destinations: [{tls: {enabled: true, ca_file: /f.pem}}, {tls: {enabled: true, ca_file: /z.pem}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "/f.pem", b.dest("raw").Flight.TLS.CAFile)
			require.Equal(t, "/z.pem", b.dest("zb").Zerobus.TLS.CAFile)
		}},
	{key: "destinations[].tls.cert_file", def: "none", sets: "flight.TLSOptions.CertFile, zerobus.TLSOptions.CertFile",
		yaml: "destinations: [{tls: {enabled: true, cert_file: /fc.pem, key_file: /fk.pem}}, {tls: {enabled: true, cert_file: /zc.pem, key_file: /zk.pem}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "/fc.pem", b.dest("raw").Flight.TLS.CertFile)
			require.Equal(t, "/zc.pem", b.dest("zb").Zerobus.TLS.CertFile)
		}},
	{key: "destinations[].tls.key_file", def: "none", sets: "flight.TLSOptions.KeyFile, zerobus.TLSOptions.KeyFile",
		yaml: "destinations: [{tls: {enabled: true, cert_file: /fc.pem, key_file: /fk.pem}}, {tls: {enabled: true, cert_file: /zc.pem, key_file: /zk.pem}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "/fk.pem", b.dest("raw").Flight.TLS.KeyFile)
			require.Equal(t, "/zk.pem", b.dest("zb").Zerobus.TLS.KeyFile)
		}},
	{key: "destinations[].tls.server_name", def: "the endpoint host", sets: "flight.TLSOptions.ServerName, zerobus.TLSOptions.ServerName",
		yaml: "destinations: [{tls: {enabled: true, server_name: f.internal}}, {tls: {enabled: true, server_name: z.internal}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "f.internal", b.dest("raw").Flight.TLS.ServerName)
			require.Equal(t, "z.internal", b.dest("zb").Zerobus.TLS.ServerName)
		}},
	{key: "destinations[].tls.insecure_skip_verify", def: "false", sets: "flight.TLSOptions.InsecureSkipVerify, zerobus.TLSOptions.InsecureSkipVerify",
		yaml: "destinations: [{tls: {enabled: true, insecure_skip_verify: true}}, {tls: {enabled: true, insecure_skip_verify: true}}]",
		check: func(t *testing.T, b *built) {
			require.True(t, b.dest("raw").Flight.TLS.InsecureSkipVerify)
			require.True(t, b.dest("zb").Zerobus.TLS.InsecureSkipVerify)
		}},
	{key: "destinations[].token_env", def: "none", sets: "flight.Options.Token, zerobus.Options.Token (the variable's value)",
		yaml: "destinations: [{token_env: RAW_TOKEN}, {token_env: ZB_TOKEN}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "raw-secret", b.dest("raw").Flight.Token)
			require.Equal(t, "zb-secret", b.dest("zb").Zerobus.Token)
		}},
	{key: "destinations[].compression", def: "none (flight, and zerobus mode flight only)", sets: "flight.Options.Compression, zerobus.Options.Compression",
		yaml: "destinations: [{compression: lz4}, {mode: flight, compression: zstd}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, flight.CompressionLZ4, b.dest("raw").Flight.Compression)
			require.Equal(t, zerobus.CompressionZstd, b.dest("zb").Zerobus.Compression)
		}},
	{key: "destinations[].max_message_size", def: "64MiB (flight), 10MiB (zerobus)", sets: "flight.Options.MaxMessageSize, zerobus.Options.MaxMessageSize",
		yaml: "destinations: [{max_message_size: 1MiB}, {max_message_size: 2MiB}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 1<<20, b.dest("raw").Flight.MaxMessageSize)
			require.Equal(t, 2<<20, b.dest("zb").Zerobus.MaxMessageSize)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, flight.DefaultMaxMessageSize, def.dest("raw").Flight.MaxMessageSize, "the config's default is the sink's")
			require.Equal(t, zerobus.DefaultMaxMessageSize, def.dest("zb").Zerobus.MaxMessageSize)
		}},
	{key: "destinations[].silence_timeout", def: "30s (flight), 60s (zerobus)", sets: "flight.Options.AckTimeout, zerobus.Options.AckTimeout (the sinks' watchdog)",
		yaml: "destinations: [{silence_timeout: 11s}, {silence_timeout: 12s}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 11*time.Second, b.dest("raw").Flight.AckTimeout)
			require.Equal(t, 12*time.Second, b.dest("zb").Zerobus.AckTimeout)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, flight.DefaultAckTimeout, def.dest("raw").Flight.AckTimeout)
			require.Equal(t, zerobus.DefaultAckTimeout, def.dest("zb").Zerobus.AckTimeout)
		}},
	{key: "destinations[].iceberg.catalog.type", def: "sql", sets: "iceberg.Options.Catalog.Type",
		yaml: "destinations: [{}, {}, " + lakeWith("catalog: {type: rest, uri: 'http://cat.example:8181'}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, iceberg.CatalogREST, b.dest("lake").Iceberg.Catalog.Type)
			require.Equal(t, iceberg.CatalogSQL, buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]").dest("lake").Iceberg.Catalog.Type)
		}},
	{key: "destinations[].iceberg.catalog.uri", def: "(sql: <store.dir>.iceberg/catalog.db; rest: required)", sets: "iceberg.Options.Catalog.URI (a sql catalog's path made absolute)",
		yaml: "destinations: [{}, {}, " + lakeWith("catalog: {uri: rel/cat.db}") + "]",
		check: func(t *testing.T, b *built) {
			wd, _ := os.Getwd()
			require.Equal(t, filepath.Join(wd, "rel/cat.db"), b.dest("lake").Iceberg.Catalog.URI)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, "/tmp/offsets.iceberg/catalog.db", def.dest("lake").Iceberg.Catalog.URI)
		}},
	{key: "destinations[].iceberg.catalog.name", def: "thalweg", sets: "iceberg.Options.Catalog.Name",
		yaml:  "destinations: [{}, {}, " + lakeWith("catalog: {name: prod}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "prod", b.dest("lake").Iceberg.Catalog.Name) }},
	{key: "destinations[].iceberg.catalog.token_env", def: "none (rest only)", sets: "iceberg.Options.Catalog.Token (the variable's value)",
		yaml:  "destinations: [{}, {}, " + lakeWith("catalog: {type: rest, uri: 'http://cat.example:8181', token_env: RAW_TOKEN}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "raw-secret", b.dest("lake").Iceberg.Catalog.Token) }},
	{key: "destinations[].iceberg.catalog.credential_env", def: "none (rest only)", sets: "iceberg.Options.Catalog.Credential (the variable's value)",
		yaml:  "destinations: [{}, {}, " + lakeWith("catalog: {type: rest, uri: 'http://cat.example:8181', credential_env: ZB_TOKEN}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "zb-secret", b.dest("lake").Iceberg.Catalog.Credential) }},
	{key: "destinations[].iceberg.catalog.properties", def: "none", sets: "iceberg.Options.Catalog.Properties",
		yaml: "destinations: [{}, {}, " + lakeWith("catalog: {properties: {prefix: p1}}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, map[string]string{"prefix": "p1"}, b.dest("lake").Iceberg.Catalog.Properties)
		}},
	{key: "destinations[].iceberg.warehouse", def: "(sql: <store.dir>.iceberg/warehouse; rest: the server's)", sets: "iceberg.Options.Warehouse (a local path made absolute)",
		yaml: "destinations: [{}, {}, " + lakeWith("warehouse: 's3://bucket/wh'") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "s3://bucket/wh", b.dest("lake").Iceberg.Warehouse)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, "/tmp/offsets.iceberg/warehouse", def.dest("lake").Iceberg.Warehouse)
		}},
	{key: "destinations[].iceberg.table", def: "(required for iceberg)",
		sets: "iceberg.Options.Table; a template naming {topic}, {tenant} or {namespace} opens iceberg.OpenTables: a table per topic",
		yaml: "destinations: [{}, {}, " + lake + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "raw.events", b.dest("lake").Iceberg.Table)
			_, tbl, err := destination(b.cfg, &b.cfg.Destinations[2], b.env, b.log, nil)
			require.NoError(t, err)
			require.IsType(t, &iceberg.Table{}, tbl)
			require.NoError(t, tbl.Close())
			tb := buildKeys(t, "pulsar", "destinations: [{}, {}, {name: lake, kind: iceberg, role: secondary, iceberg: {table: 'raw.{topic}'}}]")
			_, tbl, err = destination(tb.cfg, &tb.cfg.Destinations[2], tb.env, tb.log, nil)
			require.NoError(t, err)
			require.IsType(t, &iceberg.Tables{}, tbl)
			require.NoError(t, tbl.Close())
		}},
	{key: "destinations[].iceberg.s3.endpoint", def: "none (AWS S3)", sets: "iceberg.Options.S3.Endpoint",
		yaml: "destinations: [{}, {}, " + lakeWith("s3: {endpoint: 'http://127.0.0.1:9000'}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "http://127.0.0.1:9000", b.dest("lake").Iceberg.S3.Endpoint)
		}},
	{key: "destinations[].iceberg.s3.region", def: "none (AWS_REGION or the shared config)", sets: "iceberg.Options.S3.Region",
		yaml:  "destinations: [{}, {}, " + lakeWith("s3: {region: eu-west-1}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "eu-west-1", b.dest("lake").Iceberg.S3.Region) }},
	{key: "destinations[].iceberg.s3.path_style", def: "false without s3.endpoint, true with one", sets: "iceberg.Options.S3.PathStyle",
		yaml: "destinations: [{}, {}, " + lakeWith("s3: {endpoint: 'http://127.0.0.1:9000', path_style: false}") + "]",
		check: func(t *testing.T, b *built) {
			require.False(t, *b.dest("lake").Iceberg.S3.PathStyle)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lakeWith("s3: {endpoint: 'http://127.0.0.1:9000'}")+"]")
			require.True(t, *def.dest("lake").Iceberg.S3.PathStyle)
		}},
	{key: "destinations[].iceberg.s3.access_key_id", def: "the AWS credential chain", sets: "iceberg.Options.S3.AccessKeyID",
		yaml:  "destinations: [{}, {}, " + lakeWith("s3: {access_key_id: AKID, secret_access_key_env: ZB_TOKEN}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "AKID", b.dest("lake").Iceberg.S3.AccessKeyID) }},
	{key: "destinations[].iceberg.s3.secret_access_key_env", def: "none (with access_key_id)", sets: "iceberg.Options.S3.SecretAccessKey (the variable's value)",
		yaml:  "destinations: [{}, {}, " + lakeWith("s3: {access_key_id: AKID, secret_access_key_env: ZB_TOKEN}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "zb-secret", b.dest("lake").Iceberg.S3.SecretAccessKey) }},
	{key: "destinations[].iceberg.s3.session_token_env", def: "none", sets: "iceberg.Options.S3.SessionToken (the variable's value)",
		yaml:  "destinations: [{}, {}, " + lakeWith("s3: {access_key_id: AKID, secret_access_key_env: ZB_TOKEN, session_token_env: RAW_TOKEN}") + "]",
		check: func(t *testing.T, b *built) { require.Equal(t, "raw-secret", b.dest("lake").Iceberg.S3.SessionToken) }},
	{key: "destinations[].iceberg.commit_interval", def: "1s", sets: "iceberg.Options.CommitInterval",
		yaml: "destinations: [{}, {}, " + lakeWith("commit_interval: 3s") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 3*time.Second, b.dest("lake").Iceberg.CommitInterval)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultCommitInterval, def.dest("lake").Iceberg.CommitInterval)
		}},
	{key: "destinations[].iceberg.target_file_size", def: "128MiB", sets: "iceberg.Options.TargetFileSize",
		yaml: "destinations: [{}, {}, " + lakeWith("target_file_size: 1MiB") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, int64(1<<20), b.dest("lake").Iceberg.TargetFileSize)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultTargetFileSize, def.dest("lake").Iceberg.TargetFileSize)
		}},
	{key: "destinations[].iceberg.partition_by", def: "none (unpartitioned)", sets: "iceberg.Options.PartitionBy",
		yaml: "destinations: [{}, {}, " + lakeWith(`partition_by: ["day(publish_time)", "bucket(16, key)"]`) + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, []string{"day(publish_time)", "bucket(16, key)"}, b.dest("lake").Iceberg.PartitionBy)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Empty(t, def.dest("lake").Iceberg.PartitionBy)
		}},
	{key: "destinations[].iceberg.maintenance.enabled", def: "true", sets: "iceberg.Options.Maintenance.Disabled (negated)",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {enabled: false}") + "]",
		check: func(t *testing.T, b *built) {
			require.True(t, b.dest("lake").Iceberg.Maintenance.Disabled)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.False(t, def.dest("lake").Iceberg.Maintenance.Disabled)
		}},
	{key: "destinations[].iceberg.maintenance.interval", def: "1m0s", sets: "iceberg.Options.Maintenance.Interval",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {interval: 5m}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 5*time.Minute, b.dest("lake").Iceberg.Maintenance.Interval)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultMaintenanceInterval, def.dest("lake").Iceberg.Maintenance.Interval)
		}},
	{key: "destinations[].iceberg.maintenance.snapshot_max_age", def: "10m0s (or 10 commit intervals when longer)", sets: "iceberg.Options.Maintenance.SnapshotMaxAge",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {snapshot_max_age: 2h}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 2*time.Hour, b.dest("lake").Iceberg.Maintenance.SnapshotMaxAge)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultSnapshotMaxAge, def.dest("lake").Iceberg.Maintenance.SnapshotMaxAge)
			long := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lakeWith("commit_interval: 5m")+"]")
			require.Equal(t, 50*time.Minute, long.dest("lake").Iceberg.Maintenance.SnapshotMaxAge)
		}},
	{key: "destinations[].iceberg.maintenance.min_snapshots", def: "10", sets: "iceberg.Options.Maintenance.MinSnapshots",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {min_snapshots: 3}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 3, b.dest("lake").Iceberg.Maintenance.MinSnapshots)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultMinSnapshots, def.dest("lake").Iceberg.Maintenance.MinSnapshots)
		}},
	{key: "destinations[].iceberg.maintenance.orphan_age", def: "24h0m0s (or twice snapshot_max_age when longer)", sets: "iceberg.Options.Maintenance.OrphanAge",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {orphan_age: 72h}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 72*time.Hour, b.dest("lake").Iceberg.Maintenance.OrphanAge)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultOrphanAge, def.dest("lake").Iceberg.Maintenance.OrphanAge)
		}},
	{key: "destinations[].iceberg.maintenance.orphan_interval", def: "1h0m0s", sets: "iceberg.Options.Maintenance.OrphanInterval",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {orphan_interval: 6h}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 6*time.Hour, b.dest("lake").Iceberg.Maintenance.OrphanInterval)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultOrphanInterval, def.dest("lake").Iceberg.Maintenance.OrphanInterval)
		}},
	{key: "destinations[].iceberg.maintenance.timeout", def: "30s", sets: "iceberg.Options.Maintenance.Timeout",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {timeout: 10s}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 10*time.Second, b.dest("lake").Iceberg.Maintenance.Timeout)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultMaintenanceTimeout, def.dest("lake").Iceberg.Maintenance.Timeout)
		}},
	{key: "destinations[].iceberg.maintenance.compact_min_files", def: "5", sets: "iceberg.Options.Maintenance.CompactMinFiles (0 becomes -1: off)",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {compact_min_files: 0}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, -1, b.dest("lake").Iceberg.Maintenance.CompactMinFiles)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, iceberg.DefaultCompactMinFiles, def.dest("lake").Iceberg.Maintenance.CompactMinFiles)
		}},
	{key: "destinations[].iceberg.maintenance.lease_ttl", def: "3m0s (three intervals, at least 30s and three commit intervals)", sets: "iceberg.Options.Maintenance.LeaseTTL",
		yaml: "destinations: [{}, {}, " + lakeWith("maintenance: {lease_ttl: 45s}") + "]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 45*time.Second, b.dest("lake").Iceberg.Maintenance.LeaseTTL)
			def := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]")
			require.Equal(t, 3*iceberg.DefaultMaintenanceInterval, def.dest("lake").Iceberg.Maintenance.LeaseTTL)
		}},
	{key: "destinations[].lane.capacity", def: "4096", sets: "pipeline.LaneOptions.Capacity", yaml: "destinations: [{lane: {capacity: 5}}, {lane: {capacity: 6}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 5, b.anchor.Lane.Capacity)
			require.Equal(t, 6, b.secondaries[0].Lane.Capacity)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, lanes.DefaultCapacity, def.anchor.Lane.Capacity, "the config's default is the lane's")
		}},
	{key: "destinations[].lane.max_bytes", def: "512MiB", sets: "pipeline.LaneOptions.MaxBytes (and the secondary queue's byte bound, twice it)",
		yaml: "destinations: [{lane: {max_bytes: 5MiB}}, {lane: {max_bytes: 6MiB}}]",
		check: func(t *testing.T, b *built) {
			require.EqualValues(t, 5<<20, b.anchor.Lane.MaxBytes)
			require.EqualValues(t, 6<<20, b.secondaries[0].Lane.MaxBytes)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, lanes.DefaultMaxBytes, def.anchor.Lane.MaxBytes, "the config's default is the lane's")
		}},
	{key: "destinations[].lane.ack_timeout", def: "30s", sets: "pipeline.LaneOptions.AckTimeout", yaml: "destinations: [{lane: {ack_timeout: 3s}}, {lane: {ack_timeout: 4s}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 3*time.Second, b.anchor.Lane.AckTimeout)
			require.Equal(t, 4*time.Second, b.secondaries[0].Lane.AckTimeout)
			require.Equal(t, config.DefaultFlightSilenceTimeout, b.dest("raw").Flight.AckTimeout, "the lane's timeout is not the sink's watchdog")
		}},
	{key: "destinations[].lane.max_retries", def: "5 (0 = rebuild at once)", sets: "pipeline.LaneOptions.MaxRetries (an explicit 0 becomes -1: poison on the first failure)",
		yaml: "destinations: [{lane: {max_retries: 0}}, {lane: {max_retries: 9}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, -1, b.anchor.Lane.MaxRetries, "0 must mean rebuild at once, not the lane's default")
			require.Equal(t, 9, b.secondaries[0].Lane.MaxRetries)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, lanes.DefaultMaxRetries, def.anchor.Lane.MaxRetries)
		}},
	{key: "destinations[].lane.permanent_budget", def: "1m0s (negative = never give up)", sets: "lanes.Options.PermanentBudget",
		yaml: "destinations: [{lane: {permanent_budget: 7s}}, {lane: {permanent_budget: -1s}}]",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 7*time.Second, b.anchor.Lane.PermanentBudget)
			require.Equal(t, -time.Second, b.secondaries[0].Lane.PermanentBudget)
			def := buildKeys(t, "pulsar", "")
			require.Equal(t, lanes.DefaultPermanentBudget, def.anchor.Lane.PermanentBudget)
		}},

	// store, shutdown, metrics, log
	{key: "store.dir", def: "(required)", sets: "offsetstore.Open's directory", yaml: "store: {dir: /srv/offsets}",
		check: func(t *testing.T, b *built) { require.Equal(t, "/srv/offsets", b.worker.StoreDir) }},
	{key: "store.teardown_timeout", def: "10s", sets: "offsetstore.Options.TeardownTimeout", yaml: "store: {teardown_timeout: 2s}",
		check: func(t *testing.T, b *built) { require.Equal(t, 2*time.Second, b.worker.Store.TeardownTimeout) }},
	{key: "shutdown.drain_timeout", def: "30s", sets: "pipeline.Options.DrainTimeout", yaml: "shutdown: {drain_timeout: 4s}",
		check: func(t *testing.T, b *built) { require.Equal(t, 4*time.Second, b.worker.DrainTimeout) }},
	{key: "metrics.listen", def: "127.0.0.1:9464 (\"\" disables)", sets: "the listener of /metrics, /healthz, /readyz", yaml: "metrics: {listen: '127.0.0.1:0'}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "127.0.0.1:0", b.worker.MetricsListen)
			off := buildKeys(t, "pulsar", `metrics: {listen: ""}`)
			require.Empty(t, off.worker.MetricsListen, "an explicit empty string disables the endpoint")
		}},
	{key: "metrics.pprof", def: "false", sets: "/debug/pprof/ on the metrics listener (workerOpts.Pprof)", yaml: "metrics: {pprof: true}",
		check: func(t *testing.T, b *built) {
			require.True(t, b.worker.Pprof)
			require.Equal(t, http.StatusOK, pprofStatus(t, b))
			require.Equal(t, http.StatusNotFound, pprofStatus(t, buildKeys(t, "pulsar", "")), "off by default")
		}},
	{key: "metrics.otlp.endpoint", def: "none (export off)", sets: "otlpmetric{grpc,http}.WithEndpoint", yaml: "metrics: {otlp: {endpoint: '127.0.0.1:4317'}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, "127.0.0.1:4317", b.worker.OTLP.Endpoint)
			sink := newOTLPSink()
			addr := startOTLP(t, "grpc", sink)
			require.NoError(t, otlpFlush(t, buildKeys(t, "pulsar", "metrics: {otlp: {endpoint: '"+addr+"', insecure: true}}")))
			require.Positive(t, sink.count(), "nothing exported to metrics.otlp.endpoint")
		}},
	{key: "metrics.otlp.protocol", def: "grpc", sets: "otlpmetrichttp (http) or otlpmetricgrpc (grpc)", yaml: "metrics: {otlp: {endpoint: '127.0.0.1:4318', protocol: http}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, config.OTLPHTTP, b.worker.OTLP.Protocol)
			sink := newOTLPSink()
			addr := startOTLP(t, "http", sink)
			require.NoError(t, otlpFlush(t, buildKeys(t, "pulsar", "metrics: {otlp: {endpoint: '"+addr+"', protocol: http, insecure: true}}")))
			require.Positive(t, sink.count(), "nothing exported over OTLP/HTTP")
		}},
	{key: "metrics.otlp.insecure", def: "false (TLS)", sets: "otlpmetric{grpc,http}.WithInsecure", yaml: "metrics: {otlp: {endpoint: '127.0.0.1:4317', insecure: true}}",
		check: func(t *testing.T, b *built) {
			require.True(t, b.worker.OTLP.Insecure)
			sink := newOTLPSink()
			addr := startOTLP(t, "http", sink)
			tls := buildKeys(t, "pulsar", "metrics: {otlp: {endpoint: '"+addr+"', protocol: http, interval: 1s}}")
			require.NoError(t, otlpFlush(t, tls)) // the exporter logs its failures instead of failing the reader
			require.Zero(t, sink.count(), "without insecure the exporter must speak TLS, which the plaintext collector refuses")
			require.Contains(t, tls.logOut.String(), "OTLP metric export failing")
		}},
	{key: "metrics.otlp.headers", def: "none", sets: "otlpmetric{grpc,http}.WithHeaders", yaml: "metrics: {otlp: {endpoint: '127.0.0.1:4317', headers: {x-tenant: t7}}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, map[string]string{"x-tenant": "t7"}, b.worker.OTLP.Headers)
			sink := newOTLPSink()
			addr := startOTLP(t, "grpc", sink)
			require.NoError(t, otlpFlush(t, buildKeys(t, "pulsar", "metrics: {otlp: {endpoint: '"+addr+"', insecure: true, headers: {x-tenant: t7}}}")))
			require.True(t, sink.tenant("t7"), "the header did not reach the collector")
		}},
	{key: "metrics.otlp.interval", def: "30s", sets: "sdkmetric.WithInterval of the OTLP reader", yaml: "metrics: {otlp: {endpoint: '127.0.0.1:4317', interval: 150ms}}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 150*time.Millisecond, b.worker.OTLP.Interval)
			sink := newOTLPSink()
			addr := startOTLP(t, "grpc", sink)
			mp := otlpProvider(t, buildKeys(t, "pulsar", "metrics: {otlp: {endpoint: '"+addr+"', insecure: true, interval: 150ms}}"))
			defer func() { _ = mp.Shutdown(context.Background()) }()
			testenv.WaitFor(t, 3*time.Second, "2 exports at a 150ms interval without a flush", func() bool { return sink.count() >= 2 })
		}},
	{key: "log.stats_interval", def: "30s (0 disables)", sets: "the period of the stats line (startProgress)", yaml: "log: {stats_interval: 7s}",
		check: func(t *testing.T, b *built) {
			require.Equal(t, 7*time.Second, b.worker.StatsInterval)
			off := buildKeys(t, "pulsar", "log: {stats_interval: 0s}")
			require.Zero(t, off.worker.StatsInterval, "an explicit 0 disables the stats line")
		}},
	{key: "log.level", def: "info", sets: "slog.HandlerOptions.Level", yaml: "log: {level: debug}",
		check: func(t *testing.T, b *built) {
			b.log.Debug("probe-debug")
			require.Contains(t, b.logOut.String(), "probe-debug")
		}},
	{key: "log.format", def: "text", sets: "slog.JSONHandler (json) or slog.TextHandler (text)", yaml: "log: {format: json}",
		check: func(t *testing.T, b *built) {
			b.log.Info("probe-json")
			require.True(t, strings.HasPrefix(b.logOut.String(), `{"time":`), "%s", b.logOut.String())
		}},
}

// built is everything the worker's mapping functions make of one config.
type built struct {
	cfg         *config.Config
	env         *cliEnv
	log         *slog.Logger
	logOut      *bytes.Buffer
	tokenFile   string
	worker      workerOpts
	asm         batch.AssemblerOptions
	gen         gen.Options
	pulsar      pulsar.Options
	admin       pulsaradmin.Options // thalweg offsets reset
	anchor      pipeline.Destination
	secondaries []pipeline.Destination
	dests       map[string]destOpts
}

func (b *built) dest(name string) destOpts {
	d, ok := b.dests[name]
	if !ok {
		panic("no destination " + name)
	}
	return d
}

var keyBases = map[string]string{
	"pulsar": `
source:
  url: pulsar://127.0.0.1:6650
  topics: [events]
  subscription: {name: thalweg}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c}
store: {dir: /tmp/offsets}
`,
	"generator": `
source: {kind: generator}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: "127.0.0.1:8815"}
  - {name: zb, kind: zerobus, role: secondary, endpoint: "127.0.0.1:9000", table: a.b.c}
store: {dir: /tmp/offsets}
`,
}

// buildKeys parses the base document with fragment merged in and runs
// every mapping function the worker runs on it.
func buildKeys(t *testing.T, base, fragment string) *built {
	t.Helper()
	var doc, over any
	require.NoError(t, yaml.Unmarshal([]byte(keyBases[base]), &doc))
	require.NoError(t, yaml.Unmarshal([]byte(fragment), &over))
	text, err := yaml.Marshal(mergeDoc(doc, over))
	require.NoError(t, err)

	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("file-secret\n"), 0o600))
	vars := map[string]string{"PULSAR_TOKEN": "pulsar-secret", "RAW_TOKEN": "raw-secret", "ZB_TOKEN": "zb-secret", "TOKEN_FILE": tokenFile}
	cfg, err := config.Parse(text, func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err, "%s", text)

	b := &built{cfg: cfg, logOut: &bytes.Buffer{}, tokenFile: tokenFile, dests: map[string]destOpts{}}
	b.env = &cliEnv{stdout: b.logOut, stderr: b.logOut, getenv: func(k string) string { return vars[k] }}
	b.log = newLogger(cfg.Log, b.env)
	b.worker = workerOptions(cfg)
	b.asm, err = assemblerOptions(cfg)
	require.NoError(t, err)
	switch cfg.Source.Kind {
	case config.SourceGenerator:
		b.gen = generatorOptions(cfg)
	case config.SourcePulsar:
		b.pulsar, err = pulsarOptions(cfg, nil, nil, b.env, b.log)
		require.NoError(t, err)
		b.admin, err = adminOptions(cfg, b.env)
		require.NoError(t, err)
	}
	var tables map[string]icebergTables
	b.anchor, b.secondaries, tables, err = destinations(cfg, b.env, b.log, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, tbl := range tables {
			require.NoError(t, tbl.Close())
		}
	})
	for i := range cfg.Destinations {
		d := &cfg.Destinations[i]
		b.dests[d.Name], err = destinationOptions(cfg, d, b.env, b.log)
		require.NoError(t, err)
	}
	return b
}

// mergeDoc merges over into base: mappings key by key, lists element by
// element, anything else replaced.
func mergeDoc(base, over any) any {
	switch o := over.(type) {
	case nil:
		return base
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return o
		}
		for k, v := range o {
			b[k] = mergeDoc(b[k], v)
		}
		return b
	case []any:
		b, ok := base.([]any)
		if !ok {
			return o
		}
		for i, v := range o {
			if i < len(b) {
				b[i] = mergeDoc(b[i], v)
			} else {
				b = append(b, v)
			}
		}
		return b
	}
	return over
}

// Each key reaches the option it sets.
func TestConfigKeyReachesItsOption(t *testing.T) {
	for _, kc := range keyCases {
		t.Run(kc.key, func(t *testing.T) {
			base := kc.base
			if base == "" {
				base = "pulsar"
			}
			kc.check(t, buildKeys(t, base, kc.yaml))
		})
	}
}

// Every key of the config structs has a case in keyCases, and every case
// names a key that exists.
func TestEveryKeyHasAMappingTest(t *testing.T) {
	keys := configKeys(reflect.TypeFor[config.Config](), "", map[reflect.Type]bool{})
	have := map[string]bool{}
	for _, kc := range keyCases {
		require.False(t, have[kc.key], "%s has two cases", kc.key)
		have[kc.key] = true
	}
	for _, k := range keys {
		if !have[k] {
			t.Errorf("config key %s has no case in keyCases (configmap_test.go): add one that sets it and checks the option it reaches", k)
		}
		delete(have, k)
	}
	for k := range have {
		t.Errorf("keyCases has %s, which is not a config key", k)
	}
}

// configKeys lists the leaf keys under t. A struct that contains itself
// (schema fields) is listed once, its recursive members as leaves.
func configKeys(t reflect.Type, prefix string, open map[reflect.Type]bool) []string {
	open[t] = true
	defer delete(open, t)
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		elem := ft
		if ft.Kind() == reflect.Slice {
			elem = ft.Elem()
		}
		switch {
		case elem.Kind() != reflect.Struct || open[elem]:
			out = append(out, key)
		case ft.Kind() == reflect.Slice:
			out = append(out, key) // the list itself
			out = append(out, configKeys(elem, key+"[]", open)...)
		default:
			out = append(out, configKeys(elem, key, open)...)
		}
	}
	return out
}

// docs/configuration.md is generated from keyCases: go test -run
// TestConfigurationDoc ./cmd/thalweg -update rewrites it.
func TestConfigurationDoc(t *testing.T) {
	want := renderConfigurationDoc()
	const path = "../../docs/configuration.md"
	if *updateDocs {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "docs/configuration.md is out of date: go test ./cmd/thalweg -run TestConfigurationDoc -update")
}

func renderConfigurationDoc() string {
	var b strings.Builder
	b.WriteString(`# Configuration keys

Every key of the pipeline configuration (` + "`thalweg run --config`" + `), its default,
and the option of the component it sets. The worker's mapping is
` + "`cmd/thalweg/configmap.go`" + `; this table is generated from its test
(` + "`go test ./cmd/thalweg -run TestConfigurationDoc -update`" + `), which also checks
that every key reaches its option, so the two cannot drift apart. An annotated
example with every key is [` + "`testdata/configs/full.yaml`" + `](../testdata/configs/full.yaml);
the loading rules are in [operations.md](operations.md#configuration).

A key that is absent, or written with no value, keeps its default; an explicit
zero keeps its documented meaning (` + "`lane.max_retries: 0`" + ` rebuilds at once,
` + "`generator.records: 0`" + ` is unbounded, ` + "`metrics.listen: \"\"`" + ` disables the endpoint).
A key the selected source kind or destination kind does not use is an error.
` + "`[]`" + ` marks a list element.
`)
	section := ""
	for _, kc := range sortedCases() {
		top, _, _ := strings.Cut(kc.key, ".")
		top = strings.TrimSuffix(top, "[]")
		if top != section {
			section = top
			fmt.Fprintf(&b, "\n## %s\n\n| key | default | sets |\n|---|---|---|\n", section)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", kc.key, escapeCell(kc.def), escapeCell(kc.sets))
	}
	return b.String()
}

// sortedCases keeps the table's order (the structs' order) but groups the
// sections in the order of the config file.
func sortedCases() []keyCase {
	order := map[string]int{}
	for i, s := range []string{"source", "schema", "batching", "destinations", "store", "shutdown", "metrics", "log"} {
		order[s] = i
	}
	out := append([]keyCase(nil), keyCases...)
	sort.SliceStable(out, func(i, j int) bool {
		si, _, _ := strings.Cut(out[i].key, ".")
		sj, _, _ := strings.Cut(out[j].key, ".")
		return order[strings.TrimSuffix(si, "[]")] < order[strings.TrimSuffix(sj, "[]")]
	})
	return out
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// The defaults docs/configuration.md shows are the ones a config that
// leaves the key out gets: checked for every default that is a plain value
// ("30s", "8MiB", "failover", "64MiB (flight), 10MiB (zerobus)").
func TestConfigurationDocDefaults(t *testing.T) {
	perKind := regexp.MustCompile(`^(\S+) \(flight\), (\S+) \(zerobus\)$`)
	bases := map[string]*config.Config{}
	for name := range keyBases {
		bases[name] = buildKeys(t, name, "").cfg
	}
	withLake := buildKeys(t, "pulsar", "destinations: [{}, {}, "+lake+"]").cfg
	checked := 0
	for _, kc := range keyCases {
		first, _, _ := strings.Cut(kc.def, " ")
		if first == "" || strings.ContainsAny(first[:1], "([") || first == "none" || first == "system" || first == "the" {
			continue // required, or described rather than a value
		}
		base := "pulsar"
		if strings.HasPrefix(kc.key, "source.generator.") {
			base = "generator"
		}
		want := []string{first, first}
		if m := perKind.FindStringSubmatch(kc.def); m != nil {
			want = m[1:]
		}
		if strings.HasPrefix(kc.key, "destinations[].iceberg.") {
			got, _ := configValue(reflect.ValueOf(withLake).Elem(), kc.key, 2)
			checked++
			if wd, err := time.ParseDuration(first); err == nil {
				first = wd.String()
			}
			if got != first {
				t.Errorf("%s: docs say default %q, an iceberg destination without the key has %q", kc.key, first, got)
			}
			continue
		}
		for i := range want {
			// destinations[0] of the base is the flight one, [1] the zerobus one.
			if (!strings.Contains(kc.key, "[]") && i > 0) ||
				(i == 0 && strings.Contains(kc.def, "(zerobus only)")) || (i == 1 && strings.Contains(kc.def, "(flight only)")) {
				continue
			}
			got, ok := configValue(reflect.ValueOf(bases[base]).Elem(), kc.key, i)
			if !ok {
				continue // e.g. a schema field, absent from the base
			}
			checked++
			if wd, err := time.ParseDuration(want[i]); err == nil && want[i] != "0" {
				want[i] = wd.String() // 60s is 1m0s
			}
			if got != want[i] {
				t.Errorf("%s: docs say default %q, a config without the key has %q", kc.key, want[i], got)
			}
		}
	}
	if checked < 25 {
		t.Errorf("checked only %d defaults", checked)
	}
}

// configValue formats the field at key (list elements: element i) as the
// docs write values.
func configValue(v reflect.Value, key string, i int) (string, bool) {
	for _, part := range strings.Split(key, ".") {
		name, list := strings.CutSuffix(part, "[]")
		f, ok := fieldByTag(v, name)
		if !ok {
			return "", false
		}
		v = f
		if list {
			if v.Len() <= i {
				return "", false
			}
			v = v.Index(i)
		}
	}
	switch x := v.Interface().(type) {
	case time.Duration:
		return x.String(), true
	case config.ByteSize:
		return x.String(), true
	case fmt.Stringer:
		return x.String(), true
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true
	}
	return "", false
}

func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	for j := 0; j < v.NumField(); j++ {
		if tag, _, _ := strings.Cut(v.Type().Field(j).Tag.Get("yaml"), ","); tag == name {
			return v.Field(j), true
		}
	}
	return reflect.Value{}, false
}

// pprofStatus serves b's worker endpoints on loopback and returns the status of /debug/pprof/.
func pprofStatus(t *testing.T, b *built) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &host{metrics: http.NotFoundHandler(), lis: lis}
	h.serve(b.worker.Pprof, b.log)
	defer func() { _ = h.http.Close() }()
	resp, err := http.Get("http://" + lis.Addr().String() + "/debug/pprof/")
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// otlpProvider is a meter provider with one counter, exporting through the
// reader otlpReader builds from b's metrics.otlp section.
func otlpProvider(t *testing.T, b *built) *sdkmetric.MeterProvider {
	t.Helper()
	r, err := otlpReader(context.Background(), b.worker.OTLP, b.log)
	require.NoError(t, err)
	require.NotNil(t, r)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	c, err := mp.Meter("configmap_test").Int64Counter("probe")
	require.NoError(t, err)
	c.Add(context.Background(), 1)
	return mp
}

// otlpFlush exports once through b's OTLP reader and returns the export's error.
func otlpFlush(t *testing.T, b *built) error {
	t.Helper()
	mp := otlpProvider(t, b)
	defer func() { _ = mp.Shutdown(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return mp.ForceFlush(ctx)
}
