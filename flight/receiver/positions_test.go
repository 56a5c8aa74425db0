package receiver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

// idSchema has the identity columns of the raw schema (topic, partition,
// seq) and a payload; metaSchema those of JSON rows with metadata.
var (
	idSchema = arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "payload", Type: arrow.BinaryTypes.String},
	}, nil)
	metaSchema = arrow.NewSchema([]arrow.Field{
		{Name: "_topic", Type: arrow.BinaryTypes.String},
		{Name: "_partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "_seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "payload", Type: arrow.BinaryTypes.String},
	}, nil)
	// anonSchema has no identity columns.
	anonSchema = arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "payload", Type: arrow.BinaryTypes.String},
	}, nil)
)

const topic = "persistent://public/default/orders"

// row is one record of a test batch: its partition index (-1: the topic is
// not partitioned) and seq.
type row struct {
	part int32
	seq  uint64
}

func (r row) name() string {
	if r.part < 0 {
		return topic
	}
	return fmt.Sprintf("%s-partition-%d", topic, r.part)
}

func (r row) String() string { return fmt.Sprintf("%s/%d", r.name(), r.seq) }

// rows builds rows first..last of partition p.
func rows(p int32, first, last uint64) []row {
	var out []row
	for s := first; s <= last; s++ {
		out = append(out, row{p, s})
	}
	return out
}

// idBatch builds rs in schema sc (one of the above); the payload names
// the row.
func idBatch(mem memory.Allocator, sc *arrow.Schema, rs []row) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for _, r := range rs {
		i := 0
		if sc.NumFields() == 4 {
			b.Field(0).(*array.StringBuilder).Append(topic)
			b.Field(1).(*array.Int32Builder).Append(r.part)
			i = 2
		}
		b.Field(i).(*array.Uint64Builder).Append(r.seq)
		b.Field(i + 1).(*array.StringBuilder).Append(r.String())
	}
	return b.NewRecordBatch()
}

// spansOf are the wire spans of rs, one per partition in order of first
// appearance.
func spansOf(rs []row) []flightwire.Span {
	var out []flightwire.Span
	at := map[string]int{}
	for _, r := range rs {
		i, ok := at[r.name()]
		if !ok {
			at[r.name()] = len(out)
			out = append(out, flightwire.Span{Partition: r.name(), First: r.seq, Last: r.seq})
			continue
		}
		out[i].First, out[i].Last = min(out[i].First, r.seq), max(out[i].Last, r.seq)
	}
	return out
}

// putMeta is a batch's app_metadata; ordered adds "ordered":true.
func putMeta(offset uint64, spans []flightwire.Span, ordered bool, part, parts int) []byte {
	m := map[string]any{"offset_id": offset}
	if len(spans) > 0 {
		m["spans"] = spans
	}
	if ordered {
		m["ordered"] = true
	}
	if parts > 1 {
		m["part"], m["parts"] = part, parts
	}
	b, _ := json.Marshal(m)
	return b
}

// sendRows DoPuts one batch per element of batches (offsets from 1) in
// schema sc and returns the acks.
func sendRows(t testing.TB, addr string, path []string, sc *arrow.Schema, ordered bool, batches ...[]row) []flightwire.Ack {
	t.Helper()
	mem := memory.NewGoAllocator()
	p := openPut(t, flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), "").schema(path, sc)
	for i, rs := range batches {
		rec := idBatch(mem, sc, rs)
		p.batch(encodeBatch(t, rec), putMeta(uint64(i+1), spansOf(rs), ordered, 0, 0))
		rec.Release()
	}
	acks, err := p.finish()
	require.NoError(t, err)
	return acks
}

// storedRows returns the payload column of every stored row, in stored
// order (the test schemas' payload is their last column), or for the
// flighttest schema the flighttest.Rows strings.
func storedRows(t testing.TB, addr string, path []string) []string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	got, err := flight.ReadAll(flighttest.Ctx(t, 20*time.Second), flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	var out []string
	for _, g := range got {
		col := g.Rec.Column(int(g.Rec.NumCols()) - 1)
		if s, ok := col.(*array.String); ok {
			for i := range s.Len() {
				out = append(out, s.Value(i))
			}
			continue
		}
		out = append(out, flighttest.Rows(g.Rec)...)
	}
	return out
}

