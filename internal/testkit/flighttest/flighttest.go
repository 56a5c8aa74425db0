// Package flighttest has helpers for tests and benchmarks of the
// flight sink and the receiver: deterministic batches and a receiver on
// loopback.
//
// It stays thalweg's own: it builds thalweg's batches and receivers.
package flighttest

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight/receiver"
)

// Schema is the schema of the batches MakeBatch builds.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
	{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "payload", Type: arrow.BinaryTypes.Binary},
}, nil)

// Partition is the name of test partition p in the spans MakeBatch builds,
// as Pulsar names a topic-partition.
func Partition(p int32) string {
	return fmt.Sprintf("persistent://public/default/flighttest-partition-%d", p)
}

// MakeBatch builds rows seq first..first+n-1 of partition p (column
// "partition" = p, spans of Partition(p)) with payloads of payloadLen
// deterministic bytes. The caller owns the batch.
func MakeBatch(mem memory.Allocator, p int32, first uint64, n, payloadLen int) *batch.Batch {
	b := array.NewRecordBuilder(mem, Schema)
	defer b.Release()
	pb := b.Field(0).(*array.Int32Builder)
	sb := b.Field(1).(*array.Uint64Builder)
	yb := b.Field(2).(*array.BinaryBuilder)
	payload := make([]byte, payloadLen)
	for i := 0; i < n; i++ {
		seq := first + uint64(i)
		for j := range payload {
			payload[j] = byte(seq*31 + uint64(j)*7)
		}
		pb.Append(p)
		sb.Append(seq)
		yb.Append(payload)
	}
	rec := b.NewRecordBatch()
	var spans []batch.OffsetSpan
	if n > 0 {
		spans = []batch.OffsetSpan{{Partition: Partition(p), First: first, Last: first + uint64(n) - 1}}
	}
	return &batch.Batch{Rec: rec, Spans: spans, Reason: batch.FlushRows}
}

// Receiver starts a receiver with opts on a loopback port and stops it at
// the end of the test.
func Receiver(t testing.TB, opts receiver.Options) (*receiver.Server, string) {
	t.Helper()
	srv, err := receiver.New(opts)
	if err != nil {
		t.Fatalf("receiver.New: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("receiver.Stop: %v", err)
		}
		<-served
	})
	return srv, lis.Addr().String()
}

// Client dials addr in plaintext; closed at the end of the test.
func Client(t testing.TB, addr string, opts ...grpc.DialOption) flight.Client {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)),
	}, opts...)
	c, err := flight.NewClientWithMiddleware(addr, nil, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Rows flattens stored batches to "p/seq/len(payload)/checksum" strings, for
// comparing contents independent of batch boundaries.
func Rows(recs ...arrow.RecordBatch) []string {
	var out []string
	for _, r := range recs {
		p := r.Column(0).(*array.Int32)
		s := r.Column(1).(*array.Uint64)
		y := r.Column(2).(*array.Binary)
		for i := 0; i < int(r.NumRows()); i++ {
			v := y.Value(i)
			var sum uint32
			for _, c := range v {
				sum = sum*16777619 ^ uint32(c)
			}
			out = append(out, fmt.Sprintf("%d/%d/%d/%08x", p.Value(i), s.Value(i), len(v), sum))
		}
	}
	return out
}

// Ctx returns a context bounded by d, canceled at the end of the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
