package receiver_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BenchmarkOrderedAppend measures the receiver's cost per batch of
// idempotent append against plain appends, in one run: each iteration is
// one 1000-row batch with raw identity columns on one DoPut stream, sent
// pre-encoded (the client side only builds the app_metadata), so the
// process CPU per batch (cpu-ns/batch, client and server share the
// process) is mostly the receiver's, and its differences between modes
// entirely.
//
//	unordered:   no "ordered": stored as sent
//	ordered-new: "ordered":true, every row above the position: the span
//	             check, then stored as sent
//	ordered-dup: "ordered":true, every row at or below the position: the
//	             span check, nothing stored, acknowledged
//	ordered-half: "ordered":true, each batch repeats the previous one's
//	             last 500 rows: decoded, filtered row by row, the new 500
//	             re-encoded and stored (the batches are encoded before the
//	             timer starts, b.N of them: keep -benchtime small)
func BenchmarkOrderedAppend(b *testing.B) {
	for _, mode := range []string{"unordered", "ordered-new", "ordered-dup", "ordered-half"} {
		b.Run(mode, func(b *testing.B) { benchOrdered(b, mode) })
	}
}

func benchOrdered(b *testing.B, mode string) {
	const rowsPerBatch = 1000
	mem := memory.NewGoAllocator()
	_, addr := flighttest.Receiver(b, receiver.Options{Dir: b.TempDir()})
	c := flighttest.Client(b, addr)
	rs := make([]row, rowsPerBatch)
	for i := range rs {
		rs[i] = row{0, uint64(i + 1)}
	}
	rec := idBatch(mem, idSchema, rs)
	enc := encodeBatch(b, rec)
	rec.Release()
	name := strconv.Quote(row{0, 0}.name())
	path := []string{"bench", mode}
	if mode == "ordered-dup" {
		// Everything sent below is at or below this position.
		p := openPut(b, flighttest.Ctx(b, time.Minute), c, "").schema(path, idSchema)
		p.batch(enc, []byte(`{"offset_id":0,"ordered":true,"spans":[{"partition":`+name+`,"first":1,"last":1000000000000}]}`))
		if _, err := p.finish(); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stream, err := c.DoPut(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.Send(&arrowflight.FlightData{
		FlightDescriptor: &arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path},
		DataHeader:       encodeSchema(idSchema),
	}); err != nil {
		b.Fatal(err)
	}
	acked := make(chan error, 1)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				acked <- err
				return
			}
		}
	}()
	ordered := ""
	if mode != "unordered" {
		ordered = `,"ordered":true`
	}
	var half []encoded
	if mode == "ordered-half" {
		for i := range b.N {
			first := uint64(i)*rowsPerBatch/2 + 1
			for j := range rs {
				rs[j].seq = first + uint64(j)
			}
			rec := idBatch(mem, idSchema, rs)
			half = append(half, encodeBatch(b, rec))
			rec.Release()
		}
	}
	var md []byte
	b.SetBytes(int64(len(enc.hdr) + len(enc.body)))
	b.ResetTimer()
	start, cpu0 := time.Now(), testenv.ProcessCPU().Seconds()
	for i := range b.N {
		first := uint64(i)*rowsPerBatch + 1
		if half != nil {
			first, enc = uint64(i)*rowsPerBatch/2+1, half[i]
		}
		md = append(md[:0], `{"offset_id":`...)
		md = strconv.AppendInt(md, int64(i+1), 10)
		md = append(md, ordered...)
		md = append(md, `,"spans":[{"partition":`...)
		md = append(md, name...)
		md = append(md, `,"first":`...)
		md = strconv.AppendUint(md, first, 10)
		md = append(md, `,"last":`...)
		md = strconv.AppendUint(md, first+rowsPerBatch-1, 10)
		md = append(md, `}]}`...)
		if err := stream.Send(&arrowflight.FlightData{DataHeader: enc.hdr, DataBody: enc.body, AppMetadata: append([]byte(nil), md...)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		b.Fatal(err)
	}
	if err := <-acked; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "batches/s")
	if cpu := testenv.ProcessCPU().Seconds() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/batch")
	}
}