func names(rs ...[]row) []string {
	var out []string
	for _, r := range slices.Concat(rs...) {
		out = append(out, r.String())
	}
	return out
}

func positionsOf(t testing.TB, addr string, path []string) map[string]uint64 {
	t.Helper()
	p, err := flight.Positions(flighttest.Ctx(t, 10*time.Second), flighttest.Client(t, addr), path)
	require.NoError(t, err)
	return p
}

func lastAck(t testing.TB, acks []flightwire.Ack) flightwire.Ack {
	t.Helper()
	require.NotEmpty(t, acks)
	return acks[len(acks)-1]
}

// TestOrderedDuplicateAcknowledgedNotStored: an ordered batch whose rows
// are all at or below the stored positions is acknowledged (its offset and
// its rows in ack_up_to_records) and not stored; positions are unchanged.
func TestOrderedDuplicateAcknowledgedNotStored(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	path := []string{"raw"}
	first := slices.Concat(rows(0, 1, 10), rows(1, 1, 5))
	acks := sendRows(t, addr, path, idSchema, true, first)
	require.Equal(t, flightwire.Ack{Offset: 1, Records: 15, HasRecords: true}, lastAck(t, acks))
	want := map[string]uint64{row{0, 0}.name(): 10, row{1, 0}.name(): 5}
	require.Equal(t, want, positionsOf(t, addr, path))

	// The same rows again, then a subset, on a new stream (a restarted
	// worker replaying).
	acks = sendRows(t, addr, path, idSchema, true, first, rows(0, 3, 7))
	require.Equal(t, flightwire.Ack{Offset: 2, Records: 20, HasRecords: true}, lastAck(t, acks),
		"dropped batches are acknowledged and their rows count in ack_up_to_records")
	require.Equal(t, names(first), storedRows(t, addr, path), "nothing stored twice")
	require.Equal(t, want, positionsOf(t, addr, path))
	st := srv.Stats()
	require.Equal(t, receiver.Stats{DroppedRows: 20, DroppedBatches: 2}, st)
}

// TestOrderedPartialOverlap: an ordered batch that straddles the stored
// position stores exactly its new rows, row by row by its identity columns
// (raw and JSON-meta columns, partitioned and not, rows of two partitions
// interleaved), and the stored spans start after the position.
func TestOrderedPartialOverlap(t *testing.T) {
	for _, sc := range []*arrow.Schema{idSchema, metaSchema} {
		t.Run(sc.Field(0).Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
			path := []string{"raw"}
			sendRows(t, addr, path, sc, true, slices.Concat(rows(0, 1, 10), rows(-1, 1, 4)), rows(2, 1, 3))

			// Interleaved: p0 5..14 and the unpartitioned topic 3..6, p2 4.
			var mixed []row
			for i := range 10 {
				mixed = append(mixed, row{0, uint64(5 + i)})
				if i < 4 {
					mixed = append(mixed, row{-1, uint64(3 + i)})
				}
			}
			mixed = append(mixed, row{2, 4})
			acks := sendRows(t, addr, path, sc, true, mixed)
			require.Equal(t, uint64(1), lastAck(t, acks).Offset)
			require.Equal(t, uint64(len(mixed)), lastAck(t, acks).Records)

			var newRows []row
			for _, r := range mixed {
				if r.part == 0 && r.seq > 10 || r.part == -1 && r.seq > 4 || r.part == 2 {
					newRows = append(newRows, r)
				}
			}
			want := names(rows(0, 1, 10), rows(-1, 1, 4), rows(2, 1, 3), newRows)
			require.Equal(t, want, storedRows(t, addr, path))
			require.Equal(t, map[string]uint64{row{0, 0}.name(): 14, row{-1, 0}.name(): 6, row{2, 0}.name(): 4},
				positionsOf(t, addr, path))
			st := srv.Stats()
			require.Equal(t, int64(len(mixed)-len(newRows)), st.DroppedRows)
			require.Equal(t, int64(1), st.FilteredBatches)
			require.Zero(t, st.DroppedBatches)

			got, err := flight.ReadAll(flighttest.Ctx(t, 10*time.Second), flighttest.Client(t, addr), path, mem)
			require.NoError(t, err)
			defer flight.ReleaseAll(got)
			require.Len(t, got, 3)
			spans := map[string][2]uint64{}
			for _, s := range got[2].Spans {
				spans[s.Partition] = [2]uint64{s.First, s.Last}
			}
			require.Equal(t, map[string][2]uint64{row{0, 0}.name(): {11, 14}, row{-1, 0}.name(): {5, 6}, row{2, 0}.name(): {4, 4}}, spans,
				"the stored spans cover what was stored")
		})
	}
}

