package batch_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
)

// pn names test partition p like a Pulsar topic-partition.
func pn(p int32) string { return fmt.Sprintf("persistent://public/default/t-partition-%d", p) }

func rawRec(p int32, seq uint64) *batch.Record {
	return &batch.Record{
		Partition: pn(p),
		Seq:       seq,
		ID:        fmt.Appendf(nil, "id-%d-%d", p, seq),
		Payload:   []byte("payload"),
	}
}

func TestRawRowContents(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{})
	id := []byte("msg-1")
	rec := &batch.Record{
		Partition:   pn(3),
		Seq:         7,
		ID:          id,
		Key:         []byte("k"),
		EventTime:   epoch,
		PublishTime: epoch.Add(time.Millisecond),
		Props:       map[string]string{"z": "26", "a": "1", "m": "13"},
		Payload:     []byte{0, 1, 2},
	}
	if err := a.Add(rec); err != nil {
		t.Fatal(err)
	}
	// Second row: nil key, zero times, no props.
	if err := a.Add(&batch.Record{Partition: pn(3), Seq: 8, Payload: []byte{}}); err != nil {
		t.Fatal(err)
	}
	// The caller may reuse its buffers after Add.
	copy(id, "XXXXX")
	rec.Payload[0] = 99
	a.Flush()

	if len(s.batches) != 1 {
		t.Fatalf("got %d batches, want 1", len(s.batches))
	}
	b := s.batches[0]
	if !b.Rec.Schema().Equal(batch.RawSchema()) {
		t.Fatalf("schema = %v", b.Rec.Schema())
	}
	if b.NumRows() != 2 || b.Reason != batch.FlushShutdown {
		t.Fatalf("rows=%d reason=%v", b.NumRows(), b.Reason)
	}
	want := []batch.OffsetSpan{{Partition: pn(3), First: 7, Last: 8}}
	if !reflect.DeepEqual(b.Spans, want) {
		t.Fatalf("spans = %#v, want %#v", b.Spans, want)
	}
	r := b.Rec
	if got := r.Column(0).(*array.String); got.Value(0) != "persistent://public/default/t" || got.Value(1) != got.Value(0) {
		t.Errorf("topic = %v", got)
	}
	if got := r.Column(1).(*array.Int32).Values(); !reflect.DeepEqual(got, []int32{3, 3}) {
		t.Errorf("partition = %v", got)
	}
	if got := r.Column(2).(*array.Uint64).Values(); !reflect.DeepEqual(got, []uint64{7, 8}) {
		t.Errorf("seq = %v", got)
	}
	if got := string(r.Column(3).(*array.Binary).Value(0)); got != "msg-1" {
		t.Errorf("message_id = %q (not copied?)", got)
	}
	key := r.Column(4).(*array.Binary)
	if string(key.Value(0)) != "k" || !key.IsNull(1) {
		t.Errorf("key = %v", key)
	}
	pub, ev := r.Column(5).(*array.Timestamp), r.Column(6).(*array.Timestamp)
	if pub.Value(0) != arrow.Timestamp(epoch.Add(time.Millisecond).UnixMicro()) || ev.Value(0) != arrow.Timestamp(epoch.UnixMicro()) {
		t.Errorf("times = %v %v", pub, ev)
	}
	if !pub.IsNull(1) || !ev.IsNull(1) {
		t.Errorf("zero times should be null: %v %v", pub, ev)
	}
	props := r.Column(7).(*array.Map)
	keys := props.Keys().(*array.String)
	items := props.Items().(*array.String)
	var got []string
	start, end := props.ValueOffsets(0)
	for i := start; i < end; i++ {
		got = append(got, keys.Value(int(i))+"="+items.Value(int(i)))
	}
	if want := []string{"a=1", "m=13", "z=26"}; !reflect.DeepEqual(got, want) {
		t.Errorf("props = %v, want sorted %v", got, want)
	}
	if s, e := props.ValueOffsets(1); props.IsNull(1) || s != e {
		t.Errorf("row 2 props should be an empty map")
	}
	pl := r.Column(8).(*array.Binary)
	if !reflect.DeepEqual(pl.Value(0), []byte{0, 1, 2}) || len(pl.Value(1)) != 0 {
		t.Errorf("payload = %v", pl)
	}
	if string(b.Spans[0].LastID) != "" {
		t.Errorf("LastID = %q, want empty (record 8 has no ID)", b.Spans[0].LastID)
	}
	st := a.Stats()
	if st.Records != 2 || st.Rows != 2 || st.Batches != 1 || st.FlushShutdown != 1 || st.Bytes == 0 {
		t.Errorf("stats = %+v", st)
	}
}

