package zerobus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// Mode selects the wire protocol.
type Mode int

const (
	// ModeEphemeral speaks the Zerobus EphemeralStream gRPC protocol.
	ModeEphemeral Mode = iota
	// ModeFlight speaks the Arrow Flight DoPut variant.
	ModeFlight
)

func (m Mode) String() string {
	switch m {
	case ModeEphemeral:
		return "ephemeral"
	case ModeFlight:
		return "flight"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "ephemeral" or "flight".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ephemeral", "":
		return ModeEphemeral, nil
	case "flight":
		return ModeFlight, nil
	}
	return 0, fmt.Errorf("zerobus: unknown mode %q (want ephemeral or flight)", s)
}

// Encoding selects how ephemeral-mode records are encoded.
type Encoding int

const (
	// EncodingJSON sends each row as a JSON object (record_type JSON).
	EncodingJSON Encoding = iota
	// EncodingProto sends each row as a protobuf message whose descriptor is
	// derived from the batches' schema, Options.Schema for the first stream
	// (record_type PROTO; a batch with another schema goes on a new stream).
	EncodingProto
)

func (e Encoding) String() string {
	switch e {
	case EncodingJSON:
		return "json"
	case EncodingProto:
		return "proto"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// ParseEncoding parses "json" or "proto".
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "json", "":
		return EncodingJSON, nil
	case "proto":
		return EncodingProto, nil
	}
	return 0, fmt.Errorf("zerobus: unknown encoding %q (want json or proto)", s)
}

// TLSOptions choose the transport security. The zero value verifies the
// server against the system roots.
type TLSOptions struct {
	// CAFile, when set, is a PEM bundle that replaces the system roots.
	CAFile string
	// ServerName overrides the name verified in the server certificate.
	ServerName string
	// CertFile and KeyFile are a PEM client certificate and key for mutual
	// TLS; both or neither.
	CertFile, KeyFile string
	// InsecureSkipVerify accepts any server certificate. For tests against a
	// self-signed server only: it gives up the authentication TLS exists for.
	InsecureSkipVerify bool
	// Insecure disables TLS. It is allowed only for loopback endpoints (and
	// with Options.Dialer, which is in-process).
	Insecure bool
}

// Clock is the time source of the sink's timeouts.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Defaults of Options.
const (
	// DefaultMaxMessageSize is the service's request limit, 10 MiB.
	DefaultMaxMessageSize = 10 << 20
	// DefaultMaxPayload keeps every request message just under the
	// service's 10 MiB limit, leaving room for the envelope.
	DefaultMaxPayload = DefaultMaxMessageSize - payloadHeadroom
	// DefaultAckTimeout is the default of Options.AckTimeout.
	DefaultAckTimeout = 60 * time.Second
	// DefaultOpenTimeout is the default of Options.OpenTimeout.
	DefaultOpenTimeout = 15 * time.Second
)

// payloadHeadroom is what MaxPayload leaves of MaxMessageSize for the
// request envelope (stream and offset fields, Flight framing).
const payloadHeadroom = 64 << 10

// Compression selects the Arrow IPC body compression of Flight mode.
type Compression string

const (
	CompressionNone Compression = "none" // default
	CompressionLZ4  Compression = "lz4"  // LZ4 frame, ipc.WithLZ4
	CompressionZstd Compression = "zstd" // ipc.WithZstd
)

// Options configure Dial. Endpoint and Table are required. Dial fills in
// the documented defaults of the zero fields and validates: every problem
// is reported at once, each naming its field, wrapped in ErrInvalidOptions
// (errors.Is).
type Options struct {
	// Endpoint is host:port, optionally prefixed by https:// or http://.
	Endpoint string
	// Table is the three-part name catalog.schema.table.
	Table string
	// Token is sent as "authorization: Bearer <Token>" when not empty.
	Token string
	TLS   TLSOptions
	// Mode is the protocol (default ModeEphemeral).
	Mode Mode
	// Encoding of ephemeral-mode records (default EncodingJSON). Flight mode
	// sends Arrow batches as they are and ignores it.
	Encoding Encoding
	// Schema of the first stream's batches. Required for EncodingProto (the
	// descriptor is sent when Dial creates the first stream); a batch with
	// another schema goes on a new stream (see the package documentation).
	Schema *arrow.Schema
	// MaxMessageSize is the largest gRPC message either side accepts.
	// Default DefaultMaxMessageSize (the service's limit), or MaxPayload
	// plus 64 KiB when MaxPayload is set and larger.
	MaxMessageSize int
	// MaxPayload bounds the encoded records of one request message: a batch
	// whose encoding is larger is split into several messages. Default
	// MaxMessageSize − 64 KiB; at most that.
	MaxPayload int
	// Compression of the Arrow IPC bodies in Flight mode: none (default),
	// lz4 or zstd. Ephemeral mode sends JSON or protobuf records and accepts
	// only none.
	Compression Compression
	// AckTimeout fails the stream when records are outstanding and the ack
	// watermark has not moved for this long. Default DefaultAckTimeout (60s).
	AckTimeout time.Duration
	// OpenTimeout bounds opening one stream (create_stream and its answer,
	// or Flight's ready signal). Default DefaultOpenTimeout (15s).
	OpenTimeout time.Duration
	// MaxRotationWait caps how long a close-stream signal makes the sink wait
	// for outstanding acks before it moves to a new stream. Default: the
	// duration the server announced. Neither mode keeps a copy of what it
	// wrote, so if batches are still unacknowledged then, the Sink fails
	// and the lane replays them.
	MaxRotationWait time.Duration
	// Allocator backs Flight-mode slices and IPC buffers. Default
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives stream lifecycle events. Default: slog.Default().
	Logger *slog.Logger
	// Clock drives AckTimeout. Default: the system clock.
	Clock Clock
	// Dialer, when set, makes the connection (e.g. a bufconn in tests).
	Dialer func(ctx context.Context, addr string) (net.Conn, error)
}

