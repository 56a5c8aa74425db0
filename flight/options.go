package flight

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// Compression selects the Arrow IPC body compression of the batches a Sink
// sends. The receiver needs no configuration: IPC messages say how they are
// compressed.
type Compression string

const (
	CompressionNone Compression = "none"
	CompressionLZ4  Compression = "lz4"  // LZ4 frame, ipc.WithLZ4
	CompressionZstd Compression = "zstd" // ipc.WithZstd
)

// ParseCompression accepts "", "none", "lz4" and "zstd" (any case).
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(strings.ToLower(strings.TrimSpace(s))); c {
	case "", CompressionNone:
		return CompressionNone, nil
	case CompressionLZ4, CompressionZstd:
		return c, nil
	default:
		return "", fmt.Errorf("flight: compression %q: want none, lz4 or zstd", s)
	}
}

// TLSOptions configures transport security. A nil *TLSOptions in Options
// means plaintext (loopback and tests only).
type TLSOptions struct {
	// CAFile is a PEM bundle of roots to trust instead of the system roots.
	// Empty means the system roots.
	CAFile string
	// CertFile and KeyFile are the client certificate for mutual TLS; both or
	// neither.
	CertFile, KeyFile string
	// ServerName overrides the name checked against the server certificate
	// (default: the host part of Endpoint).
	ServerName string
	// InsecureSkipVerify accepts any server certificate. For tests against a
	// self-signed server only: it gives up the authentication TLS exists for.
	InsecureSkipVerify bool
}

// Config builds the client TLS configuration these options describe.
func (t *TLSOptions) Config() (*tls.Config, error) {
	cfg, err := t.wire().Config()
	if err != nil {
		return nil, fmt.Errorf("flight: %w", err)
	}
	return cfg, nil
}

func (t *TLSOptions) wire() flightwire.TLS {
	return flightwire.TLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile,
		ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
}

// Defaults of Options, filled in by withDefaults after validate.
const (
	DefaultMaxMessageSize = 64 << 20
	DefaultAckTimeout     = 30 * time.Second
	DefaultCloseTimeout   = 2 * time.Second
	// NoAckTimeout, or any other negative Options.AckTimeout, disables the
	// lack-of-ack deadline.
	NoAckTimeout time.Duration = -1
)

// Options configure a Sink. Endpoint and Path are required; every other
// field's zero value selects its documented default. Dial validates what
// the caller wrote first (every problem at once, each naming its field and
// value, wrapped in ErrInvalidOptions: errors.Is), then fills in the
// defaults of the zero fields.
type Options struct {
	// Endpoint is the receiver's host:port (a gRPC target; "dns:///h:p" and
	// "passthrough:///..." forms are accepted too).
	Endpoint string
	// Path is the FlightDescriptor path naming the dataset; at least one
	// non-empty element.
	Path []string
	// TLS enables transport security; nil means plaintext.
	TLS *TLSOptions
	// Token, when set, is sent as "authorization: Bearer <Token>" metadata.
	Token string
	// Compression of the IPC bodies; default none.
	Compression Compression
	// MaxMessageSize is the largest gRPC message either side accepts
	// (default DefaultMaxMessageSize, 64 MiB; at least 64 KiB). Batches whose encoding would exceed it are split by
	// rows; the receiver must accept at least this size.
	MaxMessageSize int
	// AckTimeout is the lack-of-ack deadline: when batches are outstanding
	// and the acknowledged watermark has not moved for AckTimeout, the stream
	// is declared dead (ErrAckTimeout, permanent). It measures silence, not
	// round trips, so a slow but progressing server never trips it.
	// Default DefaultAckTimeout (30 s). Any negative value disables it
	// (NoAckTimeout): a dead stream is then noticed only by the transport
	// (gRPC keepalives, a reset connection), never by silence.
	AckTimeout time.Duration
	// CloseTimeout bounds how long Close waits for the server to finish the
	// stream after the send side is half-closed. Default DefaultCloseTimeout
	// (2 s); negative is invalid.
	CloseTimeout time.Duration
	// Allocator serves IPC encoding scratch (compression, rebased offsets of
	// sliced arrays). Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives stream lifecycle events. Default: slog.Default().
	Logger *slog.Logger
	// DialOptions are appended to the gRPC dial options (for example a
	// bufconn dialer in tests).
	DialOptions []grpc.DialOption
	// Ordered marks every batch's app_metadata "ordered":true: the batches
	// come from an ordered subscription (Exclusive, Failover), so the
	// receiver may acknowledge without storing again rows at or below its
	// stored position of their partition (idempotent append; see the wire
	// section of the package doc). Set it only when the source guarantees
	// that order; default false (store every row). Ignored with the
	// Zerobus variant.
	Ordered bool

	// variant selects the Zerobus flavour of the wire encoding (ready and
	// close-stream signals, per-message offset_ids). Only the zerobus
	// package's Flight mode sets it, through flightwire.SetVariant; nil is
	// thalweg's own encoding.
	variant *flightwire.Variant
}

