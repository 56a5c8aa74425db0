package config

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/zerobus"
)

// Config is the whole pipeline configuration. The yaml tags are the key
// names; testdata/configs/full.yaml shows every key with its default.
type Config struct {
	// Source says where records come from.
	Source SourceConfig `yaml:"source"`
	// Schema says how payloads become Arrow columns.
	Schema SchemaConfig `yaml:"schema"`
	// Batching says when the assembler flushes a batch.
	Batching BatchingConfig `yaml:"batching"`
	// Destinations are the sinks, each with its own ack lane. Required:
	// at least one, and exactly one with role raw_anchor.
	Destinations []DestinationConfig `yaml:"destinations"`
	// Store is the Pebble offset store.
	Store StoreConfig `yaml:"store"`
	// Shutdown bounds graceful shutdown.
	Shutdown ShutdownConfig `yaml:"shutdown"`
	// Metrics configures the Prometheus endpoint.
	Metrics MetricsConfig `yaml:"metrics"`
	// Log configures log/slog output.
	Log LogConfig `yaml:"log"`

	// lines maps a field path to the line it was written on (null values
	// included) and present holds the paths written with a non-null value.
	// Both are nil for a Config built in Go; Validate then reports paths
	// without lines and judges "was it written" by value.
	lines   map[string]int
	present map[string]bool
	// file is the path Load read, named in CheckSecrets' problems.
	file string
}

// SourceKind selects the record source.
type SourceKind string

const (
	SourcePulsar    SourceKind = "pulsar"    // an Apache Pulsar broker (default)
	SourceGenerator SourceKind = "generator" // synthetic records for demo and benchmarks
)

// SubscriptionType is a Pulsar subscription type.
type SubscriptionType string

const (
	SubExclusive SubscriptionType = "exclusive"
	SubFailover  SubscriptionType = "failover" // default
	SubShared    SubscriptionType = "shared"
	SubKeyShared SubscriptionType = "key_shared"
)

// SourceConfig describes the source. The Pulsar settings sit directly under
// `source:` because Pulsar is the production source; the generator's knobs
// are grouped under `source.generator:` so that neither kind's keys can be
// mistaken for the other's. Setting keys of the kind that is not selected is
// a validation error.
type SourceConfig struct {
	// Kind is pulsar or generator. Default pulsar.
	Kind SourceKind `yaml:"kind"`

	// URL of the broker: pulsar://host:port or pulsar+ssl://host:port.
	// Required for kind pulsar.
	URL string `yaml:"url"`
	// Auth holds the broker credentials. Optional.
	Auth AuthConfig `yaml:"auth"`
	// AdminURL is the brokers' admin REST API, http://host:port or
	// https://host:port (the broker's webServicePort or
	// webServicePortTls), used with the same token and CA as URL by
	// `thalweg offsets reset` to move the subscription's cursor. The
	// worker itself does not use it. Default: none (offsets reset refuses
	// to run without it).
	AdminURL string `yaml:"admin_url"`
	// ListenerName selects which of the brokers' advertised listeners
	// (broker setting advertisedListeners) topic lookups answer with, for
	// brokers reachable on several networks (internal, behind NAT or a load
	// balancer, through a proxy): the worker connects to the addresses of
	// the listener it names. URL must be reachable from the same network.
	// Letters, digits, '_' and '-'. Default: none (the brokers' internal
	// listener).
	ListenerName string `yaml:"listener_name"`
	// Topics to consume: full names (persistent://tenant/ns/topic) or short
	// names (topic, meaning persistent://public/default/topic). Topics
	// and/or TopicsPattern is required for kind pulsar.
	Topics []string `yaml:"topics"`
	// TopicsPattern is a regular expression over full topic names, e.g.
	// persistent://public/default/events-.*.
	TopicsPattern string `yaml:"topics_pattern"`
	// Subscription names the Pulsar subscription and its type.
	Subscription SubscriptionConfig `yaml:"subscription"`
	// Start is where a subscription that does not exist yet begins:
	// earliest (the whole backlog the topic retains) or latest (only
	// records published after the worker subscribed). An existing
	// subscription always resumes where it is. Default earliest.
	Start StartPosition `yaml:"start"`
	// ReceiverQueueSize is the Pulsar consumer's prefetch queue. Default 1000.
	ReceiverQueueSize int `yaml:"receiver_queue_size"`
	// MaxUnacked bounds the records read from the source (the broker, or
	// the generator) and not yet acked upstream; the source stops reading
	// when it is reached, for either kind. The worker's memory is bounded
	// by batch bytes instead (docs/operations.md#memory). Default 262144;
	// DefaultIcebergAnchorMaxUnacked when the raw anchor is kind iceberg.
	// Messages a Failover hold keeps aside count against it too.
	MaxUnacked int `yaml:"max_unacked"`
	// DeadLetterTopic receives records the schema rejects. Empty (default):
	// rejected records are counted and dropped from the batch, and still
	// acked, so the watermark never stalls.
	DeadLetterTopic string `yaml:"dead_letter_topic"`

	// Generator configures kind generator.
	Generator GeneratorConfig `yaml:"generator"`
}