type add struct {
	p   int32
	seq uint64
}

func TestSpans(t *testing.T) {
	tests := []struct {
		name    string
		maxRows int
		adds    []add
		want    [][]batch.OffsetSpan // per batch, after a final Flush
	}{
		{
			name: "one partition",
			adds: []add{{0, 1}, {0, 2}, {0, 3}},
			want: [][]batch.OffsetSpan{{{Partition: pn(0), First: 1, Last: 3, LastID: []byte("id-0-3")}}},
		},
		{
			name: "interleaved partitions sorted",
			adds: []add{{5, 10}, {1, 1}, {5, 11}, {-2, 4}, {1, 2}},
			want: [][]batch.OffsetSpan{{
				{Partition: pn(-2), First: 4, Last: 4, LastID: []byte("id--2-4")},
				{Partition: pn(1), First: 1, Last: 2, LastID: []byte("id-1-2")},
				{Partition: pn(5), First: 10, Last: 11, LastID: []byte("id-5-11")},
			}},
		},
		{
			name: "gaps in seq are allowed; span is first..last",
			adds: []add{{0, 1}, {0, 5}, {0, 9}},
			want: [][]batch.OffsetSpan{{{Partition: pn(0), First: 1, Last: 9, LastID: []byte("id-0-9")}}},
		},
		{
			name:    "split across batches by rows",
			maxRows: 2,
			adds:    []add{{0, 1}, {1, 1}, {0, 2}, {0, 3}, {1, 2}},
			want: [][]batch.OffsetSpan{
				{{Partition: pn(0), First: 1, Last: 1, LastID: []byte("id-0-1")}, {Partition: pn(1), First: 1, Last: 1, LastID: []byte("id-1-1")}},
				{{Partition: pn(0), First: 2, Last: 3, LastID: []byte("id-0-3")}},
				{{Partition: pn(1), First: 2, Last: 2, LastID: []byte("id-1-2")}},
			},
		},
		{
			name: "seq zero is a valid first seq",
			adds: []add{{0, 0}, {0, 1}},
			want: [][]batch.OffsetSpan{{{Partition: pn(0), First: 0, Last: 1, LastID: []byte("id-0-1")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, s := newAssembler(t, batch.AssemblerOptions{MaxRows: tt.maxRows})
			for _, ad := range tt.adds {
				if err := a.Add(rawRec(ad.p, ad.seq)); err != nil {
					t.Fatal(err)
				}
			}
			a.Flush()
			var got [][]batch.OffsetSpan
			for _, b := range s.batches {
				got = append(got, b.Spans)
				if int(b.NumRecords()) != int(b.NumRows())+b.Rejected {
					t.Errorf("NumRecords %d != rows %d + rejected %d", b.NumRecords(), b.NumRows(), b.Rejected)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("spans:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestSeqOrder(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{MaxRows: 2})
	for _, ad := range []add{{0, 5}, {1, 1}} { // flushes on rows: order must hold across batches
		if err := a.Add(rawRec(ad.p, ad.seq)); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []add{{0, 5}, {0, 4}, {1, 1}} {
		if err := a.Add(rawRec(bad.p, bad.seq)); !errors.Is(err, batch.ErrSeqOrder) {
			t.Fatalf("Add(%v) = %v, want ErrSeqOrder", bad, err)
		}
	}
	if err := a.Add(rawRec(0, 6)); err != nil {
		t.Fatal(err)
	}
	a.Flush()
	if len(s.batches) != 2 || s.batches[1].NumRows() != 1 ||
		!reflect.DeepEqual(s.batches[1].Spans, []batch.OffsetSpan{{Partition: pn(0), First: 6, Last: 6, LastID: []byte("id-0-6")}}) {
		t.Fatalf("refused records must not be covered: %v", s.batches[len(s.batches)-1].Spans)
	}
	if st := a.Stats(); st.OutOfOrder != 3 || st.Records != 3 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestFlushTriggers(t *testing.T) {
	const linger = 50 * time.Millisecond
	tests := []struct {
		name   string
		opts   batch.AssemblerOptions
		run    func(t *testing.T, a *batch.Assembler, add func(n int), advance func(time.Duration))
		want   []batch.FlushReason
		counts []int64 // rows per batch
	}{
		{
			name: "rows",
			opts: batch.AssemblerOptions{MaxRows: 3},
			run: func(t *testing.T, a *batch.Assembler, add func(int), _ func(time.Duration)) {
				add(7)
			},
			want:   []batch.FlushReason{batch.FlushRows, batch.FlushRows},
			counts: []int64{3, 3},
		},
		{
			name: "bytes",
			// Each test record is about rawRowOverhead(44) + id(8) + payload(7) bytes.
			opts: batch.AssemblerOptions{MaxBytes: 100},
			run: func(t *testing.T, a *batch.Assembler, add func(int), _ func(time.Duration)) {
				add(5)
			},
			want:   []batch.FlushReason{batch.FlushBytes, batch.FlushBytes},
			counts: []int64{2, 2},
		},
		{
			name: "linger measures from the oldest record",
			opts: batch.AssemblerOptions{Linger: linger},
			run: func(t *testing.T, a *batch.Assembler, add func(int), advance func(time.Duration)) {
				add(1)
				advance(linger - time.Millisecond)
				add(1) // a later record must not postpone the flush
				advance(time.Millisecond)
			},
			want:   []batch.FlushReason{batch.FlushLinger},
			counts: []int64{2},
		},
		{
			name: "linger does not fire for an empty batch",
			opts: batch.AssemblerOptions{Linger: linger, MaxRows: 2},
			run: func(t *testing.T, a *batch.Assembler, add func(int), advance func(time.Duration)) {
				add(2) // rows flush; the batch is empty again
				advance(10 * linger)
			},
			want:   []batch.FlushReason{batch.FlushRows},
			counts: []int64{2},
		},
		{
			name: "a stale linger firing does not cut the next batch short",
			opts: batch.AssemblerOptions{Linger: linger, MaxRows: 2},
			run: func(t *testing.T, a *batch.Assembler, add func(int), advance func(time.Duration)) {
				add(1)
				advance(linger / 2)
				add(1) // rows flush at t=25ms
				add(1) // new batch starts at t=25ms; due at t=75ms
				advance(linger/2 + time.Millisecond)
				if n := a.Stats().Batches; n != 1 {
					t.Fatalf("batches = %d after the first deadline, want 1", n)
				}
				advance(linger / 2)
			},
			want:   []batch.FlushReason{batch.FlushRows, batch.FlushLinger},
			counts: []int64{2, 1},
		},
		{
			name: "shutdown by Flush and Close",
			opts: batch.AssemblerOptions{},
			run: func(t *testing.T, a *batch.Assembler, add func(int), _ func(time.Duration)) {
				add(2)
				a.Flush()
				a.Flush() // nothing buffered: no empty batch
				add(1)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
			},
			want:   []batch.FlushReason{batch.FlushShutdown, batch.FlushShutdown},
			counts: []int64{2, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, s := newAssembler(t, tt.opts)
				seq := uint64(0)
				add := func(n int) {
					for range n {
						seq++
						if err := a.Add(rawRec(0, seq)); err != nil {
							t.Fatal(err)
						}
					}
				}
				// advance lets d pass on the bubble's clock and waits for the
				// linger timer it fires to finish.
				advance := func(d time.Duration) {
					time.Sleep(d) // the bubble's fake clock, at once
					synctest.Wait()
				}
				tt.run(t, a, add, advance)
				if got := s.reasons(); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("reasons = %v, want %v", got, tt.want)
				}
				for i, b := range s.batches {
					if b.NumRows() != tt.counts[i] {
						t.Errorf("batch %d rows = %d, want %d", i, b.NumRows(), tt.counts[i])
					}
				}
				st := a.Stats()
				for _, r := range []batch.FlushReason{batch.FlushRows, batch.FlushBytes, batch.FlushLinger, batch.FlushShutdown} {
					n := 0
					for _, w := range tt.want {
						if w == r {
							n++
						}
					}
					if st.Flushes(r) != uint64(n) {
						t.Errorf("Stats.Flushes(%v) = %d, want %d", r, st.Flushes(r), n)
					}
				}
			})
		})
	}
}

func TestCloseAndAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, s := newAssembler(t, batch.AssemblerOptions{Linger: time.Second})
		if err := a.Add(rawRec(0, 1)); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
		if err := a.Add(rawRec(0, 2)); !errors.Is(err, batch.ErrClosed) {
			t.Fatalf("Add after Close = %v, want ErrClosed", err)
		}
		a.Flush()
		time.Sleep(time.Hour) // the linger of the closed batch passes
		synctest.Wait()
		if len(s.batches) != 1 {
			t.Fatalf("batches = %d, want the one Close flushed", len(s.batches))
		}
	})
}

func TestOptionsValidation(t *testing.T) {
	emit := func(b *batch.Batch) { b.Release() }
	user := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tests := []struct {
		name string
		opts batch.AssemblerOptions
	}{
		{"no emit", batch.AssemblerOptions{}},
		{"negative rows", batch.AssemblerOptions{Emit: emit, MaxRows: -1}},
		{"negative bytes", batch.AssemblerOptions{Emit: emit, MaxBytes: -1}},
		{"negative linger", batch.AssemblerOptions{Emit: emit, Linger: -1}},
		{"raw with schema", batch.AssemblerOptions{Emit: emit, Schema: user}},
		{"json without schema", batch.AssemblerOptions{Emit: emit, Mode: batch.ModeJSON}},
		{"unknown mode", batch.AssemblerOptions{Emit: emit, Mode: 9}},
		{"unsupported type", batch.AssemblerOptions{Emit: emit, Mode: batch.ModeJSON, Schema: arrow.NewSchema(
			[]arrow.Field{{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "d", Type: arrow.FixedWidthTypes.Duration_s})}}, nil)}},
		{"non-UTC zone", batch.AssemblerOptions{Emit: emit, Mode: batch.ModeJSON, Schema: arrow.NewSchema(
			[]arrow.Field{{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}}}, nil)}},
		{"meta clash", batch.AssemblerOptions{Emit: emit, Mode: batch.ModeJSON, IncludeMeta: true, Schema: arrow.NewSchema(
			[]arrow.Field{{Name: "_seq", Type: arrow.PrimitiveTypes.Int64}}, nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := batch.NewAssembler(tt.opts)
			if !errors.Is(err, batch.ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}
	if _, err := batch.NewAssembler(batch.AssemblerOptions{Emit: emit, Mode: batch.ModeJSON, Schema: user}); err != nil {
		t.Fatalf("valid options: %v", err)
	}
}

// TestOptionsEveryProblem: validate runs on the caller's values before any
// default and reports every problem at once, each naming its field and the
// value it got, all wrapped in ErrInvalidOptions.
func TestOptionsEveryProblem(t *testing.T) {
	user := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, tt := range []struct {
		name string
		opts batch.AssemblerOptions
		want []string
	}{
		{"raw", batch.AssemblerOptions{MaxRows: -1, MaxBytes: MaxMaxBytesPlusOne, Linger: -time.Second, Schema: user}, []string{
			"Options.Emit is required", "Options.MaxRows -1", "Options.MaxBytes 1073741825", "Options.Linger -1s",
			"Options.Schema is only used in ModeJSON",
		}},
		{"json", batch.AssemblerOptions{Mode: batch.ModeJSON, MaxBytes: -2}, []string{
			"Options.Emit is required", "Options.MaxBytes -2", "Options.Schema is required in ModeJSON",
		}},
		{"mode", batch.AssemblerOptions{Mode: 9, MaxRows: -3}, []string{
			"Options.Emit is required", "Options.MaxRows -3", "Options.Mode SchemaMode(9)",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := batch.NewAssembler(tt.opts)
			if !errors.Is(err, batch.ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to name %q", err, w)
				}
			}
		})
	}
}

// MaxMaxBytesPlusOne is the smallest MaxBytes above the cap.
const MaxMaxBytesPlusOne = batch.MaxMaxBytes + 1

// TestConcurrentAddFlushLinger runs Add from several goroutines against a
// real clock's linger timer and concurrent Flush calls; under -race it
// checks the locking, and afterwards that coverage is exact.
func TestConcurrentAddFlushLinger(t *testing.T) {
	mem := checkedMem(t)
	s := newSink(t)
	a, err := batch.NewAssembler(batch.AssemblerOptions{
		Allocator: mem, MaxRows: 64, Linger: time.Millisecond, Emit: s.emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	const parts, perPart = 4, 2000
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for seq := uint64(1); seq <= perPart; seq++ {
				if err := a.Add(rawRec(int32(p), seq)); err != nil {
					t.Error(err)
					return
				}
				if seq%500 == 0 {
					a.Flush()
				}
			}
		})
	}
	// Stats reads race the adders until they finish.
	added, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-added:
				return
			default:
			}
			_ = a.Stats()
			runtime.Gosched()
		}
	}()
	wg.Wait()
	close(added)
	<-done
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	covered := make(map[string]uint64)
	var rows int64
	for _, b := range s.batches {
		rows += b.NumRows()
		for _, sp := range b.Spans {
			if sp.First != covered[sp.Partition]+1 {
				t.Fatalf("partition %s: span %v does not continue at %d", sp.Partition, sp, covered[sp.Partition]+1)
			}
			covered[sp.Partition] = sp.Last
		}
	}
	for p := range parts {
		if covered[pn(int32(p))] != perPart {
			t.Errorf("partition %d covered up to %d", p, covered[pn(int32(p))])
		}
	}
	if rows != parts*perPart || a.Stats().Rows != parts*perPart {
		t.Errorf("rows = %d, stats = %+v", rows, a.Stats())
	}
}

