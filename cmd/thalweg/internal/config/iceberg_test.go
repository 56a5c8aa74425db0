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