func init() {
	flightwire.SetVariant = func(opts any, v *flightwire.Variant) { opts.(*Options).variant = v }
}

// withDefaults fills the zero fields with their defaults; it runs after
// validate and never overwrites a field the caller set (a negative
// AckTimeout stays negative: disabled).
func (o *Options) withDefaults() {
	if o.Compression == "" {
		o.Compression = CompressionNone
	}
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// minMessageSize leaves room for the FlightData framing of even a tiny batch.
const minMessageSize = 64 << 10

// ErrInvalidOptions wraps every error of Options validation (Dial); the
// message names each offending field.
var ErrInvalidOptions = errors.New("flight: invalid options")

// validate reports every problem of the caller's values at once, each
// naming its field, wrapped in ErrInvalidOptions. It runs before
// withDefaults, so a zero field (its default) is valid and messages name
// what the user wrote. A negative AckTimeout is valid: it disables the
// deadline.
func (o *Options) validate() error {
	var errs []error
	if strings.TrimSpace(o.Endpoint) == "" {
		errs = append(errs, errors.New("Options.Endpoint is required"))
	}
	if len(o.Path) == 0 {
		errs = append(errs, errors.New("Options.Path is required (the dataset's FlightDescriptor path)"))
	}
	for i, p := range o.Path {
		if p == "" {
			errs = append(errs, fmt.Errorf("Options.Path[%d] is empty", i))
		}
	}
	if _, err := ParseCompression(string(o.Compression)); err != nil {
		errs = append(errs, fmt.Errorf("Options.Compression: %w", err))
	}
	if o.MaxMessageSize != 0 && o.MaxMessageSize < minMessageSize {
		errs = append(errs, fmt.Errorf("Options.MaxMessageSize %d is below the minimum %d (0 selects %d)", o.MaxMessageSize, minMessageSize, DefaultMaxMessageSize))
	}
	if o.CloseTimeout < 0 {
		errs = append(errs, fmt.Errorf("Options.CloseTimeout %v is negative (0 selects %v)", o.CloseTimeout, DefaultCloseTimeout))
	}
	if o.TLS != nil {
		// dialOptions builds the configuration again; checking it here
		// reports a bad TLS file together with the other problems.
		if _, err := o.TLS.wire().Config(); err != nil {
			errs = append(errs, fmt.Errorf("Options.%w", err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

func (o *Options) dialOptions() ([]grpc.DialOption, error) {
	opts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(
			grpc.MaxCallSendMsgSize(o.MaxMessageSize),
			grpc.MaxCallRecvMsgSize(o.MaxMessageSize),
		),
		// gRPC's default pool zeroes every buffer it hands out; its users
		// overwrite what they read (flightwire.DirtyPool).
		experimental.WithBufferPool(flightwire.Pool),
		grpc.WithWriteBufferSize(flightwire.WriteBufferSize),
	}
	if o.TLS != nil {
		cfg, err := o.TLS.wire().Config()
		if err != nil {
			return nil, fmt.Errorf("%w: Options.%w", ErrInvalidOptions, err)
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	return append(opts, o.DialOptions...), nil
}