func TestRawPropsKeySetChanges(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{})
	sets := []map[string]string{
		{"b": "2", "a": "1"},
		{"a": "3", "b": "4"}, // same keys: cached order
		{"a": "5", "c": "6"}, // same size, other keys
		{"c": "7"},           // smaller
		{"d": "8", "a": "9", "b": "10"},
	}
	for i, p := range sets {
		if err := a.Add(&batch.Record{Seq: uint64(i + 1), Props: p}); err != nil {
			t.Fatal(err)
		}
	}
	a.Flush()
	props := s.batches[0].Rec.Column(7).(*array.Map)
	keys, items := props.Keys().(*array.String), props.Items().(*array.String)
	want := [][]string{{"a=1", "b=2"}, {"a=3", "b=4"}, {"a=5", "c=6"}, {"c=7"}, {"a=9", "b=10", "d=8"}}
	for row, w := range want {
		var got []string
		start, end := props.ValueOffsets(row)
		for i := start; i < end; i++ {
			got = append(got, keys.Value(int(i))+"="+items.Value(int(i)))
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("row %d props = %v, want %v", row, got, w)
		}
	}
}

func TestRawAddDoesNotAllocate(t *testing.T) {
	a, _ := newAssembler(t, batch.AssemblerOptions{MaxRows: 1 << 20, MaxBytes: 1 << 30})
	rec := rawRec(0, 1)
	rec.Key, rec.EventTime, rec.Props = []byte("k"), epoch, map[string]string{"x": "y", "a": "b"}
	for range 1000 { // grow the reusable columns
		rec.Seq++
		if err := a.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	a.Flush() // the next batch's buffers are sized for 1000 rows
	if n := testing.AllocsPerRun(500, func() {
		rec.Seq++
		if err := a.Add(rec); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Add allocates %v times per record", n)
	}
}

// dirtyAllocator hands out memory full of garbage, as a C allocator may:
// the raw path must write every byte it hands over (validity bits
// included) rather than rely on the Go allocator's zeroing.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(n int) []byte {
	b := d.Allocator.Allocate(n)
	for i := range b {
		b[i] = 0xa5
	}
	return b
}

func (d dirtyAllocator) Reallocate(n int, old []byte) []byte {
	b := d.Allocate(n)
	copy(b, old)
	d.Free(old)
	return b
}

// TestRawModel adds random records (nil keys, zero times and property sets
// that change, with the first nulls appearing late, after buffers were
// regrown) and checks every value of every batch against the records.
func TestRawModel(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		records, maxRows, firstNul int
	}{
		{"one batch, regrown, late nulls", 3000, 5000, 1500},
		{"many batches, early nulls", 3000, 700, 3},
		{"one-row batches", 300, 1, 0},
		{"no nulls", 3000, 1000, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			a, s := newAssembler(t, batch.AssemblerOptions{
				Allocator: dirtyAllocator{mem}, MaxRows: tc.maxRows, MaxBytes: batch.MaxMaxBytes,
			})
			rng := rand.New(rand.NewPCG(1, 2))
			propSets := [][]string{{"source", "partition", "mode"}, {"a"}, {"x", "b", "a", "c", "d", "e", "f", "g", "h", "i"}, nil}
			var want []batch.Record
			seqs := map[int32]uint64{}
			for i := range tc.records {
				p := int32(rng.IntN(3))
				seqs[p]++
				r := batch.Record{
					Partition: pn(p), Seq: seqs[p],
					ID:      fmt.Appendf(nil, "id-%d", i),
					Key:     fmt.Appendf(nil, "k%d", rng.IntN(100)),
					Payload: bytes.Repeat([]byte{byte(i)}, rng.IntN(300)),
				}
				r.EventTime = epoch.Add(time.Duration(i) * time.Millisecond)
				r.PublishTime = r.EventTime.Add(time.Microsecond)
				if tc.firstNul >= 0 && i >= tc.firstNul && rng.IntN(3) == 0 {
					r.Key = nil
				}
				if tc.firstNul >= 0 && i >= tc.firstNul && rng.IntN(4) == 0 {
					r.PublishTime = time.Time{}
				}
				if tc.firstNul >= 0 && i >= tc.firstNul && rng.IntN(5) == 0 {
					r.EventTime = time.Time{}
				}
				// Mostly the same key set, as producers do, sometimes another.
				set := propSets[0]
				if rng.IntN(10) == 0 {
					set = propSets[rng.IntN(len(propSets))]
				}
				if set != nil {
					r.Props = map[string]string{}
					for _, k := range set {
						r.Props[k] = strings.Repeat(k, rng.IntN(4))
					}
				}
				if err := a.Add(&r); err != nil {
					t.Fatal(err)
				}
				want = append(want, r)
			}
			a.Flush()

			row := 0
			for _, b := range s.batches {
				checkRawBatch(t, b.Rec, want[row:row+int(b.NumRows())])
				row += int(b.NumRows())
			}
			if row != len(want) {
				t.Fatalf("batches hold %d rows, added %d", row, len(want))
			}
		})
	}
}