// AuthConfig holds Pulsar credentials. The token itself is never in the file.
type AuthConfig struct {
	// TokenEnv names the environment variable holding a JWT for token auth.
	TokenEnv string `yaml:"token_env"`
	// TokenFile is a file holding the JWT (surrounding whitespace trimmed).
	// At most one of TokenEnv and TokenFile.
	TokenFile string `yaml:"token_file"`
	// TLSCAFile is a PEM bundle to verify the broker; only with pulsar+ssl://.
	// Empty: the system roots.
	TLSCAFile string `yaml:"tls_ca_file"`
}

// SubscriptionConfig is the Pulsar subscription.
type SubscriptionConfig struct {
	// Name of the subscription. Required for kind pulsar.
	Name string `yaml:"name"`
	// Type is exclusive, failover, shared or key_shared. Default failover.
	Type SubscriptionType `yaml:"type"`
}

// StartPosition is the initial position of a new Pulsar subscription.
type StartPosition string

const (
	StartEarliest StartPosition = "earliest" // default
	StartLatest   StartPosition = "latest"
)

// GeneratorMode is the payload format the generator produces.
type GeneratorMode string

const (
	GenRaw  GeneratorMode = "raw"  // opaque random bytes (default)
	GenJSON GeneratorMode = "json" // JSON objects
)

// GeneratorConfig configures the synthetic source used by `thalweg demo`
// and the benchmarks. Its output is a pure function of these settings, so a
// run can be verified against a replay.
type GeneratorConfig struct {
	// Seed of the deterministic generator. Default 1.
	Seed int64 `yaml:"seed"`
	// Partitions the records are spread over. Default 4.
	Partitions int `yaml:"partitions"`
	// Records is how many records to produce in total; 0 means unbounded
	// (until stopped). Default 1000000.
	Records int64 `yaml:"records"`
	// Rate limits records per second over all partitions; 0 means as fast
	// as the pipeline takes them. Default 0.
	Rate float64 `yaml:"rate"`
	// PayloadSize is the payload size of each record. Default 256B.
	PayloadSize ByteSize `yaml:"payload_size"`
	// MalformedFraction of records, in [0, 1], carry a payload the schema
	// rejects (exercises the dead-letter path). Default 0.
	MalformedFraction float64 `yaml:"malformed_fraction"`
	// Mode is raw or json. Default raw.
	Mode GeneratorMode `yaml:"mode"`
}

// BatchingConfig says when the assembler flushes; whichever limit is hit
// first wins, and the reason is the thalweg.batch.flushes {reason} label.
type BatchingConfig struct {
	// MaxRows per batch. Default 8192.
	MaxRows int `yaml:"max_rows"`
	// MaxBytes of payload per batch: an integer (bytes) or a string such as
	// 8MiB, 512KiB, 1MB. Default 8MiB.
	MaxBytes ByteSize `yaml:"max_bytes"`
	// Linger is how long the oldest record may wait for its batch to fill,
	// as a Go duration string (100ms, 1s). Default 100ms.
	Linger time.Duration `yaml:"linger"`
	// LingerWhenIdle makes every batch wait for max_rows, max_bytes or
	// linger also while the raw anchor has nothing in flight. Default
	// false: a batch is sent as soon as the anchor has confirmed every
	// batch before it, so records wait for the linger only behind a batch
	// in flight, and a quiet stream is not delayed by it.
	LingerWhenIdle bool `yaml:"linger_when_idle"`
}

// DestinationKind selects the sink transport.
type DestinationKind string

const (
	KindFlight  DestinationKind = "flight"  // Arrow Flight DoPut
	KindZerobus DestinationKind = "zerobus" // Zerobus (EphemeralStream gRPC or its Flight variant)
	KindIceberg DestinationKind = "iceberg" // an Apache Iceberg table (package iceberg)
)

// Role is a destination's role in the offset protocol.
type Role string

const (
	// RoleRawAnchor is the one destination whose durable acks gate the
	// delivered watermark and therefore the upstream acks.
	RoleRawAnchor Role = "raw_anchor"
	// RoleSecondary destinations only record coverage; they never gate the source.
	RoleSecondary Role = "secondary"
)

// ZerobusMode is the wire protocol of a zerobus destination.
type ZerobusMode string

