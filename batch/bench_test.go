package batch_test

import (
	"bytes"
	"maps"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/source/gen"
)

// benchRecords pre-generates n records so the benchmarks time the assembler,
// not the generator.
func benchRecords(b *testing.B, mode gen.Mode, n int) []batch.Record {
	g, err := gen.New(gen.Options{Seed: 7, Partitions: 4, Records: uint64(n), PayloadSize: 100, Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]batch.Record, 0, n)
	var rec batch.Record
	for g.Next(&rec) {
		c := rec
		c.ID, c.Key, c.Payload, c.Props = bytes.Clone(rec.ID), bytes.Clone(rec.Key), bytes.Clone(rec.Payload), maps.Clone(rec.Props)
		out = append(out, c)
	}
	return out
}

// runAssemble adds b.N records, cycling through recs with fresh sequence
// numbers, and reports records/s.
func runAssemble(b *testing.B, opts batch.AssemblerOptions, recs []batch.Record) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	var rows int64
	opts.Allocator = mem
	opts.Linger = time.Hour // linger never fires: batches are full
	opts.Emit = func(bt *batch.Batch) { rows += bt.NumRows(); bt.Release() }
	opts.OnReject = func(_ *batch.Record, reason error) { b.Fatal(reason) }
	a, err := batch.NewAssembler(opts)
	if err != nil {
		b.Fatal(err)
	}
	var payload int64
	for _, r := range recs {
		payload += int64(len(r.Payload))
	}
	b.SetBytes(payload / int64(len(recs)))
	b.ReportAllocs()
	// The partition index of each record, so that numbering costs no map
	// lookup in the timed loop.
	idx := make([]int, len(recs))
	names := map[string]int{}
	for i, r := range recs {
		if _, ok := names[r.Partition]; !ok {
			names[r.Partition] = len(names)
		}
		idx[i] = names[r.Partition]
	}
	seqs := make([]uint64, len(names))
	b.ResetTimer()
	cpu0 := testenv.ProcessCPU().Seconds()
	for i := range b.N {
		r, p := &recs[i%len(recs)], idx[i%len(recs)]
		seqs[p]++
		r.Seq = seqs[p]
		if err := a.Add(r); err != nil {
			b.Fatal(err)
		}
	}
	_ = a.Close()
	b.StopTimer()
	reportRate(b, b.N, cpu0)
	if rows != int64(b.N) {
		b.Fatalf("emitted %d rows, added %d", rows, b.N)
	}
}

// BenchmarkAssembleRaw: 100-byte payloads, with key, ID, two times and three
// properties per record, into RawSchema batches of 8192 rows.
func BenchmarkAssembleRaw(b *testing.B) {
	runAssemble(b, batch.AssemblerOptions{}, benchRecords(b, gen.ModeRaw, 4096))
}

// BenchmarkAssembleRawPulsarNames is BenchmarkAssembleRaw with partitions
// named as Pulsar names them: the topic column then holds 43 bytes a row.
func BenchmarkAssembleRawPulsarNames(b *testing.B) {
	recs := benchRecords(b, gen.ModeRaw, 4096)
	names := map[string]string{}
	for i := range recs {
		n, ok := names[recs[i].Partition]
		if !ok {
			n = batch.JoinPartition("persistent://public/default/orders", int32(len(names)))
			names[recs[i].Partition] = n
		}
		recs[i].Partition = n
	}
	runAssemble(b, batch.AssemblerOptions{}, recs)
}

// BenchmarkAssembleJSON and BenchmarkArrowJSONReader decode the same
// 10-field gen.JSONSchema records into the same schema.
func BenchmarkAssembleJSON(b *testing.B) {
	runAssemble(b, batch.AssemblerOptions{Mode: batch.ModeJSON, Schema: gen.JSONSchema()},
		benchRecords(b, gen.ModeJSON, 4096))
}

func BenchmarkArrowJSONReader(b *testing.B) {
	recs := benchRecords(b, gen.ModeJSON, 4096)
	var ndjson bytes.Buffer
	lineEnd := make([]int, len(recs)) // lineEnd[i]: end of line i in ndjson
	for i, r := range recs {
		ndjson.Write(r.Payload)
		ndjson.WriteByte('\n')
		lineEnd[i] = ndjson.Len()
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(b, 0)
	schema := gen.JSONSchema()
	b.SetBytes(int64(ndjson.Len() / len(recs)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testenv.ProcessCPU().Seconds()
	done := 0
	for done < b.N {
		// Exactly b.N records in all: each reader gets up to 4096 lines,
		// read as one batch like the assembler's.
		k := min(b.N-done, len(recs))
		r := array.NewJSONReader(bytes.NewReader(ndjson.Bytes()[:lineEnd[k-1]]), schema,
			array.WithAllocator(mem), array.WithChunk(len(recs)))
		for r.Next() {
			done += int(r.RecordBatch().NumRows())
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
	b.StopTimer()
	reportRate(b, done, cpu0)
}

// reportRate reports records per wall-second and per CPU-second: on a
// shared, overloaded machine the latter still measures the code, the
// former the neighbours. Run with -cpu 1 so the figure is per core.
func reportRate(b *testing.B, n int, cpu0 float64) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	if cpu := testenv.ProcessCPU().Seconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n)/cpu, "records/cpu-s")
	}
}
