package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

const icebergBase = `source: {kind: generator}
store: {dir: /var/lib/thalweg/offsets}
destinations:
  - name: lake
    kind: iceberg
    role: raw_anchor
`

// An iceberg destination needs only its table: the SQL catalog and the
// warehouse default to a directory next to the offset store.
func TestIcebergDefaults(t *testing.T) {
	cfg, err := config.Parse([]byte(icebergBase+"    iceberg: {table: raw.events}\n"), noEnv)
	require.NoError(t, err)
	ic := cfg.Destinations[0].Iceberg
	require.Equal(t, config.CatalogSQL, ic.Catalog.Type)
	require.Equal(t, "thalweg", ic.Catalog.Name)
	require.Equal(t, filepath.FromSlash("/var/lib/thalweg/offsets.iceberg/catalog.db"), ic.Catalog.URI)
	require.Equal(t, filepath.FromSlash("/var/lib/thalweg/offsets.iceberg/warehouse"), ic.Warehouse)
	require.Equal(t, time.Second, ic.CommitInterval)
	require.Equal(t, 128*config.MiB, ic.TargetFileSize)
	require.False(t, ic.S3.PathStyle)
	// An Iceberg anchor acknowledges once a commit: the source reads
	// further ahead of its acknowledgements, unless the config says.
	require.Equal(t, config.DefaultIcebergAnchorMaxUnacked, cfg.Source.MaxUnacked)
	cfg, err = config.Parse([]byte(icebergBase+"    iceberg: {table: raw.events}\n"+"  - name: copy\n    kind: flight\n    role: secondary\n    endpoint: 127.0.0.1:1\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.DefaultIcebergAnchorMaxUnacked, cfg.Source.MaxUnacked)
	set := strings.Replace(icebergBase, "source: {kind: generator}", "source: {kind: generator, max_unacked: 1000}", 1)
	cfg, err = config.Parse([]byte(set+"    iceberg: {table: raw.events}\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, 1000, cfg.Source.MaxUnacked)
	secondary := strings.Replace(icebergBase, "role: raw_anchor", "role: secondary", 1) +
		"    iceberg: {table: raw.events}\n  - name: raw\n    kind: flight\n    role: raw_anchor\n    endpoint: 127.0.0.1:1\n"
	cfg, err = config.Parse([]byte(secondary), noEnv)
	require.NoError(t, err)
	require.Equal(t, config.DefaultMaxUnacked, cfg.Source.MaxUnacked, "an Iceberg secondary does not hold the source's acknowledgements")
}

// Every mistake in an iceberg destination is reported with its line and
// field path, all at once.
func TestIcebergValidation(t *testing.T) {
	doc := icebergBase + `    endpoint: "127.0.0.1:1"
    token_env: TOK
    compression: zstd
    iceberg:
      catalog: {type: rest, uri: "cat.example:8181", token_env: "not a name"}
      table: events
      s3: {access_key_id: AKID, endpoint: "minio:9000"}
      commit_interval: 0s
      target_file_size: 1KiB
  - name: fl
    kind: flight
    role: secondary
    endpoint: "127.0.0.1:2"
    iceberg: {table: a.b}
`
	_, err := config.Parse([]byte(doc), noEnv)
	require.Error(t, err)
	for _, want := range []string{
		"line 7: destinations[0].endpoint: not used by kind iceberg (the catalog is iceberg.catalog.uri): remove it",
		"line 8: destinations[0].token_env: not used by kind iceberg (a rest catalog's token is iceberg.catalog.token_env)",
		"line 9: destinations[0].compression: not used by kind iceberg",
		`line 11: destinations[0].iceberg.catalog.uri: want the rest catalog's http:// or https:// URL, got "cat.example:8181"`,
		"destinations[0].iceberg.catalog.token_env: want the name of an environment variable",
		`line 12: destinations[0].iceberg.table: want namespace.table, got "events"`,
		"destinations[0].iceberg.s3.secret_access_key_env: required with access_key_id",
		`destinations[0].iceberg.s3.endpoint: want http://host:port or https://host:port, got "minio:9000"`,
		"line 14: destinations[0].iceberg.commit_interval: must be > 0, got 0s",
		"line 15: destinations[0].iceberg.target_file_size: must be >= 64KiB, got 1KiB",
		"line 20: destinations[1].iceberg: only allowed for kind iceberg",
	} {
		require.Contains(t, err.Error(), want)
	}
	require.Equal(t, 11, strings.Count(err.Error(), "\n")+1, "one line per problem:\n%s", err)
}

// A secret variable an iceberg destination names must be set when it runs.
func TestIcebergSecrets(t *testing.T) {
	cfg, err := config.Parse([]byte(icebergBase+`    iceberg:
      table: raw.events
      warehouse: s3://bucket/wh
      s3: {access_key_id: AKID, secret_access_key_env: S3_SECRET}
`), noEnv)
	require.NoError(t, err)
	err = cfg.CheckSecrets(func(string) (string, bool) { return "", false })
	require.ErrorContains(t, err, "destinations[0].iceberg.s3.secret_access_key_env")
	require.ErrorContains(t, err, "S3_SECRET is not set")
	require.NoError(t, cfg.CheckSecrets(func(k string) (string, bool) { return "s", k == "S3_SECRET" }))
}

// Maintenance settings that contradict each other or the commit interval
// are reported with their line and field path.
func TestIcebergMaintenanceValidation(t *testing.T) {
	doc := icebergBase + `    iceberg:
      table: raw.events
      commit_interval: 30s
      maintenance:
        snapshot_max_age: 20s
        min_snapshots: 0
        orphan_age: 10s
        timeout: 0s
        lease_ttl: 50s
`
	_, err := config.Parse([]byte(doc), noEnv)
	require.Error(t, err)
	for _, want := range []string{
		"line 11: destinations[0].iceberg.maintenance.snapshot_max_age: must exceed commit_interval (30s), got 20s",
		"line 12: destinations[0].iceberg.maintenance.min_snapshots: must be >= 1 (the current snapshot is always kept), got 0",
		"line 13: destinations[0].iceberg.maintenance.orphan_age: must exceed snapshot_max_age (20s), got 10s",
		"line 14: destinations[0].iceberg.maintenance.timeout: must be > 0, got 0s",
		"line 15: destinations[0].iceberg.maintenance.lease_ttl: must exceed twice commit_interval (30s), got 50s",
	} {
		require.Contains(t, err.Error(), want)
	}
	require.Equal(t, 5, strings.Count(err.Error(), "\n")+1, "one line per problem:\n%s", err)

	cfg, err := config.Parse([]byte(icebergBase+"    iceberg: {table: raw.events, commit_interval: 2m}\n"), noEnv)
	require.NoError(t, err, "the default snapshot_max_age follows a long commit_interval")
	m := cfg.Destinations[0].Iceberg.Maintenance
	require.True(t, m.Enabled)
	require.Equal(t, 20*time.Minute, m.SnapshotMaxAge)
	require.Equal(t, 24*time.Hour, m.OrphanAge)
	require.Equal(t, 6*time.Minute, m.LeaseTTL, "the default lease_ttl exceeds twice a long commit_interval")
}

// Every bad partition_by term is reported with its line and index: an
// unknown transform, a bucket count of 0 or below, a term named twice,
// and with schema.mode raw a column the raw table does not have or one
// its transform does not apply to. With schema.mode json the columns are
// checked when the table is created. Identity and truncate of a string,
// a binary and identity of a timestamp are accepted.
func TestIcebergPartitionByValidation(t *testing.T) {
	doc := icebergBase + `    iceberg:
      table: raw.events
      partition_by:
        - day(publish_time)
        - week(publish_time)
        - bucket(0, key)
        - bucket(-2, key)
        - day(nope)
        - day(key)
        - truncate(4, publish_time)
        - bucket(16, key)
        - bucket( 16 , key)
`
	_, err := config.Parse([]byte(doc), noEnv)
	require.Error(t, err)
	for _, want := range []string{
		`line 11: destinations[0].iceberg.partition_by[1]: "week(publish_time)": unknown transform "week"`,
		`line 12: destinations[0].iceberg.partition_by[2]: "bucket(0, key)": the bucket width must be a whole number >= 1, got "0"`,
		`line 13: destinations[0].iceberg.partition_by[3]: "bucket(-2, key)": the bucket width must be a whole number >= 1`,
		`line 14: destinations[0].iceberg.partition_by[4]: day(nope): no column "nope"`,
		`line 15: destinations[0].iceberg.partition_by[5]: day(key): column "key" is a binary, which day does not apply to`,
		`line 16: destinations[0].iceberg.partition_by[6]: truncate[4](publish_time): column "publish_time" is a timestamptz, which truncate[4] does not apply to`,
		`line 18: destinations[0].iceberg.partition_by[8]: bucket[16](key) is named twice (also destinations[0].iceberg.partition_by[7])`,
	} {
		require.Contains(t, err.Error(), want)
	}
	require.Equal(t, 7, strings.Count(err.Error(), "\n")+1, "one line per problem:\n%s", err)

	cfg, err := config.Parse([]byte(icebergBase+"    iceberg: {table: raw.events, partition_by: [\"day(publish_time)\", \"bucket(16, key)\"]}\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, []string{"day(publish_time)", "bucket(16, key)"}, cfg.Destinations[0].Iceberg.PartitionBy)
	terms := `["identity(topic)", "truncate(8, key)", "identity(publish_time)"]`
	cfg, err = config.Parse([]byte(icebergBase+"    iceberg: {table: raw.events, partition_by: "+terms+"}\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, []string{"identity(topic)", "truncate(8, key)", "identity(publish_time)"}, cfg.Destinations[0].Iceberg.PartitionBy)

	// A json schema's columns are the first batch's: only the terms are checked.
	json := "schema: {mode: json}\n" + strings.Replace(icebergBase, "{kind: generator}", "{kind: generator, generator: {mode: json}}", 1) +
		"    iceberg: {table: raw.events, partition_by: [\"day(ts)\", \"week(ts)\"]}\n"
	_, err = config.Parse([]byte(json), noEnv)
	require.Error(t, err)
	require.Contains(t, err.Error(), `destinations[0].iceberg.partition_by[1]: "week(ts)": unknown transform "week"`)
	require.NotContains(t, err.Error(), "partition_by[0]")
}

// A local warehouse whose path a URL spells otherwise, or a table on one
// whose name a URL spells otherwise, is refused with its line and field
// path, naming the characters (iceberg.CheckLocalWarehouse,
// iceberg.CheckLocalTable); an S3 warehouse's keys are taken as written.
func TestIcebergWarehouseValidation(t *testing.T) {
	for _, c := range []struct{ warehouse, table, want string }{
		{"/data/my lake", "raw.events", `line 7: destinations[0].iceberg.warehouse: the path has characters a URL escapes (" ")`},
		{"file:///data/lake#1", "raw.events", `the path has characters a URL escapes ("#")`},
		{"lake/zürich%20", "raw.events", `the path has characters a URL escapes ("ü%")`},
		{"/data/lake", "raw.zürich?", `line 7: destinations[0].iceberg.table: the name has characters a URL escapes ("ü?")`},
		{"/data/lake-1.b_(x)", "raw.events-1", ""},
		{"s3://bucket/my lake/x%y", "raw.zürich", ""},
	} {
		_, err := config.Parse([]byte(icebergBase+"    iceberg: {table: \""+c.table+"\", warehouse: \""+c.warehouse+"\"}\n"), noEnv)
		if c.want == "" {
			require.NoError(t, err, c.warehouse)
			continue
		}
		require.ErrorContains(t, err, c.want, c.warehouse)
	}
}

// A table template is checked with its line and field path: an unknown
// placeholder, an empty part, a character the catalogs refuse outside a
// placeholder, and, for the generator source, a {tenant} or {namespace}
// it never has. A good template is kept as it is.
func TestIcebergTableTemplate(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{"raw.{topik}", `line 8: destinations[0].iceberg.table: "raw.{topik}": unknown placeholder {topik} (want {topic}, {tenant} or {namespace})`},
		{"raw.{topic}.", `line 8: destinations[0].iceberg.table: "raw.{topic}.": a part is empty (want namespace.table)`},
		{"raw-1.{topic}", `line 8: destinations[0].iceberg.table: "raw-1.{topic}": "-" outside a placeholder`},
		{"{tenant}.{topic}", "line 8: destinations[0].iceberg.table: {tenant} is empty for source.kind generator"},
		{"raw.{namespace}_{topic}", "line 8: destinations[0].iceberg.table: {namespace} is empty for source.kind generator"},
	} {
		_, err := config.Parse([]byte(icebergBase+"    iceberg:\n      table: \""+tc.table+"\"\n"), noEnv)
		require.ErrorContains(t, err, tc.want, tc.table)
	}
	cfg, err := config.Parse([]byte(icebergBase+"    iceberg: {table: \"raw.t_{topic}\"}\n"), noEnv)
	require.NoError(t, err)
	require.Equal(t, "raw.t_{topic}", cfg.Destinations[0].Iceberg.Table)
}
