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
	"github.com/thalweg/thalweg/internal/optcheck"
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

// Clock is the time source of ModeEphemeral's ack timeout and close-stream
// grace. Tests move it while the sink talks to a real gRPC server on
// loopback, which a testing/synctest bubble cannot hold. ModeFlight's ack
// watchdog reads the time package.
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

// Options configure Dial. Endpoint and Table are required; every other
// field's zero value selects its documented default. Dial validates what
// the caller wrote first (every problem at once, each naming its field and
// value, wrapped in ErrInvalidOptions: errors.Is), then fills in the
// defaults of the zero fields.
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
	// Clock drives AckTimeout and the close-stream grace in ModeEphemeral.
	// Default: the system clock.
	Clock Clock
	// Dialer, when set, makes the connection (e.g. a bufconn in tests).
	Dialer func(ctx context.Context, addr string) (net.Conn, error)
}

// ErrInvalidOptions wraps every error of Options validation (Dial); the
// message names each offending field.
var ErrInvalidOptions = errors.New("zerobus: invalid options")

// validate reports every problem of the caller's values at once, each
// naming its field and the value it got, wrapped in ErrInvalidOptions. It
// runs before withDefaults, so that messages name what the user wrote; the
// relation of MaxPayload and MaxMessageSize is checked on the values Dial
// will use, a defaulted one named as "0 (default N)".
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Endpoint == "" {
		bad("Options.Endpoint is required")
	} else if h, err := endpointHost(o.Endpoint); err != nil {
		bad("Options.Endpoint %q: %w", o.Endpoint, err)
	} else if o.TLS.Insecure && o.Dialer == nil && !isLoopback(h) {
		bad("Options.TLS.Insecure is only allowed for loopback endpoints, not %q", h)
	}
	if o.Table == "" {
		bad("Options.Table is required")
	} else if strings.Count(o.Table, ".") != 2 {
		bad("Options.Table %q is not catalog.schema.table", o.Table)
	}
	if o.Mode != ModeEphemeral && o.Mode != ModeFlight {
		bad("Options.Mode %d is unknown", int(o.Mode))
	}
	if o.Encoding != EncodingJSON && o.Encoding != EncodingProto {
		bad("Options.Encoding %d is unknown", int(o.Encoding))
	}
	if o.Mode == ModeEphemeral && o.Encoding == EncodingProto && o.Schema == nil {
		bad("Options.Schema is required for EncodingProto")
	}
	sizesOK := true
	for _, n := range []struct {
		name string
		v    int
	}{{"MaxMessageSize", o.MaxMessageSize}, {"MaxPayload", o.MaxPayload}} {
		if n.v < 0 {
			bad("Options.%s %d is negative (0 selects the default)", n.name, n.v)
			sizesOK = false
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"AckTimeout", o.AckTimeout}, {"OpenTimeout", o.OpenTimeout}, {"MaxRotationWait", o.MaxRotationWait}} {
		if d.v < 0 {
			bad("Options.%s %v is negative (0 selects the default)", d.name, d.v)
		}
	}
	if sizesOK {
		// A negative size above would only repeat itself here.
		e := *o
		e.withDefaults()
		if e.MaxPayload < 1024 {
			bad("Options.MaxPayload %s is below 1 KiB", optcheck.OrDefault(o.MaxPayload, e.MaxPayload))
		} else if e.MaxPayload > e.MaxMessageSize-payloadHeadroom {
			bad("Options.MaxPayload %s leaves less than 64 KiB of Options.MaxMessageSize %s for the envelope",
				optcheck.OrDefault(o.MaxPayload, e.MaxPayload), optcheck.OrDefault(o.MaxMessageSize, e.MaxMessageSize))
		}
	}
	switch o.Compression {
	case "", CompressionNone:
	case CompressionLZ4, CompressionZstd:
		if o.Mode != ModeFlight {
			bad("Options.Compression %q needs ModeFlight (ephemeral mode sends JSON or protobuf records, not Arrow IPC)", o.Compression)
		}
	default:
		bad("Options.Compression %q: want none, lz4 or zstd", o.Compression)
	}
	if !o.TLS.Insecure {
		// credentials builds the configuration again; checking it here
		// reports a bad TLS file together with the other problems.
		if _, err := o.TLS.wire().Config(); err != nil {
			bad("Options.%w", err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
	}
	return nil
}

// withDefaults fills the zero fields with their defaults; it runs after
// validate and never overwrites a field the caller set.
func (o *Options) withDefaults() {
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = max(DefaultMaxMessageSize, o.MaxPayload+payloadHeadroom)
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = o.MaxMessageSize - payloadHeadroom
	}
	if o.Compression == "" {
		o.Compression = CompressionNone
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.OpenTimeout == 0 {
		o.OpenTimeout = DefaultOpenTimeout
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
}

// endpointHost strips Endpoint's optional scheme and trailing slash and
// returns the host of what is left, which must be host:port.
func endpointHost(endpoint string) (string, error) {
	h, _, err := net.SplitHostPort(dialTarget(endpoint))
	return h, err
}

// dialTarget is the host:port Dial connects to: Endpoint without its
// optional https:// or http:// prefix and trailing slash.
func dialTarget(endpoint string) string {
	for _, p := range []string{"https://", "http://"} {
		endpoint = strings.TrimPrefix(endpoint, p)
	}
	return strings.TrimSuffix(endpoint, "/")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (t *TLSOptions) wire() flightwire.TLS {
	return flightwire.TLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile,
		ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
}

func (o *Options) credentials() (credentials.TransportCredentials, error) {
	if o.TLS.Insecure {
		return insecure.NewCredentials(), nil
	}
	cfg, err := o.TLS.wire().Config()
	if err != nil {
		return nil, fmt.Errorf("%w: Options.%w", ErrInvalidOptions, err)
	}
	return credentials.NewTLS(cfg), nil
}
