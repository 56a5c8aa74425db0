package iceberg

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Defaults of Options.
const (
	// DefaultCommitInterval is the least time between two snapshot commits
	// of a Sink. A commit is what acknowledges the batches it covers, and
	// the worker acknowledges nothing upstream before it: the interval is
	// the latency a record adds and bounds what waits in memory for a
	// commit (at 200,000 records/s, one second is 200,000 records, within
	// the worker's default source.max_unacked of 262,144). A longer one
	// makes fewer snapshots and larger files; raise source.max_unacked and
	// the lane's max_bytes with it (docs/operations.md, "Iceberg anchor").
	DefaultCommitInterval = time.Second
	// DefaultTargetFileSize is the size at which a Sink closes a data file
	// and starts the next before a commit closes it (Iceberg's own
	// write.target-file-size-bytes default is 512 MiB; files here are
	// closed by every commit first unless the interval is long).
	DefaultTargetFileSize int64 = 128 << 20
	// DefaultCatalogName is the catalog's name: the SQL catalog's
	// catalog_name column, which pyiceberg's and the JDBC SqlCatalog match
	// against the name they are given.
	DefaultCatalogName = "thalweg"
	// DefaultCommitTimeout bounds one commit attempt (catalog and metadata
	// writes); an attempt that outlasts it has an unknown outcome, resolved
	// from the table by its commit id.
	DefaultCommitTimeout = time.Minute
	// DefaultMaxBackoff bounds the growing wait between failed commit
	// attempts.
	DefaultMaxBackoff = 10 * time.Second
)

// ErrInvalidOptions wraps every Options validation error.
var ErrInvalidOptions = errors.New("iceberg: invalid options")

// CatalogType selects the catalog implementation.
type CatalogType string

const (
	// CatalogSQL is a SQL catalog on a SQLite database file, the layout of
	// the JDBC catalog and of pyiceberg's SqlCatalog (tables
	// iceberg_tables and iceberg_namespace_properties): no server. The
	// default.
	CatalogSQL CatalogType = "sql"
	// CatalogREST is an Iceberg REST catalog server.
	CatalogREST CatalogType = "rest"
)

// CatalogOptions says how to reach the catalog.
type CatalogOptions struct {
	// Type is CatalogSQL (default) or CatalogREST.
	Type CatalogType
	// URI is, for CatalogSQL, the SQLite database file (a path, created
	// when missing); for CatalogREST, the server's base URL
	// (http://host:port). Required.
	URI string
	// Name is the catalog's name. Default DefaultCatalogName.
	Name string
	// Token is a bearer token sent to a REST catalog. Optional.
	Token string
	// Credential is an OAuth2 client credential ("client_id:secret") a
	// REST catalog exchanges for a token. Optional.
	Credential string
	// Properties are passed to the catalog as they are (for the long tail
	// of catalog settings: a REST prefix, scope, extra io properties).
	// They are applied before the settings above and Options.S3, which
	// win on a clash.
	Properties map[string]string
}

