package pulsarschema_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/linkedin/goavro/v2"

	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// bench10 is the 10-field record of the Avro benchmark (BENCHMARKS.md,
// "Pulsar registry schemas").
const bench10 = `{"type":"record","name":"Event","namespace":"bench","fields":[
	{"name":"id","type":"long"},
	{"name":"user","type":"string"},
	{"name":"qty","type":"int"},
	{"name":"price","type":"double"},
	{"name":"ok","type":"boolean"},
	{"name":"note","type":["null","string"]},
	{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"ratio","type":"float"},
	{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["VIEW","CLICK","BUY"]}},
	{"name":"blob","type":"bytes"}]}`

// benchPayloads encodes n distinct records with goavro.
func benchPayloads(b *testing.B, n int) [][]byte {
	codec, err := goavro.NewCodec(bench10)
	if err != nil {
		b.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		var note any
		if i%3 != 0 {
			note = goavro.Union("string", fmt.Sprintf("note %d", i))
		}
		p, err := codec.BinaryFromNative(nil, map[string]any{
			"id": int64(i) * 7919, "user": fmt.Sprintf("user-%06d", i%5000), "qty": int32(i % 100), "price": float64(i) * 0.01,
			"ok": i%2 == 0, "note": note, "at": time.UnixMilli(1_700_000_000_000 + int64(i)), "ratio": float32(i%10) / 10,
			"kind": []string{"VIEW", "CLICK", "BUY"}[i%3], "blob": []byte{byte(i), byte(i >> 8), 1, 2, 3, 4, 5, 6},
		})
		if err != nil {
			b.Fatal(err)
		}
		out[i] = p
	}
	return out
}

// cpuClock measures the benchmark goroutine's own CPU time: it locks the
// goroutine to its OS thread (undone by stop).
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuClock {
	runtime.LockOSThread()
	start, ok := threadCPU()
	return cpuClock{start, ok}
}

// reportRecords reports records/s and ns/record of wall time, and, where
// the thread's CPU time is measured, cpu-ns/record and records/cpu-s: what
// one core does, also on a loaded machine. GC work on other threads is not
// in the CPU figures (which favours the allocating generic path).
func reportRecords(b *testing.B, records int, c cpuClock) {
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(records)/secs, "records/s")
	b.ReportMetric(secs*1e9/float64(records), "ns/record")
	if end, ok := threadCPU(); ok && c.ok {
		cpu := (end - c.start).Seconds()
		b.ReportMetric(cpu*1e9/float64(records), "cpu-ns/record")
		b.ReportMetric(float64(records)/cpu, "records/cpu-s")
	}
	runtime.UnlockOSThread()
	b.ReportMetric(0, "ns/op")
}

// BenchmarkAvro10 decodes the same 10-field records three ways, one
// goroutine each (so records/s is per core): this package's decoder into
// Arrow builders (batches of 8192 rows, built and released), goavro's
// generic map-based decoding alone (NativeFromBinary, no Arrow), and
// goavro's maps then appended to the same Arrow builders (the whole
// generic path).
func BenchmarkAvro10(b *testing.B) {
	const batchRows = 8192
	payloads := benchPayloads(b, 4096)
	var bytesPer float64
	for _, p := range payloads {
		bytesPer += float64(len(p))
	}
	bytesPer /= float64(len(payloads))

	b.Run("thalweg-to-arrow", func(b *testing.B) {
		c := mustCompile(b, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: []byte(bench10)})
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(b, 0)
		rb := array.NewRecordBuilder(mem, c.Schema())
		defer rb.Release()
		d, err := c.NewDecoder(rb, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(bytesPer))
		b.ReportAllocs()
		n := 0
		clk := startCPU()
		for b.Loop() {
			if _, err := d.Append(payloads[n%len(payloads)]); err != nil {
				b.Fatal(err)
			}
			if n++; n%batchRows == 0 {
				rb.NewRecordBatch().Release()
			}
		}
		rb.NewRecordBatch().Release()
		reportRecords(b, n, clk)
	})

	codec, err := goavro.NewCodec(bench10)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("goavro-maps", func(b *testing.B) {
		b.SetBytes(int64(bytesPer))
		b.ReportAllocs()
		n := 0
		clk := startCPU()
		for b.Loop() {
			if _, _, err := codec.NativeFromBinary(payloads[n%len(payloads)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		reportRecords(b, n, clk)
	})

	b.Run("goavro-maps-to-arrow", func(b *testing.B) {
		c := mustCompile(b, pulsarschema.Info{Type: pulsarschema.TypeAvro, Definition: []byte(bench10)})
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(b, 0)
		rb := array.NewRecordBuilder(mem, c.Schema())
		defer rb.Release()
		b.SetBytes(int64(bytesPer))
		b.ReportAllocs()
		n := 0
		clk := startCPU()
		for b.Loop() {
			v, _, err := codec.NativeFromBinary(payloads[n%len(payloads)])
			if err != nil {
				b.Fatal(err)
			}
			appendGeneric(rb, v.(map[string]any))
			if n++; n%batchRows == 0 {
				rb.NewRecordBatch().Release()
			}
		}
		rb.NewRecordBatch().Release()
		reportRecords(b, n, clk)
	})
}

// appendGeneric is the generic path's last step: a decoded map to the
// builders of bench10's columns.
func appendGeneric(rb *array.RecordBuilder, m map[string]any) {
	rb.Field(0).(*array.Int64Builder).Append(m["id"].(int64))
	rb.Field(1).(*array.StringBuilder).Append(m["user"].(string))
	rb.Field(2).(*array.Int32Builder).Append(m["qty"].(int32))
	rb.Field(3).(*array.Float64Builder).Append(m["price"].(float64))
	rb.Field(4).(*array.BooleanBuilder).Append(m["ok"].(bool))
	if u, ok := m["note"].(map[string]any); ok {
		rb.Field(5).(*array.StringBuilder).Append(u["string"].(string))
	} else {
		rb.Field(5).AppendNull()
	}
	rb.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(m["at"].(time.Time).UnixMilli()))
	rb.Field(7).(*array.Float32Builder).Append(m["ratio"].(float32))
	rb.Field(8).(*array.StringBuilder).Append(m["kind"].(string))
	rb.Field(9).(*array.BinaryBuilder).Append(m["blob"].([]byte))
}