const (
	ZerobusEphemeral ZerobusMode = "ephemeral" // gRPC EphemeralStream (default)
	ZerobusFlight    ZerobusMode = "flight"    // the Arrow Flight variant
)

// Compression of Arrow IPC bodies.
type Compression string

const (
	CompressionNone Compression = "none" // default
	CompressionLZ4  Compression = "lz4"  // LZ4 frame
	CompressionZstd Compression = "zstd"
)

// DestinationConfig is one sink with its ack lane.
type DestinationConfig struct {
	// Name identifies the destination in metrics ({destination} label), logs
	// and the offset store: [a-z0-9_-]+, at most 64 bytes, unique. Renaming a
	// destination starts its coverage afresh. Required.
	Name string `yaml:"name"`
	// Kind is flight, zerobus or iceberg. Required.
	Kind DestinationKind `yaml:"kind"`
	// Role is raw_anchor or secondary. Required; exactly one raw_anchor.
	Role Role `yaml:"role"`
	// Endpoint is host:port of the server. Required for kinds flight and
	// zerobus; kind iceberg reaches its catalog by iceberg.catalog.uri.
	Endpoint string `yaml:"endpoint"`
	// Path is the Flight descriptor path of a flight destination.
	// Default [Name].
	Path []string `yaml:"path"`
	// Table is the target table of a zerobus destination, as
	// catalog.schema.table. Required for kind zerobus.
	Table string `yaml:"table"`
	// Mode is the wire protocol of a zerobus destination: ephemeral or
	// flight. Default ephemeral.
	Mode ZerobusMode `yaml:"mode"`
	// TLS for the connection. Default plaintext.
	TLS TLSConfig `yaml:"tls"`
	// TokenEnv names the environment variable whose value is sent as a
	// bearer token. Optional; the token itself is never in the file.
	TokenEnv string `yaml:"token_env"`
	// Compression of Arrow IPC bodies: none, lz4 or zstd. Default none.
	// For kind flight and for kind zerobus with mode flight; a zerobus
	// destination in mode ephemeral (JSON or protobuf records) does not
	// use it, and writing it there is an error.
	Compression Compression `yaml:"compression"`
	// MaxMessageSize is the gRPC message limit set on both directions;
	// batches larger than this are split by rows. Between 64KiB (128KiB for
	// kind zerobus, whose requests keep 64KiB for their envelope) and 2GiB-1.
	// Default DefaultFlightMaxMessageSize (64MiB, the same value as the
	// Flight sink's and receiver's default) for kind flight,
	// DefaultZerobusMaxMessageSize (10MiB, the Zerobus service's request
	// limit) for kind zerobus.
	MaxMessageSize ByteSize `yaml:"max_message_size"`
	// SilenceTimeout is the sink's watchdog: when batches are outstanding
	// and the stream's acknowledged watermark has not moved for this long,
	// the stream is declared dead (a permanent error: the lane rebuilds it
	// at once and replays what was unconfirmed). It measures silence, not
	// round trips, so a slow but progressing server never trips it.
	// Default 30s for kind flight, 60s for kind zerobus.
	SilenceTimeout time.Duration `yaml:"silence_timeout"`
	// Iceberg is the table of a kind iceberg destination.
	Iceberg IcebergConfig `yaml:"iceberg"`
	// Lane tunes this destination's ack lane.
	Lane LaneConfig `yaml:"lane"`
}

// IcebergCatalogType selects the Iceberg catalog.
type IcebergCatalogType string

const (
	// CatalogSQL is a SQL catalog on a SQLite file (no server; pyiceberg's
	// SqlCatalog and the JDBC catalog open the same file). Default.
	CatalogSQL IcebergCatalogType = "sql"
	// CatalogREST is an Iceberg REST catalog server.
	CatalogREST IcebergCatalogType = "rest"
)

// IcebergConfig is the table of a kind iceberg destination
// (docs/operations.md, "Iceberg anchor").
type IcebergConfig struct {
	// Catalog is where the table is registered.
	Catalog IcebergCatalogConfig `yaml:"catalog"`
	// Warehouse is the root location of new tables: an absolute or
	// relative local path, file:///path, or s3://bucket/prefix. Default,
	// for a sql catalog: <store.dir>.iceberg/warehouse, next to the offset
	// store; for a rest catalog: the server's own.
	Warehouse string `yaml:"warehouse"`
	// Table is namespace.table; the namespace and the table are created
	// when missing, with the schema of the first batch. Required.
	Table string `yaml:"table"`
	// S3 configures an s3:// warehouse.
	S3 IcebergS3Config `yaml:"s3"`
	// CommitInterval is the least time between two snapshot commits. A
	// commit acknowledges every batch written since the last one, so the
	// interval is the latency the table adds before records are
	// acknowledged upstream, and what waits for it must fit
	// source.max_unacked and lane.max_bytes; a longer interval makes
	// fewer snapshots and larger data files. Default 1s.
	CommitInterval time.Duration `yaml:"commit_interval"`
	// TargetFileSize is the size at which a data file is closed and the
	// next one started before a commit closes it. Default 128MiB.
	TargetFileSize ByteSize `yaml:"target_file_size"`
	// PartitionBy is the partition spec of the table the worker creates:
	// Iceberg transforms of named columns, "day(publish_time)",
	// "bucket(16, key)", "identity(partition)", "truncate(4, seq)"
	// (docs/iceberg.md, "Partitioning"). A table that exists keeps its
	// own spec. Default none: unpartitioned.
	PartitionBy []string `yaml:"partition_by"`
	// Maintenance is what the worker does to keep the table small
	// (docs/iceberg.md, "Operating a table").
	Maintenance IcebergMaintenanceConfig `yaml:"maintenance"`
}

