package zerobus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/flightwire"
)

// dialFlight opens the Flight mode: the flight sink speaking the Zerobus
// variant of the encoding (internal/flightwire.Variant: the table and token
// headers, the ready signal, per-message offset_ids, close-stream). The
// flight sink keeps nothing the lane does not: on a rotation it moves to a
// new stream once the old one acknowledged everything, and a stream that
// ends with batches unacknowledged fails the sink, which the lane replaces
// and replays.
func dialFlight(ctx context.Context, o Options) (*Sink, error) {
	fo := flight.Options{
		Endpoint:       o.Endpoint,
		Path:           strings.Split(o.Table, "."),
		Compression:    flight.Compression(o.Compression),
		MaxMessageSize: o.MaxMessageSize,
		AckTimeout:     o.AckTimeout,
		Allocator:      o.Allocator,
		Logger:         o.Logger,
	}
	v := &flightwire.Variant{
		Headers:         map[string]string{headerTableName: o.Table},
		MaxPayload:      o.MaxPayload,
		MaxRotationWait: o.MaxRotationWait,
		OpenTimeout:     o.OpenTimeout,
	}
	if o.Token != "" {
		v.Headers[headerAuthorization] = "Bearer " + o.Token
	}
	flightwire.SetVariant(&fo, v)
	if !o.TLS.Insecure {
		fo.TLS = &flight.TLSOptions{CAFile: o.TLS.CAFile, CertFile: o.TLS.CertFile, KeyFile: o.TLS.KeyFile,
			ServerName: o.TLS.ServerName, InsecureSkipVerify: o.TLS.InsecureSkipVerify}
	}
	if o.Dialer != nil {
		fo.Endpoint = "passthrough:///" + o.Endpoint
		fo.DialOptions = []grpc.DialOption{grpc.WithContextDialer(o.Dialer)}
	}
	fs, err := flight.Dial(ctx, fo)
	if err != nil {
		return nil, flightError("create_stream", err)
	}
	o.Logger.Info("zerobus: stream open", "endpoint", o.Endpoint, "table", o.Table, "mode", o.Mode.String())
	return &Sink{opts: o, fl: fs}, nil
}

func (s *Sink) sendFlight(ctx context.Context, offset uint64, b *batch.Batch) error {
	return flightError("send", s.fl.Send(ctx, offset, b))
}

func (s *Sink) waitFlight(ctx context.Context, offset uint64) error {
	return flightError("ack", s.fl.WaitDurable(ctx, offset))
}

// flightSentinels maps the flight sink's causes to this package's, so that
// a caller matches one set of sentinels whatever the Mode.
var flightSentinels = []struct {
	flight, zerobus error
	code            codes.Code
}{
	{flight.ErrAckTimeout, ErrAckTimeout, codes.DeadlineExceeded},
	{flight.ErrBadAck, ErrProtocol, codes.Internal},
	{flight.ErrStreamEnded, ErrStreamEnded, codes.OK},
	{flight.ErrOffsetOrder, ErrOffsetOrder, codes.OK},
	{flight.ErrRowTooLarge, ErrRecordTooLarge, codes.InvalidArgument},
	{flight.ErrUnsupportedSchema, ErrSchemaMismatch, codes.InvalidArgument},
}

// flightError turns an error of the flight sink into this package's: nil,
// a context error and ErrClosed as they are, an options error wrapped in
// ErrInvalidOptions, everything else an *Error with the gRPC code and the
// matching sentinel. A permanent flight error means the sink is dead.
func flightError(op string, err error) error {
	var fe *flight.Error
	switch {
	case err == nil || errors.Is(err, context.Canceled) && !errors.As(err, &fe) || errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &fe):
		return err
	case errors.Is(err, flight.ErrClosed):
		return ErrClosed
	case errors.Is(err, flight.ErrInvalidOptions):
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	case !errors.As(err, &fe):
		return &Error{Op: op, Code: codes.Unknown, Err: err}
	}
	ze := &Error{Op: op, Code: fe.Code, StreamDead: fe.Permanent() && fe.Op != "dial", Err: fe.Err}
	if fe.Op == "dial" && fe.Permanent() && !permanentCodes[fe.Code] {
		ze.StreamDead = true // a rejection without a code of its own: do not retry as is
	}
	for _, m := range flightSentinels {
		if errors.Is(err, m.flight) {
			ze.Err = fmt.Errorf("%w: %w", m.zerobus, fe.Err)
			if ze.Code == codes.OK {
				ze.Code = m.code
			}
			break
		}
	}
	return ze
}