// TestOrderedSplitBatchPartialOverlap: the parts of a split ordered batch
// that straddles the position are each filtered; the batch is
// acknowledged once, whole.
func TestOrderedSplitBatchPartialOverlap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	path := []string{"raw"}
	sendRows(t, addr, path, idSchema, true, rows(0, 1, 10))
	all := rows(0, 6, 20)
	parts := [][]row{all[:3], all[3:8], all[8:]} // 6..8 (dropped), 9..13, 14..20
	p := openPut(t, flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), "").schema(path, idSchema)
	for i, rs := range parts {
		rec := idBatch(mem, idSchema, rs)
		p.batch(encodeBatch(t, rec), putMeta(7, spansOf(all), true, i, len(parts)))
		rec.Release()
	}
	acks, err := p.finish()
	require.NoError(t, err)
	require.Equal(t, flightwire.Ack{Offset: 7, Records: 15, HasRecords: true}, lastAck(t, acks))
	require.Equal(t, names(rows(0, 1, 20)), storedRows(t, addr, path))
	require.Equal(t, map[string]uint64{row{0, 0}.name(): 20}, positionsOf(t, addr, path))
}

// TestOrderedWithoutIdentityStoredWhole: an ordered batch that overlaps the
// position but has no identity columns cannot be filtered: it is stored
// whole and counted. One without spans cannot be checked either.
func TestOrderedWithoutIdentityStoredWhole(t *testing.T) {
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	path := []string{"anon"}
	sendRows(t, addr, path, anonSchema, true, rows(0, 1, 10), rows(0, 5, 12))
	require.Len(t, storedRows(t, addr, path), 18)
	require.Equal(t, receiver.Stats{UncheckedBatches: 1}, srv.Stats())
	// Without spans: stored whole, positions unchanged.
	mem := memory.NewGoAllocator()
	p := openPut(t, flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), "").schema(path, anonSchema)
	rec := idBatch(mem, anonSchema, rows(0, 1, 3))
	p.batch(encodeBatch(t, rec), putMeta(1, nil, true, 0, 0))
	rec.Release()
	_, err := p.finish()
	require.NoError(t, err)
	require.Len(t, storedRows(t, addr, path), 21)
	require.Equal(t, receiver.Stats{UncheckedBatches: 2}, srv.Stats())
	require.Equal(t, map[string]uint64{row{0, 0}.name(): 12}, positionsOf(t, addr, path))
}

