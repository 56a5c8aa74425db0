package zerobus

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// checkEvent asserts what the sink's state machine relies on: an error is a
// dead-stream protocol error; an event's ack is a real physical offset and
// its grace is bounded and not negative.
func checkEvent(t *testing.T, ev event, err error) {
	t.Helper()
	if err != nil {
		var ze *Error
		if !errors.Is(err, ErrProtocol) || !errors.As(err, &ze) || !ze.StreamDead || !ze.Permanent() {
			t.Fatalf("error %v is not a permanent protocol error", err)
		}
		return
	}
	if ev.hasAck && ev.ack < 0 {
		t.Fatalf("ack %d accepted", ev.ack)
	}
	if ev.close && (ev.closeAfter < 0 || ev.closeAfter > flightwire.MaxCloseAfter) {
		t.Fatalf("close grace %v accepted", ev.closeAfter)
	}
	if !ev.hasAck && !ev.close && ev != (event{}) {
		t.Fatalf("event %+v carries data without a kind", ev)
	}
}

// The Flight variant's PutResult app_metadata is parsed by
// internal/flightwire.ParseAck (FuzzParseAck there).

// FuzzEphemeralResponse is the sink's parsing of EphemeralStreamResponse messages,
// from their wire bytes.
func FuzzEphemeralResponse(f *testing.F) {
	add := func(m *zerobuspb.EphemeralStreamResponse) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ack := func(off int64) *zerobuspb.EphemeralStreamResponse {
		return &zerobuspb.EphemeralStreamResponse{Payload: &zerobuspb.EphemeralStreamResponse_IngestRecordResponse{
			IngestRecordResponse: &zerobuspb.IngestRecordResponse{DurabilityAckUpToOffset: &off}}}
	}
	closeSig := func(d *durationpb.Duration) *zerobuspb.EphemeralStreamResponse {
		return &zerobuspb.EphemeralStreamResponse{Payload: &zerobuspb.EphemeralStreamResponse_CloseStreamSignal{
			CloseStreamSignal: &zerobuspb.CloseStreamSignal{Duration: d}}}
	}
	add(ack(0))
	add(ack(1 << 40))
	add(ack(-3))
	add(closeSig(durationpb.New(2 * time.Second)))
	add(closeSig(&durationpb.Duration{Seconds: 1 << 62}))
	add(closeSig(&durationpb.Duration{Seconds: -5}))
	add(closeSig(&durationpb.Duration{Seconds: 1, Nanos: -1}))
	add(closeSig(nil))
	add(&zerobuspb.EphemeralStreamResponse{})
	add(&zerobuspb.EphemeralStreamResponse{Payload: &zerobuspb.EphemeralStreamResponse_IngestRecordResponse{
		IngestRecordResponse: &zerobuspb.IngestRecordResponse{}}})
	f.Fuzz(func(t *testing.T, b []byte) {
		var resp zerobuspb.EphemeralStreamResponse
		if proto.Unmarshal(b, &resp) != nil {
			return // the gRPC codec rejects it before the sink sees it
		}
		ev, err := ephemeralEvent(&resp)
		checkEvent(t, ev, err)
	})
}