// ErrInvalidOptions wraps every error of Options validation (Dial); the
// message names each offending field.
var ErrInvalidOptions = errors.New("zerobus: invalid options")

// withDefaults returns o with the documented defaults filled in, or every
// problem at once, each naming its field, wrapped in ErrInvalidOptions.
func (o *Options) withDefaults() (Options, error) {
	c := *o
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Endpoint == "" {
		bad("Options.Endpoint is required")
	}
	if c.Table == "" {
		bad("Options.Table is required")
	} else if strings.Count(c.Table, ".") != 2 {
		bad("Options.Table %q is not catalog.schema.table", c.Table)
	}
	if c.Mode != ModeEphemeral && c.Mode != ModeFlight {
		bad("Options.Mode %d is unknown", int(c.Mode))
	}
	if c.Encoding != EncodingJSON && c.Encoding != EncodingProto {
		bad("Options.Encoding %d is unknown", int(c.Encoding))
	}
	if c.Mode == ModeEphemeral && c.Encoding == EncodingProto && c.Schema == nil {
		bad("Options.Schema is required for EncodingProto")
	}
	for _, d := range []struct {
		name string
		v    int64
	}{{"MaxMessageSize", int64(c.MaxMessageSize)}, {"MaxPayload", int64(c.MaxPayload)}, {"AckTimeout", int64(c.AckTimeout)},
		{"OpenTimeout", int64(c.OpenTimeout)}, {"MaxRotationWait", int64(c.MaxRotationWait)}} {
		if d.v < 0 {
			bad("Options.%s must not be negative (0 selects the default)", d.name)
		}
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = max(DefaultMaxMessageSize, c.MaxPayload+payloadHeadroom)
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = c.MaxMessageSize - payloadHeadroom
	}
	if c.MaxPayload < 1024 {
		bad("Options.MaxPayload %d is below 1 KiB", c.MaxPayload)
	} else if c.MaxPayload > c.MaxMessageSize-payloadHeadroom {
		bad("Options.MaxPayload %d leaves less than 64 KiB of Options.MaxMessageSize %d for the envelope", c.MaxPayload, c.MaxMessageSize)
	}
	switch c.Compression {
	case "":
		c.Compression = CompressionNone
	case CompressionNone:
	case CompressionLZ4, CompressionZstd:
		if c.Mode != ModeFlight {
			bad("Options.Compression %q needs ModeFlight (ephemeral mode sends JSON or protobuf records, not Arrow IPC)", c.Compression)
		}
	default:
		bad("Options.Compression %q: want none, lz4 or zstd", c.Compression)
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = DefaultAckTimeout
	}
	if c.OpenTimeout == 0 {
		c.OpenTimeout = DefaultOpenTimeout
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.Endpoint != "" {
		host := c.Endpoint
		for _, p := range []string{"https://", "http://"} {
			host = strings.TrimPrefix(host, p)
		}
		host = strings.TrimSuffix(host, "/")
		if h, _, err := net.SplitHostPort(host); err != nil {
			bad("Options.Endpoint %q: %w", c.Endpoint, err)
		} else {
			c.Endpoint = host
			if c.TLS.Insecure && c.Dialer == nil && !isLoopback(h) {
				bad("Options.TLS.Insecure is only allowed for loopback endpoints, not %q", h)
			}
		}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (o *Options) credentials() (credentials.TransportCredentials, error) {
	if o.TLS.Insecure {
		return insecure.NewCredentials(), nil
	}
	cfg, err := flightwire.TLS{CAFile: o.TLS.CAFile, CertFile: o.TLS.CertFile, KeyFile: o.TLS.KeyFile,
		ServerName: o.TLS.ServerName, InsecureSkipVerify: o.TLS.InsecureSkipVerify}.Config()
	if err != nil {
		return nil, fmt.Errorf("%w: Options.%w", ErrInvalidOptions, err)
	}
	return credentials.NewTLS(cfg), nil
}