// S3Options configure an S3-compatible warehouse (s3:// or s3a://). With
// AccessKeyID empty, credentials come from the usual AWS chain
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the
// shared config and credentials files, an instance role).
type S3Options struct {
	// Endpoint of an S3-compatible server (https://host:port); empty for
	// AWS S3.
	Endpoint string
	// Region; empty takes AWS_REGION or the shared config's.
	Region string
	// PathStyle addresses buckets by path (http://host/bucket/key) rather
	// than by virtual host. Most S3-compatible servers need it; AWS S3
	// does not. Default false with no Endpoint, true with one (what
	// iceberg-go chooses); set it to override.
	PathStyle *bool
	// AccessKeyID and SecretAccessKey are static credentials; set both or
	// neither. SessionToken goes with them when they are temporary.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// Options configure a Table (Open) and the Sinks it dials.
type Options struct {
	// Catalog is where the table is registered. Catalog.URI is required.
	Catalog CatalogOptions
	// Warehouse is the root location of new tables: file:///path or a
	// plain absolute path for the local file system (with nothing a URL
	// escapes: CheckLocalWarehouse), s3://bucket/prefix for object
	// storage. Required for CatalogSQL; for CatalogREST it is sent to the
	// server as its warehouse and may be empty (the server's default).
	Warehouse string
	// Table is "namespace.table"; a dotted namespace ("a.b.table") is
	// nested. The namespace and the table are created when missing, the
	// table with the schema of the first batch. Required.
	Table string
	// S3 configures an s3:// warehouse.
	S3 S3Options
	// PartitionBy is the partition spec of the table a Sink creates: Iceberg
	// transforms of named columns ("day(publish_time)", "bucket(16, key)",
	// "identity(topic)", "truncate(4, key)"; ParsePartitionTerm). The
	// columns are those of the first batch's schema. A table that exists is
	// used with the spec it has (a log line says so when it differs).
	// Default none: an unpartitioned table.
	PartitionBy []string
	// CommitInterval is the least time between two commits of a Sink.
	// Default DefaultCommitInterval.
	CommitInterval time.Duration
	// TargetFileSize is the size of a data file at which a Sink starts the
	// next one. Default DefaultTargetFileSize.
	TargetFileSize int64
	// Encoders is how many batches a Sink converts and encodes at once,
	// each encoder into a data file of its own (so a commit adds up to
	// that many files). Default DefaultEncoders; one per table for a
	// table template's tables.
	Encoders int
	// CommitTimeout bounds one commit attempt. Default DefaultCommitTimeout.
	CommitTimeout time.Duration
	// MaxBackoff bounds the wait between failed commit attempts. Default
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Ordered says the batches come from an ordered subscription
	// (Exclusive, Failover): a row at or below its partition's position
	// in the table is stored already and is dropped, before it is written
	// and again at every commit against the table as it is then (another
	// worker's commit may have stored it). Without it every row is stored
	// (at-least-once).
	Ordered bool
	// Allocator for the batches Rebuild returns and for conversions.
	// Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger for commit retries and conflicts. Default slog.Default().
	Logger *slog.Logger
	// MeterProvider for the commit instruments (thalweg.iceberg.*).
	// Default no-op.
	MeterProvider metric.MeterProvider
	// Destination is the instruments' destination attribute. Default
	// Table.
	Destination string
	// Maintenance configures snapshot expiry and orphan file cleanup,
	// which a Sink runs between its commits (on unless Disabled).
	Maintenance MaintenanceOptions

	hooks hooks // failure injection (export_test.go)
	// partitionBy is PartitionBy parsed (validate).
	partitionBy []PartitionTerm
}

func (o *Options) validate() error {
	var errs []error
	switch o.Catalog.Type {
	case "", CatalogSQL, CatalogREST:
	default:
		errs = append(errs, fmt.Errorf("Options.Catalog.Type %q: want %q or %q", o.Catalog.Type, CatalogSQL, CatalogREST))
	}
	if o.Catalog.URI == "" {
		errs = append(errs, errors.New("Options.Catalog.URI is required"))
	} else if o.Catalog.Type == CatalogREST {
		if u, err := url.Parse(o.Catalog.URI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("Options.Catalog.URI %q: want http://host:port or https://host:port", o.Catalog.URI))
		}
	}
	if o.Warehouse == "" && o.Catalog.Type != CatalogREST {
		errs = append(errs, errors.New("Options.Warehouse is required for a SQL catalog"))
	} else if o.Warehouse != "" {
		if err := checkWarehouse(o.Warehouse); err != nil {
			errs = append(errs, fmt.Errorf("Options.Warehouse %q: %w", o.Warehouse, err))
		}
	}
	if IsTemplate(o.Table) {
		errs = append(errs, fmt.Errorf("Options.Table %q is a template: open it with OpenTables", o.Table))
	} else if _, _, err := splitTable(o.Table); err != nil {
		errs = append(errs, fmt.Errorf("Options.Table %q: %w", o.Table, err))
	} else if localWarehouse(o.Warehouse) {
		if err := CheckLocalTable(o.Table); err != nil {
			errs = append(errs, fmt.Errorf("Options.Table %q: %w", o.Table, err))
		}
	}
	if terms, err := ParsePartitionBy(o.PartitionBy); err != nil {
		errs = append(errs, fmt.Errorf("Options.PartitionBy: %w", err))
	} else {
		o.partitionBy = terms
	}
	if (o.S3.AccessKeyID == "") != (o.S3.SecretAccessKey == "") {
		errs = append(errs, errors.New("Options.S3.AccessKeyID and Options.S3.SecretAccessKey: set both or neither"))
	}
	if o.S3.SessionToken != "" && o.S3.AccessKeyID == "" {
		errs = append(errs, errors.New("Options.S3.SessionToken needs Options.S3.AccessKeyID"))
	}
	if o.CommitInterval < 0 {
		errs = append(errs, fmt.Errorf("Options.CommitInterval must be >= 0, got %v", o.CommitInterval))
	}
	if o.TargetFileSize < 0 {
		errs = append(errs, fmt.Errorf("Options.TargetFileSize must be >= 0, got %d", o.TargetFileSize))
	}
	if o.Encoders < 0 {
		errs = append(errs, fmt.Errorf("Options.Encoders must be >= 0, got %d", o.Encoders))
	}
	if o.CommitTimeout < 0 {
		errs = append(errs, fmt.Errorf("Options.CommitTimeout must be >= 0, got %v", o.CommitTimeout))
	}
	if o.MaxBackoff < 0 {
		errs = append(errs, fmt.Errorf("Options.MaxBackoff must be >= 0, got %v", o.MaxBackoff))
	}
	errs = append(errs, o.Maintenance.validate(o.CommitInterval, o.CommitTimeout)...)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

func (o *Options) withDefaults() {
	if o.Catalog.Type == "" {
		o.Catalog.Type = CatalogSQL
	}
	if o.Catalog.Name == "" {
		o.Catalog.Name = DefaultCatalogName
	}
	if o.CommitInterval == 0 {
		o.CommitInterval = DefaultCommitInterval
	}
	if o.TargetFileSize == 0 {
		o.TargetFileSize = DefaultTargetFileSize
	}
	if o.CommitTimeout == 0 {
		o.CommitTimeout = DefaultCommitTimeout
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.Destination == "" {
		o.Destination = o.Table
	}
	o.Maintenance.withDefaults(o.CommitInterval)
	if strings.HasPrefix(o.Warehouse, "/") {
		o.Warehouse = "file://" + o.Warehouse
	}
}

// localWarehouse reports whether w is a local warehouse (a path or a
// file: URI).
func localWarehouse(w string) bool {
	return strings.HasPrefix(w, "/") || strings.HasPrefix(strings.ToLower(w), "file:")
}

// checkWarehouse accepts the locations iceberg-go can write: the local
// file system (CheckLocalWarehouse) and S3.
func checkWarehouse(w string) error {
	if strings.HasPrefix(w, "/") {
		return CheckLocalWarehouse(w)
	}
	u, err := url.Parse(w)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "file":
		if p, err := literalPath(w); err != nil || !strings.HasPrefix(p, "/") {
			return errors.New("want file:///absolute/path")
		}
		return CheckLocalWarehouse(w)
	case "s3", "s3a":
		if u.Host == "" {
			return errors.New("want s3://bucket[/prefix]")
		}
	default:
		return errors.New("want an absolute path, file:///path or s3://bucket/prefix")
	}
	return nil
}

// CheckLocalWarehouse refuses a local warehouse (a path or file:///path)
// whose path a URL spells otherwise (a space, '%', '#', non-ASCII; see
// urlNeutral), naming the characters: iceberg-go records a table's files
// under the escaped path, which pyiceberg and the Sink open as written,
// while the catalogs write metadata files under the path unescaped.
func CheckLocalWarehouse(w string) error {
	p, err := literalPath(w)
	if err != nil {
		return err
	}
	if err := urlEscapes(p); err != nil {
		return fmt.Errorf("the path %w: use letters, digits and -_.~/ only", err)
	}
	return nil
}

// CheckLocalTable refuses the name of a table (namespace.table) on a
// local warehouse that a URL spells otherwise, naming the characters: the
// table's directory is named after it (CheckLocalWarehouse).
func CheckLocalTable(name string) error {
	if err := urlEscapes(name); err != nil {
		return fmt.Errorf("the name %w, and a table on a local warehouse is a directory named after it: "+
			"use letters, digits and -_.~ only", err)
	}
	return nil
}

// urlEscapes names the characters of p a URL path escapes, if any.
func urlEscapes(p string) error {
	if urlNeutral(p) {
		return nil
	}
	var bad []string
	for _, r := range p {
		if c := string(r); !urlNeutral("/"+c) && !slices.Contains(bad, c) {
			bad = append(bad, c)
		}
	}
	return fmt.Errorf("has characters a URL escapes (%q), which Iceberg engines do not agree on", strings.Join(bad, ""))
}

// splitTable splits "a.b.table" into its namespace and name.
func splitTable(s string) (namespace []string, name string, err error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, "", errors.New(`want "namespace.table"`)
	}
	for _, p := range parts {
		if p == "" {
			return nil, "", errors.New(`want "namespace.table" with no empty part`)
		}
	}
	return parts[:len(parts)-1], parts[len(parts)-1], nil
}