// IcebergMaintenanceConfig configures the snapshot expiry and orphan file
// cleanup the worker runs between its commits.
type IcebergMaintenanceConfig struct {
	// Enabled runs maintenance. Default true.
	Enabled bool `yaml:"enabled"`
	// Interval is the least time between two snapshot expiries. Default 1m.
	Interval time.Duration `yaml:"interval"`
	// SnapshotMaxAge is the age past which a snapshot is expired; it must
	// exceed commit_interval. Default 10m, or 10 commit intervals when
	// longer.
	SnapshotMaxAge time.Duration `yaml:"snapshot_max_age"`
	// MinSnapshots is how many of the newest snapshots are kept whatever
	// their age; at least 1. Default 10.
	MinSnapshots int `yaml:"min_snapshots"`
	// OrphanAge is the age past which a file no metadata references is
	// deleted; it must exceed snapshot_max_age and the longest a worker
	// may be cut off from the catalog. Default 24h, or twice
	// snapshot_max_age when longer.
	OrphanAge time.Duration `yaml:"orphan_age"`
	// OrphanInterval is the least time between two orphan cleanups.
	// Default 1h.
	OrphanInterval time.Duration `yaml:"orphan_interval"`
	// Timeout bounds one maintenance run. Default 30s.
	Timeout time.Duration `yaml:"timeout"`
	// CompactMinFiles is the least number of small data files one
	// compaction rewrites into files of target_file_size; 0 turns
	// compaction off. Default 5.
	CompactMinFiles int `yaml:"compact_min_files"`
	// LeaseTTL is how long the table's maintenance lease lasts from when
	// a worker's commit takes or renews it; of the workers on one table
	// only its holder maintains it, and a killed holder's lease passes at
	// most lease_ttl after its last commit. It must exceed twice
	// commit_interval. Default three intervals, at least 30s.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
}

// IcebergCatalogConfig says how to reach the catalog.
type IcebergCatalogConfig struct {
	// Type is sql or rest. Default sql.
	Type IcebergCatalogType `yaml:"type"`
	// URI is, for sql, the SQLite file (created when missing; default
	// <store.dir>.iceberg/catalog.db, next to the offset store); for rest,
	// the server's http:// or https:// base URL (required).
	URI string `yaml:"uri"`
	// Name is the catalog's name (the SQL catalog's catalog_name column,
	// which pyiceberg and the JDBC catalog match). Default thalweg.
	Name string `yaml:"name"`
	// TokenEnv names the environment variable holding a bearer token for
	// a rest catalog. Optional.
	TokenEnv string `yaml:"token_env"`
	// CredentialEnv names the environment variable holding an OAuth2
	// client credential (client_id:secret) a rest catalog exchanges for a
	// token. Optional.
	CredentialEnv string `yaml:"credential_env"`
	// Properties are passed to the catalog as they are (a REST prefix or
	// scope, further io properties); the keys above and iceberg.s3 win on
	// a clash. Default none.
	Properties map[string]string `yaml:"properties"`
}

// IcebergS3Config configures an S3-compatible warehouse. Without
// access_key_id, credentials come from the usual AWS chain
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, the shared
// config files, an instance role).
type IcebergS3Config struct {
	// Endpoint is the URL of an S3-compatible server (http://host:port);
	// empty for AWS S3.
	Endpoint string `yaml:"endpoint"`
	// Region of the bucket; empty takes AWS_REGION or the shared config.
	Region string `yaml:"region"`
	// PathStyle addresses buckets by path (http://host/bucket/key), which
	// most S3-compatible servers need. Default true with an endpoint,
	// false without (AWS S3).
	PathStyle bool `yaml:"path_style"`
	// AccessKeyID is a static access key id; requires
	// secret_access_key_env.
	AccessKeyID string `yaml:"access_key_id"`
	// SecretAccessKeyEnv names the environment variable holding the
	// secret access key of AccessKeyID.
	SecretAccessKeyEnv string `yaml:"secret_access_key_env"`
	// SessionTokenEnv names the environment variable holding a session
	// token for temporary credentials. Optional.
	SessionTokenEnv string `yaml:"session_token_env"`
}