func checkRawBatch(t *testing.T, rec arrow.RecordBatch, want []batch.Record) {
	t.Helper()
	topic := rec.Column(0).(*array.String)
	part := rec.Column(1).(*array.Int32)
	seq := rec.Column(2).(*array.Uint64)
	id, key := rec.Column(3).(*array.Binary), rec.Column(4).(*array.Binary)
	pub, ev := rec.Column(5).(*array.Timestamp), rec.Column(6).(*array.Timestamp)
	props := rec.Column(7).(*array.Map)
	pkeys, pvals := props.Keys().(*array.String), props.Items().(*array.String)
	payload := rec.Column(8).(*array.Binary)
	checkTime := func(what string, i int, col *array.Timestamp, tm time.Time) {
		if tm.IsZero() != col.IsNull(i) || (!tm.IsZero() && col.Value(i) != arrow.Timestamp(tm.UnixMicro())) {
			t.Fatalf("row %d: %s = %v (null %v), want %v", i, what, col.Value(i), col.IsNull(i), tm)
		}
	}
	for i, w := range want {
		wt, wp := batch.SplitPartition(w.Partition)
		if topic.Value(i) != wt || part.Value(i) != wp || seq.Value(i) != w.Seq || !bytes.Equal(id.Value(i), w.ID) ||
			!bytes.Equal(payload.Value(i), w.Payload) {
			t.Fatalf("row %d: got %s p%d seq %d id %q payload %d bytes, want %+v", i, topic.Value(i), part.Value(i), seq.Value(i), id.Value(i), len(payload.Value(i)), w)
		}
		if key.IsNull(i) != (w.Key == nil) || !bytes.Equal(key.Value(i), w.Key) {
			t.Fatalf("row %d: key %q (null %v), want %q", i, key.Value(i), key.IsNull(i), w.Key)
		}
		checkTime("publish_time", i, pub, w.PublishTime)
		checkTime("event_time", i, ev, w.EventTime)
		var got, exp []string
		start, end := props.ValueOffsets(i)
		for j := start; j < end; j++ {
			got = append(got, pkeys.Value(int(j))+"="+pvals.Value(int(j)))
		}
		for _, k := range slices.Sorted(maps.Keys(w.Props)) {
			exp = append(exp, k+"="+w.Props[k])
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("row %d: props %v, want %v", i, got, exp)
		}
	}
	for i, col := range rec.Columns() {
		if col.Data().Buffers()[0] != nil && col.NullN() == 0 {
			t.Errorf("column %d has a validity bitmap but no nulls", i)
		}
	}
}