// TestOrderedWithoutSpansFilteredByRows: an ordered batch without spans
// (a client may omit them) is decided row by row by its identity columns
// and stored with the spans of the rows it keeps, so the positions follow
// it, across a restart too.
func TestOrderedWithoutSpansFilteredByRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: dir, Allocator: mem})
	path := []string{"nospans"}
	sendRows(t, addr, path, idSchema, true, rows(0, 1, 10))
	send := func(rs []row) flightwire.Ack {
		p := openPut(t, flighttest.Ctx(t, 30*time.Second), flighttest.Client(t, addr), "").schema(path, idSchema)
		rec := idBatch(mem, idSchema, rs)
		p.batch(encodeBatch(t, rec), putMeta(1, nil, true, 0, 0))
		rec.Release()
		acks, err := p.finish()
		require.NoError(t, err)
		return lastAck(t, acks)
	}
	require.Equal(t, flightwire.Ack{Offset: 1, Records: 13, HasRecords: true}, send(slices.Concat(rows(0, 5, 15), rows(1, 1, 2))))
	require.Equal(t, flightwire.Ack{Offset: 1, Records: 5, HasRecords: true}, send(rows(0, 16, 20)))
	require.Equal(t, names(rows(0, 1, 15), rows(1, 1, 2), rows(0, 16, 20)), storedRows(t, addr, path))
	want := map[string]uint64{row{0, 0}.name(): 20, row{1, 0}.name(): 2}
	require.Equal(t, want, positionsOf(t, addr, path))
	require.Equal(t, receiver.Stats{DroppedRows: 6, FilteredBatches: 1}, srv.Stats())

	got, err := flight.ReadAll(flighttest.Ctx(t, 10*time.Second), flighttest.Client(t, addr), path, mem)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, []batch.OffsetSpan{{Partition: row{0, 0}.name(), First: 11, Last: 15}, {Partition: row{1, 0}.name(), First: 1, Last: 2}}, got[1].Spans)
	require.Equal(t, []batch.OffsetSpan{{Partition: row{0, 0}.name(), First: 16, Last: 20}}, got[2].Spans)
	flight.ReleaseAll(got)

	require.NoError(t, srv.Stop())
	_, addr = flighttest.Receiver(t, receiver.Options{Dir: dir})
	require.Equal(t, want, positionsOf(t, addr, path))
}

// TestUnorderedStoredTwice: without "ordered" every batch is stored, and
// the positions still advance (to the highest seq stored).
func TestUnorderedStoredTwice(t *testing.T) {
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	path := []string{"shared"}
	sendRows(t, addr, path, idSchema, false, rows(0, 5, 10))
	sendRows(t, addr, path, idSchema, false, rows(0, 1, 10))
	require.Equal(t, names(rows(0, 5, 10), rows(0, 1, 10)), storedRows(t, addr, path))
	require.Equal(t, map[string]uint64{row{0, 0}.name(): 10}, positionsOf(t, addr, path))
	sendRows(t, addr, path, idSchema, false, rows(0, 11, 12))
	require.Equal(t, map[string]uint64{row{0, 0}.name(): 12}, positionsOf(t, addr, path))
	require.Equal(t, receiver.Stats{}, srv.Stats())
}

// TestConcurrentOrderedStreamsStoreOnce: streams of one dataset (a dead
// worker's and its successor's) send the same ordered rows at the same
// time, in batches of different boundaries; every row is stored exactly
// once, every stream is acknowledged through its last offset.
func TestConcurrentOrderedStreamsStoreOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem})
	path := []string{"raw"}
	const streams, total = 4, 3000
	var wg sync.WaitGroup
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batches [][]row
			size := 7 + 5*s // different boundaries: partial overlaps happen
			for first := uint64(1); first <= total; first += uint64(size) {
				var rs []row
				for p := range int32(2) {
					rs = append(rs, rows(p, first, min(first+uint64(size)-1, total))...)
				}
				batches = append(batches, rs)
			}
			acks := sendRows(t, addr, path, idSchema, true, batches...)
			require.Equal(t, uint64(len(batches)), lastAck(t, acks).Offset)
			require.Equal(t, uint64(2*total), lastAck(t, acks).Records)
		}()
	}
	wg.Wait()
	got := storedRows(t, addr, path)
	seen := map[string]int{}
	for _, r := range got {
		seen[r]++
	}
	for p := range int32(2) {
		for s := uint64(1); s <= total; s++ {
			require.Equal(t, 1, seen[row{p, s}.String()], "row %v", row{p, s})
		}
	}
	require.Len(t, got, 2*total)
	// Per partition, stored rows are in seq order.
	last := map[string]uint64{}
	for _, r := range got {
		i := strings.LastIndexByte(r, '/')
		var seq uint64
		fmt.Sscan(r[i+1:], &seq)
		require.Greater(t, seq, last[r[:i]], "%s stored after %d", r, last[r[:i]])
		last[r[:i]] = seq
	}
	st := srv.Stats()
	require.Equal(t, int64((streams-1)*2*total), st.DroppedRows)
	// Whether batches straddled another stream's position (FilteredBatches)
	// depends on how the streams interleave, which a loaded machine may
	// serialise; TestOrderedPartialOverlap holds the filter itself.
	require.Equal(t, map[string]uint64{row{0, 0}.name(): total, row{1, 0}.name(): total}, positionsOf(t, addr, path))
	t.Logf("stats %+v", st)
}

