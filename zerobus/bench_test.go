package zerobus_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus"
	"github.com/thalweg/thalweg/zerobus/server"
)

const benchRows = 4096

// BenchmarkJSONEncode compares arrow-go's own JSON rendering
// (array.RecordToJSON, the baseline) with the sink's per-row encoder, on
// the same 4096-row batch. Each reports cpu-ms/op (process CPU time) beside
// wall time: on a shared machine the neighbours disturb it less. The two
// always run in this order; to alternate them, run the binary with
// -test.bench 'JSONEncode/arrow' and 'JSONEncode/zerobus' in turn.
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
		cpu0 := testenv.ProcessCPU()
		for b.Loop() {
			buf.Reset()
			if err := array.RecordToJSON(bt.Rec, &buf); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0)
	})
	b.Run("zerobus-encode", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		cpu0 := testenv.ProcessCPU()
		for b.Loop() {
			zerobus.EncodeJSONForBench(bt.Rec)
		}
		reportCPU(b, cpu0)
	})
}

// BenchmarkSinkSend measures Send + durable ack through a real server on
// loopback (fsync every 10ms), per protocol: the sink's end-to-end rate.
// cpu-ms/op is the process's CPU time per batch, the in-process server's
// decoding and checks included.
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
			cpu0 := testenv.ProcessCPU()
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
			reportCPU(b, cpu0)
		})
	}
}

// reportCPU reports rows/s (wall) and cpu-ms/op: the process's CPU time
// since cpu0 per iteration (one batch of benchRows rows).
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu := testenv.ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
	}
}