// TestRawSmallBatchAfterLarge: a linger flush right after full batches must
// not pin the full batches' buffer capacity in the small batch (the
// assembler's pool may keep the full batches' buffers, within its two
// batches, for the next full batch: TestRawFullBatchAfterSmall).
func TestRawSmallBatchAfterLarge(t *testing.T) {
	mem := checkedMem(t)
	a, s := newAssembler(t, batch.AssemblerOptions{Allocator: mem, MaxRows: 8192})
	rec := rawRec(0, 0)
	rec.Key, rec.EventTime, rec.Props = []byte("k"), epoch, map[string]string{"x": "y"}
	rec.Payload = make([]byte, 100)
	for range 2 * 8192 {
		rec.Seq++
		if err := a.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		rec.Seq++
		if err := a.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	a.Flush() // as a linger flush would
	if len(s.batches) != 3 {
		t.Fatalf("%d batches, want 3", len(s.batches))
	}
	full, small := bufferCap(s.batches[0].Rec), bufferCap(s.batches[2].Rec)
	if small > full/50 {
		t.Fatalf("a 10-row batch holds %d bytes, a full one %d", small, full)
	}
}

// TestRawFullBatchAfterSmall: the full batch that follows a short one (a
// linger flush in a stream of full batches) is built in buffers of the full
// batches' size from the start, taken from the pool: it allocates nothing
// new and copies nothing to grow. (When the next batch was sized from the
// short one alone, its buffers were allocated anew, for the short batch's
// rows and bytes, and grew by copying, doubling, up to the full size.)
func TestRawFullBatchAfterSmall(t *testing.T) {
	mem := checkedMem(t)
	a, s := newAssembler(t, batch.AssemblerOptions{Allocator: mem, MaxRows: 4096})
	rec := rawRec(0, 0)
	rec.Key, rec.EventTime = []byte("k"), epoch
	rec.Payload = make([]byte, 1000)
	add := func(n int) {
		for range n {
			rec.Seq++
			if err := a.Add(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	release := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, b := range s.batches {
			b.Release()
		}
		s.batches = nil
	}
	// Full batches, released as a sink that keeps up would: the pool holds
	// their buffers.
	for range 3 {
		add(4096)
		release()
	}
	add(100)
	a.Flush() // a short batch, as a linger flush would cut it
	release()
	before := mem.CurrentAlloc()
	add(4096)
	if len(s.batches) != 1 {
		t.Fatalf("%d batches, want 1", len(s.batches))
	}
	if after := mem.CurrentAlloc(); after > before {
		t.Fatalf("the full batch after a short one allocated %d bytes beyond the pooled buffers", after-before)
	}
	release()
}

// bufferCap is the capacity of every buffer of rec's columns, children
// included.
func bufferCap(rec arrow.RecordBatch) int {
	var walk func(d arrow.ArrayData) int
	walk = func(d arrow.ArrayData) int {
		n := 0
		for _, b := range d.Buffers() {
			if b != nil {
				n += b.Cap()
			}
		}
		for _, c := range d.Children() {
			n += walk(c)
		}
		return n
	}
	n := 0
	for _, col := range rec.Columns() {
		n += walk(col.Data())
	}
	return n
}

func TestSplitPartition(t *testing.T) {
	for _, tc := range []struct {
		name  string
		topic string
		index int32
	}{
		{"persistent://public/default/orders-partition-2", "persistent://public/default/orders", 2},
		{"persistent://public/default/orders-partition-0", "persistent://public/default/orders", 0},
		{"persistent://t/n/a-partition-1-partition-17", "persistent://t/n/a-partition-1", 17},
		{"persistent://public/default/orders", "persistent://public/default/orders", -1},
		{"orders-partition-", "orders-partition-", -1},
		{"orders-partition--2", "orders-partition--2", -1},
		{"orders-partition-+2", "orders-partition-+2", -1},
		{"orders-partition-2x", "orders-partition-2x", -1},
		{"orders-partition-99999999999", "orders-partition-99999999999", -1},
		{"gen-3", "gen-3", -1},
		{"", "", -1},
	} {
		if topic, index := batch.SplitPartition(tc.name); topic != tc.topic || index != tc.index {
			t.Errorf("SplitPartition(%q) = (%q, %d), want (%q, %d)", tc.name, topic, index, tc.topic, tc.index)
		}
		if (tc.index >= 0 || tc.topic == tc.name) && batch.JoinPartition(tc.topic, tc.index) != tc.name {
			t.Errorf("JoinPartition(%q, %d) = %q, want %q", tc.topic, tc.index, batch.JoinPartition(tc.topic, tc.index), tc.name)
		}
	}
}

// TestRawUnpartitionedTopic: a record of a topic that is not partitioned
// stores the name as the topic and -1 as the partition.
func TestRawUnpartitionedTopic(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{})
	for seq := uint64(1); seq <= 2; seq++ {
		if err := a.Add(&batch.Record{Partition: "persistent://public/default/plain", Seq: seq, Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	a.Flush()
	r := s.batches[0].Rec
	if got := r.Column(0).(*array.String); got.Value(0) != "persistent://public/default/plain" || got.Value(1) != got.Value(0) {
		t.Fatalf("topic = %v", got)
	}
	if got := r.Column(1).(*array.Int32).Values(); !reflect.DeepEqual(got, []int32{-1, -1}) {
		t.Fatalf("partition = %v", got)
	}
	if sp := s.batches[0].Spans; len(sp) != 1 || sp[0].Partition != "persistent://public/default/plain" {
		t.Fatalf("spans = %v", sp)
	}
}

// TestPartitionNamesByValue: a source may hand over a new string for every
// record; names equal in value are one partition whatever their address
// (the assembler's lookup by address is only a shortcut).
func TestPartitionNamesByValue(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{})
	for seq := uint64(1); seq <= 300; seq++ {
		for p := range int32(3) {
			rec := rawRec(p, seq)
			rec.Partition = strings.Clone(rec.Partition)
			if err := a.Add(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	again := rawRec(1, 300)
	again.Partition = strings.Clone(again.Partition)
	if err := a.Add(again); !errors.Is(err, batch.ErrSeqOrder) {
		t.Fatalf("seq 300 of %s again, by another string: %v, want ErrSeqOrder", again.Partition, err)
	}
	a.Flush()
	if len(s.batches) != 1 || len(s.batches[0].Spans) != 3 {
		t.Fatalf("%d batches, spans %v; want one batch with one span per partition", len(s.batches), s.batches[0].Spans)
	}
	for i, sp := range s.batches[0].Spans {
		if sp.Partition != pn(int32(i)) || sp.First != 1 || sp.Last != 300 {
			t.Errorf("span %d = %v", i, sp)
		}
	}
}

// FlushEarly emits what is buffered at once with reason FlushIdle, counts
// it, emits nothing when nothing is buffered, and nothing after Close.
func TestFlushEarly(t *testing.T) {
	a, s := newAssembler(t, batch.AssemblerOptions{MaxRows: 100})
	a.FlushEarly() // nothing buffered
	for seq := uint64(1); seq <= 3; seq++ {
		if err := a.Add(&batch.Record{Partition: "p", Seq: seq, Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	a.FlushEarly()
	if got, want := s.reasons(), []batch.FlushReason{batch.FlushIdle}; !slices.Equal(got, want) {
		t.Fatalf("flush reasons %v, want %v", got, want)
	}
	if st := a.Stats(); st.FlushIdle != 1 || st.Flushes(batch.FlushIdle) != 1 || st.Rows != 3 {
		t.Errorf("stats %+v, want one idle flush of 3 rows", st)
	}
	if batch.FlushIdle.String() != "idle" {
		t.Errorf("FlushIdle is %q", batch.FlushIdle)
	}
	if err := a.Add(&batch.Record{Partition: "p", Seq: 4, Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.FlushEarly()
	if got, want := s.reasons(), []batch.FlushReason{batch.FlushIdle, batch.FlushShutdown}; !slices.Equal(got, want) {
		t.Fatalf("flush reasons %v, want %v", got, want)
	}
}