// TestPositionsAction: the action over the wire: listed by ListActions,
// an empty list for a dataset that does not exist, InvalidArgument for a
// malformed body, Unimplemented for another action; positions survive a
// restart.
func TestPositionsAction(t *testing.T) {
	dir := t.TempDir()
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: dir})
	c := flighttest.Client(t, addr)
	ctx := flighttest.Ctx(t, 20*time.Second)

	ls, err := c.ListActions(ctx, &arrowflight.Empty{})
	require.NoError(t, err)
	a, err := ls.Recv()
	require.NoError(t, err)
	require.Equal(t, "positions", a.Type)

	p, err := flight.Positions(ctx, c, []string{"nothing", "here"})
	require.NoError(t, err)
	require.Empty(t, p)
	require.NotNil(t, p)

	for _, body := range []string{``, `[]`, `{"path":[]}`, `{"path":["a",""]}`, `{"pth":["a"]}`, `{"path":["a"]} x`} {
		st, err := c.DoAction(ctx, &arrowflight.Action{Type: "positions", Body: []byte(body)})
		if err == nil {
			_, err = st.Recv()
		}
		require.Equal(t, codes.InvalidArgument, status.Code(err), "body %q: %v", body, err)
	}
	st, err := c.DoAction(ctx, &arrowflight.Action{Type: "compact"})
	if err == nil {
		_, err = st.Recv()
	}
	require.Equal(t, codes.Unimplemented, status.Code(err))

	sendRows(t, addr, []string{"a", "b"}, idSchema, false, rows(3, 1, 4), rows(1, 7, 9))
	st, err = c.DoAction(ctx, &arrowflight.Action{Type: "positions", Body: []byte(`{"path":["a","b"]}`)})
	require.NoError(t, err)
	r, err := st.Recv()
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"positions":[{"partition":%q,"seq":9},{"partition":%q,"seq":4}]}`, row{1, 0}.name(), row{3, 0}.name()), string(r.Body))
	_, err = st.Recv()
	require.Error(t, err, "one result")

	require.NoError(t, srv.Stop())
	_, addr = flighttest.Receiver(t, receiver.Options{Dir: dir})
	require.Equal(t, map[string]uint64{row{1, 0}.name(): 9, row{3, 0}.name(): 4}, positionsOf(t, addr, []string{"a", "b"}))
}

// orderedBatch is batch o of orderedStream: partition o%3, ten rows per
// batch, contiguous seqs per partition from 1.
func orderedBatch(o uint64) []row {
	first := o/3*10 + 1
	return rows(int32(o%3), first, first+9)
}

// orderedStream writes ordered batches from..to-1 (offsets o+1) to path
// until ctx ends or the stream fails, reporting acks.
func orderedStream(ctx context.Context, t testing.TB, c arrowflight.Client, path []string, from, to uint64, acked func(uint64)) {
	mem := memory.NewGoAllocator()
	stream, err := c.DoPut(ctx)
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			r, err := stream.Recv()
			if err != nil {
				return
			}
			a, err := flightwire.ParseAck(r.AppMetadata)
			if err != nil {
				t.Errorf("bad ack: %v", err)
				return
			}
			acked(a.Offset)
		}
	}()
	w := arrowflight.NewRecordWriter(stream, ipc.WithSchema(idSchema), ipc.WithAllocator(mem))
	w.SetFlightDescriptor(&arrowflight.FlightDescriptor{Type: arrowflight.DescriptorPATH, Path: path})
	for o := from; o < to && ctx.Err() == nil; o++ {
		rs := orderedBatch(o)
		rec := idBatch(mem, idSchema, rs)
		err := w.WriteWithAppMetadata(rec, putMeta(o+1, spansOf(rs), true, 0, 0))
		rec.Release()
		if err != nil {
			break
		}
	}
	_ = w.Close()
	_ = stream.CloseSend()
	wg.Wait()
}

// TestCrashOrderedReplayExactlyOnce crashes an in-memory file system at
// random points of an ordered stream (keeping a random share of unsynced
// blocks), restarts, and checks that the served positions are the highest
// seq of the rows that survived, per partition; then a worker replays the
// whole stream from the start and more, ordered: every row ends up stored
// exactly once, without a gap, so the positions were neither ahead of the
// data (rows would be missing) nor behind it (rows would be twice).
func TestCrashOrderedReplayExactlyOnce(t *testing.T) {
	for seed := range 8 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			opts := receiver.Options{Dir: "/data", FS: fs, SegmentSize: 20000}
			srv, addr := flighttest.Receiver(t, opts)
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			crashAt := uint64(10 + rng.IntN(80))
			path := []string{"ordered"}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var (
				mu    sync.Mutex
				clone *vfs.MemFS
			)
			orderedStream(ctx, t, flighttest.Client(t, addr), path, 0, 1<<20, func(o uint64) {
				mu.Lock()
				defer mu.Unlock()
				if o >= crashAt && clone == nil {
					clone = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rand.New(rand.NewPCG(uint64(seed), 13))})
					cancel()
				}
			})
			require.NotNil(t, clone)
			require.NoError(t, srv.Stop())

			opts.FS = clone
			_, addr = flighttest.Receiver(t, opts)
			c := flighttest.Client(t, addr)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			got, err := flight.ReadAll(flighttest.Ctx(t, 20*time.Second), c, path, mem)
			require.NoError(t, err)
			want := map[string]uint64{}
			for _, g := range got {
				parts := g.Rec.Column(1).(*array.Int32)
				seqs := g.Rec.Column(2).(*array.Uint64)
				for i := range seqs.Len() {
					k := row{parts.Value(i), 0}.name()
					want[k] = max(want[k], seqs.Value(i))
				}
			}
			flight.ReleaseAll(got)
			require.Equal(t, want, positionsOf(t, addr, path), "positions after the crash")
			require.GreaterOrEqual(t, want[row{int32((crashAt - 1) % 3), 0}.name()], orderedBatch(crashAt - 1)[9].seq, "acknowledged rows survived")

			// The worker restarts from nothing and replays everything, and
			// more. Recovery kept a prefix of the batches (one stream),
			// perhaps some that were never acknowledged.
			before := len(storedRows(t, addr, path))
			require.Zero(t, before%10)
			end := max(crashAt, uint64(before/10)) + 30
			var last uint64
			orderedStream(flighttest.Ctx(t, 20*time.Second), t, c, path, 0, end, func(o uint64) { last = o })
			require.Equal(t, end, last)
			stored := storedRows(t, addr, path)
			var all []row
			for o := range end {
				all = append(all, orderedBatch(o)...)
			}
			seen := map[string]int{}
			for _, r := range stored {
				seen[r]++
			}
			for _, r := range all {
				require.Equal(t, 1, seen[r.String()], "row %v", r)
			}
			require.Equal(t, len(all), len(stored), "nothing else stored")
		})
	}
}

// TestSyncStats: every sync round a batch waited for is counted, with the
// time the committer spent in it, summed over datasets.
func TestSyncStats(t *testing.T) {
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir()})
	require.Equal(t, receiver.SyncStats{}, srv.SyncStats())
	sendRows(t, addr, []string{"a"}, idSchema, false, rows(0, 1, 10))
	one := srv.SyncStats()
	require.GreaterOrEqual(t, one.Syncs, int64(1), "the batch was acknowledged after a sync")
	require.Greater(t, one.Busy, time.Duration(0))
	sendRows(t, addr, []string{"b"}, idSchema, false, rows(0, 1, 10), rows(0, 11, 20))
	two := srv.SyncStats()
	require.Greater(t, two.Syncs, one.Syncs, "the second dataset's syncs count too")
	require.Greater(t, two.Busy, one.Busy)
}
