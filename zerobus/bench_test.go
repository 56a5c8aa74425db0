package zerobus_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

const benchRows = 4096

// BenchmarkJSONEncode compares arrow-go's own JSON rendering
// (array.RecordToJSON, the baseline) with the sink's per-row encoder, on
// the same 4096-row batch.
func BenchmarkJSONEncode(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	bt := makeBatch(mem, 0, benchRows, 64)
	defer bt.Release()
	var buf bytes.Buffer
	if err := array.RecordToJSON(bt.Rec, &buf); err != nil {
		b.Fatal(err)
	}
	size := int64(buf.Len())

	b.Run("arrow-RecordToJSON", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := array.RecordToJSON(bt.Rec, &buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("zerobus-encode", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			zerobus.EncodeJSONForBench(bt.Rec)
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkSinkSend measures Send + durable ack through a real server on
// loopback (fsync every 10ms), per protocol: the sink's end-to-end rate.
func BenchmarkSinkSend(b *testing.B) {
	for _, tc := range []struct {
		name string
		mode zerobus.Mode
		enc  zerobus.Encoding
	}{
		{"ephemeral-json", zerobus.ModeEphemeral, zerobus.EncodingJSON},
		{"ephemeral-proto", zerobus.ModeEphemeral, zerobus.EncodingProto},
		{"flight", zerobus.ModeFlight, zerobus.EncodingJSON},
	} {
		b.Run(tc.name, func(b *testing.B) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(b, 0)
			srv, err := server.New(server.Options{Dir: b.TempDir(), Token: token})
			if err != nil {
				b.Fatal(err)
			}
			h := serve(b, srv)
			opts := h.options(tc.mode, mem)
			opts.Encoding = tc.enc
			ctx := context.Background()
			s, err := zerobus.Dial(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			bt := makeBatch(mem, 0, benchRows, 64)
			defer bt.Release()
			var buf bytes.Buffer
			_ = array.RecordToJSON(bt.Rec, &buf)
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			off := uint64(0)
			for b.Loop() {
				off++
				if err := s.Send(ctx, off, bt); err != nil {
					b.Fatal(err)
				}
				if off%16 == 0 { // a lane waits once per burst
					if err := s.WaitDurable(ctx, off); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.WaitDurable(ctx, off); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