// TLSConfig configures client TLS to a destination.
type TLSConfig struct {
	// Enabled turns TLS on. Default false. The other keys require it.
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM bundle to verify the server. Empty: the system roots.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the client certificate for mutual TLS; set
	// both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name verified in the server certificate.
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify disables server verification (tests only).
	// Mutually exclusive with CAFile.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// LaneConfig tunes one ack lane (docs/design.md#ack-lanes).
type LaneConfig struct {
	// Capacity of the lane's channel: how many batches may be submitted and
	// not yet confirmed. A full lane blocks Submit (backpressure). The
	// channel is allocated up front, so it is capped at 65536. Default
	// 4096 (lanes.DefaultCapacity); MaxBytes is what binds for batches
	// over 64 KiB.
	Capacity int `yaml:"capacity"`
	// MaxBytes bounds the memory of the same batches (what their Arrow
	// buffers allocate): the next batch waits while it does not fit; one
	// larger than MaxBytes is taken alone. A secondary's queue of live
	// batches holds twice as much. Default 512MiB (lanes.DefaultMaxBytes).
	MaxBytes ByteSize `yaml:"max_bytes"`
	// AckTimeout bounds one wait of the lane's ack task for a durable ack
	// (lanes.Options.AckTimeout). An expired wait is a transient failure:
	// it is retried up to MaxRetries times, then the lane is poisoned and
	// rebuilt. Default 30s. (The sink's own watchdog is SilenceTimeout.)
	AckTimeout time.Duration `yaml:"ack_timeout"`
	// MaxRetries is how many consecutive transient failures are retried
	// (with backoff) before the lane is declared poisoned and rebuilt;
	// an explicit 0 rebuilds on the first failure. Default 5 (when the
	// key is absent).
	MaxRetries int `yaml:"max_retries"`
	// PermanentBudget is how long permanent failures (the destination
	// refuses the stream: bad credentials, a refused schema, a missing
	// dataset) may persist with no progress before the lane fails for good
	// (lanes.Options.PermanentBudget). A raw anchor then stops the worker
	// with exit code 5; a secondary is detached for the run. Retryable
	// failures (a sink down or restarting) never end a lane. Default 1m;
	// a negative value never gives up; 0 is invalid.
	PermanentBudget time.Duration `yaml:"permanent_budget"`
}

// StoreConfig is the Pebble offset store.
type StoreConfig struct {
	// Dir holds the Pebble database. Required. Relative paths are relative
	// to the working directory.
	Dir string `yaml:"dir"`
	// TeardownTimeout bounds the final synced commit and close. Default 10s.
	TeardownTimeout time.Duration `yaml:"teardown_timeout"`
}

// ShutdownConfig bounds graceful shutdown (docs/design.md#shutdown-order).
type ShutdownConfig struct {
	// DrainTimeout is how long shutdown waits for the lanes to confirm what
	// was submitted before it stops anyway (which only causes duplicates on
	// restart). Default 30s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
}

// MetricsConfig configures the HTTP endpoint serving /metrics, /healthz
// and /readyz.
type MetricsConfig struct {
	// Listen is host:port; "" disables the endpoint (an absent or null key
	// keeps the default). Default 127.0.0.1:9464.
	Listen string `yaml:"listen"`
	// Pprof also serves the runtime profiles of net/http/pprof under
	// /debug/pprof/ on Listen. Anyone who reaches the listener can read
	// them, so keep Listen on loopback or a private network. Default false.
	Pprof bool `yaml:"pprof"`
	// OTLP pushes every metric to an OpenTelemetry collector as well.
	// Disabled while OTLP.Endpoint is empty (default).
	OTLP OTLPConfig `yaml:"otlp"`
}

// OTLPProtocol is the transport of the OTLP metric exporter.
type OTLPProtocol string

const (
	OTLPGRPC OTLPProtocol = "grpc" // OTLP/gRPC, port 4317 by convention (default)
	OTLPHTTP OTLPProtocol = "http" // OTLP/HTTP protobuf to /v1/metrics, port 4318
)

// OTLPConfig configures OTLP metric export. The other keys require Endpoint.
type OTLPConfig struct {
	// Endpoint is the collector's host:port (no scheme, no path; OTLP/HTTP
	// posts to /v1/metrics). Default: none (no export).
	Endpoint string `yaml:"endpoint"`
	// Protocol is grpc or http. Default grpc.
	Protocol OTLPProtocol `yaml:"protocol"`
	// Insecure sends in plaintext instead of TLS (system roots). Default false.
	Insecure bool `yaml:"insecure"`
	// Headers are sent with every export, e.g. a collector's API key; write
	// secret values as ${VAR} so that they come from the environment.
	// Default none.
	Headers map[string]string `yaml:"headers"`
	// Interval between two exports. Default 30s.
	Interval time.Duration `yaml:"interval"`
}

// LogLevel is a log/slog level name.
type LogLevel string

const (
	LevelDebug LogLevel = "debug"
	LevelInfo  LogLevel = "info" // default
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// LogFormat selects the slog handler.
type LogFormat string

const (
	FormatText LogFormat = "text" // slog.TextHandler (default)
	FormatJSON LogFormat = "json" // slog.JSONHandler
)

// LogConfig configures logging.
type LogConfig struct {
	// Level is debug, info, warn or error. Default info.
	Level LogLevel `yaml:"level"`
	// Format is text or json. Default text.
	Format LogFormat `yaml:"format"`
	// StatsInterval is how often `thalweg run` logs a one-line stats
	// summary (records read, dead-lettered, acknowledged, per destination
	// delivered and retries) when stderr is not a terminal; on a terminal a
	// live progress line is redrawn every second instead. 0 disables the
	// periodic line (the final summary is always logged). Default 30s.
	StatsInterval time.Duration `yaml:"stats_interval"`
}

// SlogLevel maps Level to a slog.Level; an unknown level maps to Info.
func (l LogConfig) SlogLevel() slog.Level {
	switch l.Level {
	case LevelDebug:
		return slog.LevelDebug
	case LevelWarn:
		return slog.LevelWarn
	case LevelError:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// Defaults of the fields whose zero value is not a usable default.
const (
	DefaultReceiverQueueSize = 1000
	DefaultMaxUnacked        = 1 << 18
	// DefaultIcebergAnchorMaxUnacked is source.max_unacked's default with
	// an Iceberg raw anchor. Such an anchor acknowledges records upstream
	// only at the commit that covers them, so the worker reads at most
	// max_unacked records per commit_interval plus the commit's latency:
	// 262144 held it at 250 k records/s with 1 s commits, this lets it
	// read about a million (BENCHMARKS.md, "Iceberg anchor: encoding on
	// several cores"). Other anchors acknowledge within milliseconds and
	// keep the smaller default, which also bounds the messages a Failover
	// hold keeps aside.
	DefaultIcebergAnchorMaxUnacked = 1 << 20
	DefaultGeneratorSeed           = 1
	DefaultPartitions              = 4
	DefaultRecords                 = 1_000_000
	DefaultPayloadSize             = 256 * Byte
	DefaultMaxRows                 = 8192
	DefaultMaxBytes                = 8 * MiB
	DefaultLinger                  = 100 * time.Millisecond
	// DefaultFlightMaxMessageSize and DefaultZerobusMaxMessageSize are the
	// sinks' own defaults, so that a config that leaves the key out and a
	// program that leaves the option zero behave alike.
	DefaultFlightMaxMessageSize  = ByteSize(flight.DefaultMaxMessageSize)
	DefaultZerobusMaxMessageSize = ByteSize(zerobus.DefaultMaxMessageSize)
	DefaultFlightSilenceTimeout  = flight.DefaultAckTimeout
	DefaultZerobusSilenceTimeout = zerobus.DefaultAckTimeout
	DefaultLaneCapacity          = lanes.DefaultCapacity
	DefaultLaneMaxBytes          = ByteSize(lanes.DefaultMaxBytes)
	DefaultAckTimeout            = 30 * time.Second
	DefaultMaxRetries            = 5
	DefaultPermanentBudget       = lanes.DefaultPermanentBudget
	DefaultTeardownTimeout       = 10 * time.Second
	DefaultDrainTimeout          = 30 * time.Second
	DefaultMetricsListen         = "127.0.0.1:9464"
	DefaultOTLPInterval          = 30 * time.Second
	DefaultStatsInterval         = 30 * time.Second
	DefaultIcebergCatalogName    = iceberg.DefaultCatalogName
	DefaultIcebergCommitInterval = iceberg.DefaultCommitInterval
	DefaultIcebergTargetFileSize = ByteSize(iceberg.DefaultTargetFileSize)
	DefaultIcebergCommitTimeout  = iceberg.DefaultCommitTimeout

	// MaxLaneCapacity caps LaneConfig.Capacity: the lane channel is
	// allocated eagerly, so a typo must not allocate gigabytes.
	MaxLaneCapacity = 1 << 16
	// MinMessageSize and MaxMessageSize bound DestinationConfig.MaxMessageSize.
	MinMessageSize = 64 * KiB
	MaxMessageSize = 2*GiB - 1
)

// Default returns a Config with every top-level default filled in and no
// destinations. Parse decodes on top of it; Go callers building a Config by
// hand start from it and add destinations with DefaultDestination.
func Default() *Config {
	return &Config{
		Source: SourceConfig{
			Kind:              SourcePulsar,
			Subscription:      SubscriptionConfig{Type: SubFailover},
			Start:             StartEarliest,
			ReceiverQueueSize: DefaultReceiverQueueSize,
			MaxUnacked:        DefaultMaxUnacked,
			Generator: GeneratorConfig{
				Seed:        DefaultGeneratorSeed,
				Partitions:  DefaultPartitions,
				Records:     DefaultRecords,
				PayloadSize: DefaultPayloadSize,
				Mode:        GenRaw,
			},
		},
		Schema: SchemaConfig{Mode: SchemaRaw, JSONBytes: JSONBytesAuto},
		Batching: BatchingConfig{
			MaxRows:  DefaultMaxRows,
			MaxBytes: DefaultMaxBytes,
			Linger:   DefaultLinger,
		},
		Store:    StoreConfig{TeardownTimeout: DefaultTeardownTimeout},
		Shutdown: ShutdownConfig{DrainTimeout: DefaultDrainTimeout},
		Metrics: MetricsConfig{Listen: DefaultMetricsListen,
			OTLP: OTLPConfig{Protocol: OTLPGRPC, Interval: DefaultOTLPInterval}},
		Log: LogConfig{Level: LevelInfo, Format: FormatText, StatsInterval: DefaultStatsInterval},
	}
}

// DefaultDestination returns a destination with every default filled in:
// Path [name] for kind flight, Mode ephemeral for kind zerobus, and the
// kind's MaxMessageSize and SilenceTimeout.
func DefaultDestination(name string, kind DestinationKind, role Role, endpoint string) DestinationConfig {
	d := DestinationConfig{
		Name:           name,
		Kind:           kind,
		Role:           role,
		Endpoint:       endpoint,
		Compression:    CompressionNone,
		MaxMessageSize: DefaultFlightMaxMessageSize,
		SilenceTimeout: DefaultFlightSilenceTimeout,
		Lane: LaneConfig{
			Capacity:   DefaultLaneCapacity,
			MaxBytes:   DefaultLaneMaxBytes,
			AckTimeout: DefaultAckTimeout,
			MaxRetries: DefaultMaxRetries,

			PermanentBudget: DefaultPermanentBudget,
		},
	}
	if kind == KindFlight {
		d.Path = []string{name}
	}
	if kind == KindIceberg {
		d.Iceberg = IcebergConfig{
			Catalog:        IcebergCatalogConfig{Type: CatalogSQL, Name: DefaultIcebergCatalogName},
			CommitInterval: DefaultIcebergCommitInterval,
			TargetFileSize: DefaultIcebergTargetFileSize,
		}
		applyMaintenanceDefaults(&d.Iceberg.Maintenance, DefaultIcebergCommitInterval, "", func(string) bool { return false })
	}
	if kind == KindZerobus {
		d.Mode = ZerobusEphemeral
		d.MaxMessageSize = DefaultZerobusMaxMessageSize
		d.SilenceTimeout = DefaultZerobusSilenceTimeout
	}
	return d
}

// RawAnchor returns the raw_anchor destination, or nil if there is none
// (never the case for a Config that validates).
func (c *Config) RawAnchor() *DestinationConfig {
	for i := range c.Destinations {
		if c.Destinations[i].Role == RoleRawAnchor {
			return &c.Destinations[i]
		}
	}
	return nil
}

// applyDefaults fills list elements, whose fields Default cannot pre-fill,
// wherever their key was absent from the document (present reports whether
// a path was written with a non-null value). An explicit zero is kept so
// that Validate reports it instead of silently replacing it.
func (c *Config) applyDefaults(present func(path string) bool) {
	if a := c.RawAnchor(); a != nil && a.Kind == KindIceberg && !present("source.max_unacked") {
		c.Source.MaxUnacked = DefaultIcebergAnchorMaxUnacked
	}
	for i := range c.Destinations {
		d := &c.Destinations[i]
		p := indexPath("destinations", i)
		def := DefaultDestination(d.Name, d.Kind, d.Role, d.Endpoint)
		if !present(p+".path") && d.Kind == KindFlight && d.Name != "" {
			d.Path = def.Path
		}
		if !present(p+".mode") && d.Kind == KindZerobus {
			d.Mode = def.Mode
		}
		if !present(p + ".compression") {
			d.Compression = def.Compression
		}
		if d.Kind == KindIceberg {
			c.applyIcebergDefaults(&d.Iceberg, &def.Iceberg, p+".iceberg", present)
		}
		if !present(p + ".max_message_size") {
			d.MaxMessageSize = def.MaxMessageSize
		}
		if !present(p + ".silence_timeout") {
			d.SilenceTimeout = def.SilenceTimeout
		}
		if !present(p + ".lane.capacity") {
			d.Lane.Capacity = def.Lane.Capacity
		}
		if !present(p + ".lane.max_bytes") {
			d.Lane.MaxBytes = def.Lane.MaxBytes
		}
		if !present(p + ".lane.ack_timeout") {
			d.Lane.AckTimeout = def.Lane.AckTimeout
		}
		if !present(p + ".lane.max_retries") {
			d.Lane.MaxRetries = def.Lane.MaxRetries
		}
		if !present(p + ".lane.permanent_budget") {
			d.Lane.PermanentBudget = def.Lane.PermanentBudget
		}
	}
	if c.Schema.Mode == SchemaJSON {
		for i := range c.Schema.Fields {
			applyFieldDefaults(&c.Schema.Fields[i], indexPath("schema.fields", i), present)
		}
	}
}

// applyIcebergDefaults fills an iceberg destination's absent keys; the
// SQL catalog's file and warehouse go next to the offset store.
func (c *Config) applyIcebergDefaults(ic, def *IcebergConfig, p string, present func(string) bool) {
	if !present(p + ".catalog.type") {
		ic.Catalog.Type = def.Catalog.Type
	}
	if !present(p + ".catalog.name") {
		ic.Catalog.Name = def.Catalog.Name
	}
	if !present(p+".catalog.uri") && ic.Catalog.Type == CatalogSQL && c.Store.Dir != "" {
		ic.Catalog.URI = filepath.Join(IcebergDir(c.Store.Dir), "catalog.db")
	}
	if !present(p+".warehouse") && ic.Catalog.Type == CatalogSQL && c.Store.Dir != "" {
		ic.Warehouse = filepath.Join(IcebergDir(c.Store.Dir), "warehouse")
	}
	if !present(p + ".s3.path_style") {
		ic.S3.PathStyle = ic.S3.Endpoint != ""
	}
	if !present(p + ".commit_interval") {
		ic.CommitInterval = def.CommitInterval
	}
	if !present(p + ".target_file_size") {
		ic.TargetFileSize = def.TargetFileSize
	}
	applyMaintenanceDefaults(&ic.Maintenance, ic.CommitInterval, p+".maintenance", present)
}

// applyMaintenanceDefaults fills an iceberg destination's absent
// maintenance keys with iceberg.MaintenanceOptions' defaults.
func applyMaintenanceDefaults(m *IcebergMaintenanceConfig, commitInterval time.Duration, p string, present func(string) bool) {
	if !present(p + ".enabled") {
		m.Enabled = true
	}
	if !present(p + ".interval") {
		m.Interval = iceberg.DefaultMaintenanceInterval
	}
	if !present(p + ".snapshot_max_age") {
		m.SnapshotMaxAge = max(iceberg.DefaultSnapshotMaxAge, 10*commitInterval)
	}
	if !present(p + ".min_snapshots") {
		m.MinSnapshots = iceberg.DefaultMinSnapshots
	}
	if !present(p + ".orphan_age") {
		m.OrphanAge = max(iceberg.DefaultOrphanAge, 2*m.SnapshotMaxAge)
	}
	if !present(p + ".orphan_interval") {
		m.OrphanInterval = iceberg.DefaultOrphanInterval
	}
	if !present(p + ".timeout") {
		m.Timeout = iceberg.DefaultMaintenanceTimeout
	}
	if !present(p + ".compact_min_files") {
		m.CompactMinFiles = iceberg.DefaultCompactMinFiles
	}
	if !present(p + ".lease_ttl") {
		m.LeaseTTL = max(3*m.Interval, iceberg.DefaultMinLeaseTTL, 3*commitInterval)
	}
}

// IcebergDir is where an iceberg destination's default SQL catalog and
// warehouse live: next to the offset store at storeDir, not inside it, so
// that removing the store keeps the table.
func IcebergDir(storeDir string) string { return filepath.Clean(storeDir) + ".iceberg" }

// applyFieldDefaults fills the unit of timestamp fields at any depth. The
// recursion is bounded by the schema walk's maxDepth.
func applyFieldDefaults(f *FieldConfig, path string, present func(string) bool) {
	if f.Type == TypeTimestamp && !present(path+".unit") {
		f.Unit = DefaultTimeUnit
	}
	for i := range f.Fields {
		applyFieldDefaults(&f.Fields[i], indexPath(path+".fields", i), present)
	}
	if f.Items != nil {
		applyFieldDefaults(f.Items, path+".items", present)
	}
}
