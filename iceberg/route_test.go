package iceberg

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
	"github.com/thalweg/thalweg/observability"
)

// These tests are internal: TestRouterWaitsForEveryTable holds one
// table's commits at the catalog (hooks.catalog).

const (
	topicA = "persistent://public/default/alpha"
	topicB = "persistent://public/default/beta"
	topicC = "persistent://acme/sales/gamma-x"
)

// row is one row's identity.
type row struct {
	topic string
	part  int32
	seq   uint64
}

// rowsOf are n rows of topic's partition p from seq first on.
func rowsOf(topic string, p int32, first uint64, n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{topic, p, first + uint64(i)}
	}
	return out
}

// mixedBatch builds rows (topic, partition, seq, v) in the order given, v
// of type vType (uint32 or utf8); its spans are each partition's lowest to
// highest seq, plus extra (spans of rejected records).
func mixedBatch(mem memory.Allocator, vType arrow.DataType, rows []row, extra ...batch.OffsetSpan) *batch.Batch {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "topic", Type: arrow.BinaryTypes.String},
		{Name: "partition", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "v", Type: vType, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	spans := map[string]*batch.OffsetSpan{}
	var order []string
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.topic)
		b.Field(1).(*array.Int32Builder).Append(r.part)
		b.Field(2).(*array.Uint64Builder).Append(r.seq)
		switch vb := b.Field(3).(type) {
		case *array.Uint32Builder:
			vb.Append(uint32(r.seq))
		case *array.StringBuilder:
			vb.Append("v")
		}
		name := batch.JoinPartition(r.topic, r.part)
		if sp, ok := spans[name]; ok {
			sp.First, sp.Last = min(sp.First, r.seq), max(sp.Last, r.seq)
			continue
		}
		spans[name] = &batch.OffsetSpan{Partition: name, First: r.seq, Last: r.seq}
		order = append(order, name)
	}
	out := &batch.Batch{Rec: b.NewRecordBatch()}
	for _, n := range order {
		out.Spans = append(out.Spans, *spans[n])
	}
	out.Spans = append(out.Spans, extra...)
	return out
}

// routeOptions are testOptions with a template and a checked allocator
// that t's cleanup checks once everything closed.
func routeOptions(t *testing.T, tmpl string) Options {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	o := testOptions(t)
	o.Table, o.Allocator = tmpl, mem
	return o
}

func openTables(t *testing.T, o Options) *Tables {
	t.Helper()
	ts, err := OpenTables(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ts.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func dialRouter(t *testing.T, ctx context.Context, ts *Tables) *Router {
	t.Helper()
	r, err := ts.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// routeSend sends b at offset and releases it.
func routeSend(t *testing.T, ctx context.Context, r *Router, offset uint64, b *batch.Batch) {
	t.Helper()
	defer b.Release()
	if err := r.Send(ctx, offset, b); err != nil {
		t.Fatalf("Send(%d): %v", offset, err)
	}
}

func storedIn(t *testing.T, ctx context.Context, ts *Tables, name string) []uint64 {
	t.Helper()
	tbl, err := ts.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return stored(t, ctx, tbl)
}

func TestParseTemplate(t *testing.T) {
	for _, tc := range []struct{ tmpl, err string }{
		{"raw.{topic}", ""},
		{"{namespace}.{tenant}_{topic}", ""},
		{"lake.{tenant}.t_{topic}_v1", ""},
		{"raw.{topc}", "unknown placeholder {topc}"},
		{"raw.{topic", "no closing brace"},
		{"raw.topic}", `"}" outside a placeholder`},
		{"{topic}", "want namespace.table"},
		{"raw..{topic}", "a part is empty"},
		{"raw.{topic}.", "a part is empty"},
		{"raw-x.{topic}", `"-" outside a placeholder`},
	} {
		err := ParseTemplate(tc.tmpl)
		if tc.err == "" && err != nil {
			t.Errorf("%q: %v", tc.tmpl, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrTemplate)) {
			t.Errorf("%q: error %v, want one with %q", tc.tmpl, err, tc.err)
		}
	}
	if IsTemplate("raw.orders") || !IsTemplate("raw.{topic}") {
		t.Error("IsTemplate")
	}
	if _, err := Open(Options{Catalog: CatalogOptions{URI: "/c.db"}, Warehouse: "/w", Table: "raw.{topic}"}); err == nil ||
		!strings.Contains(err.Error(), "OpenTables") {
		t.Errorf("Open of a template: %v, want a refusal naming OpenTables", err)
	}
}

func TestTemplateRender(t *testing.T) {
	for _, tc := range []struct{ tmpl, part, want, err string }{
		{"raw.{topic}", batch.JoinPartition(topicA, 3), "raw.alpha", ""},
		{"raw.{topic}", topicA, "raw.alpha", ""},
		{"{namespace}.{tenant}_{topic}", batch.JoinPartition(topicC, 0), "sales.acme_gamma_x", ""},
		{"raw.{topic}", "persistent://t/n/a.b-c/d é", "raw.a_b_c_d__", ""},
		{"raw.{topic}", "gen-0", "raw.gen_0", ""},
		{"{tenant}.{topic}", "gen-0", "", "gives an empty part"},
	} {
		tmpl, err := parseTemplate(tc.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tmpl.render(tc.part)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q of %q = %q, %v; want %q, %q", tc.tmpl, tc.part, got, err, tc.want, tc.err)
		}
	}
}

// A batch of three topics lands in three tables, each row once in its
// topic's table; Positions is the union, Rebuild reads each partition's
// table; a batch of one table passes through whole.
func TestRouterSplitsMixedBatches(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	reader := sdkmetric.NewManualReader()
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	mem := o.Allocator
	var rows []row
	for i := range 10 { // interleaved: a, b, c, a, b, c...
		rows = append(rows, row{topicA, 0, uint64(1 + i)}, row{topicB, 1, uint64(100 + i)}, row{topicC, 0, uint64(7 + i)})
	}
	routeSend(t, ctx, r, 1, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rows))
	routeSend(t, ctx, r, 2, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(topicA, 0, 11, 5)))
	if err := r.WaitDurable(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]uint64{
		"raw.alpha": seqRangeOf(1, 15), "raw.beta": seqRangeOf(100, 109), "raw.gamma_x": seqRangeOf(7, 16),
	} {
		if got := storedIn(t, ctx, ts, name); !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", name, got, want)
		}
	}
	names, err := ts.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"raw.alpha", "raw.beta", "raw.gamma_x"}; !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	if got := filesByTable(t, reader); len(got) != 3 || got["raw.alpha"] == 0 || got["raw.beta"] == 0 || got["raw.gamma_x"] == 0 {
		t.Errorf("data files by table attribute: %v, want some for each of the three tables", got)
	}
	pos, err := ts.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{batch.JoinPartition(topicA, 0): 15, batch.JoinPartition(topicB, 1): 109, batch.JoinPartition(topicC, 0): 16}
	if len(pos) != len(want) {
		t.Errorf("Positions = %v, want %v", pos, want)
	}
	for p, seq := range want {
		if pos[p] != seq {
			t.Errorf("Positions[%s] = %d, want %d", p, pos[p], seq)
		}
	}
	bs, err := ts.Rebuild(ctx, batch.JoinPartition(topicB, 1), 0, math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, b := range bs {
		got = append(got, b.Rec.Column(b.Rec.Schema().FieldIndices("seq")[0]).(*array.Uint64).Uint64Values()...)
		b.Release()
	}
	if !slices.Equal(got, seqRangeOf(100, 109)) {
		t.Errorf("Rebuild(beta-1) = %v", got)
	}
}

// Positions keeps only the partitions that route to the table they are
// read from: a table of the namespace that another writer filled with
// other topics' positions adds none.
func TestRoutedPositionsIgnoreForeignPartitions(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	ctx := routeCtx(t)
	// A plain table raw.alpha (as a template would name it) written with
	// beta's rows.
	plain := o
	plain.Table = "raw.alpha"
	tbl := mustOpen(t, plain)
	s, err := tbl.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := mixedBatch(o.Allocator, arrow.PrimitiveTypes.Uint32, rowsOf(topicB, 0, 1, 3))
	if err := s.Send(ctx, 1, b); err != nil {
		t.Fatal(err)
	}
	b.Release()
	if err := s.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ts := openTables(t, o)
	pos, err := ts.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) != 0 {
		t.Errorf("Positions = %v, want none (beta does not route to raw.alpha)", pos)
	}
}

// An ordered Router re-dialled after a crash (its last batches sent again)
// stores every row of every table once.
func TestRouterExactlyOnceAcrossRedial(t *testing.T) {
	o := routeOptions(t, "{namespace}.{topic}")
	o.Ordered = true
	ctx := routeCtx(t)
	ts := openTables(t, o)
	mem := o.Allocator
	batchAt := func(i uint64) *batch.Batch {
		return mixedBatch(mem, arrow.PrimitiveTypes.Uint32,
			append(rowsOf(topicA, 0, 1+10*i, 10), rowsOf(topicC, 2, 1+5*i, 5)...))
	}
	r := dialRouter(t, ctx, ts)
	for i := range uint64(4) {
		routeSend(t, ctx, r, i+1, batchAt(i))
	}
	if err := r.WaitDurable(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r.Close() // batch 4 may or may not have been committed
	r = dialRouter(t, ctx, ts)
	for i := uint64(1); i < 6; i++ { // replays 2..4, then 5 and 6
		routeSend(t, ctx, r, i+1, batchAt(i))
	}
	if err := r.WaitDurable(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if got, want := storedIn(t, ctx, ts, "default.alpha"), seqRangeOf(1, 60); !slices.Equal(got, want) {
		t.Errorf("default.alpha holds %v, want %v", got, want)
	}
	if got, want := storedIn(t, ctx, ts, "sales.gamma_x"), seqRangeOf(1, 30); !slices.Equal(got, want) {
		t.Errorf("sales.gamma_x holds %v, want %v", got, want)
	}
}

// heldCatalog holds the commits of one table until released.
type heldCatalog struct {
	catalogIO
	table   string
	release chan struct{}
}

func (h *heldCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if strings.Join(ident, ".") == h.table {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
	return h.catalogIO.CommitTable(ctx, ident, reqs, updates)
}

// WaitDurable waits for every table that got a part of a batch at or
// below its offset, and for no other: a table held at the catalog keeps
// an offset it got a part of from being durable, and not one it got
// nothing of.
func TestRouterWaitsForEveryTable(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	h := &heldCatalog{table: "raw.beta", release: make(chan struct{})}
	o.hooks.catalog = func(c catalogIO) catalogIO { h.catalogIO = c; return h }
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	mem := o.Allocator
	// alpha exists first, so that its Sink's creation is not held.
	routeSend(t, ctx, r, 1, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(topicA, 0, 1, 3)))
	routeSend(t, ctx, r, 2, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(topicB, 0, 1, 3)))
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatalf("WaitDurable(1), beta held: %v (beta got nothing at 1)", err)
	}
	routeSend(t, ctx, r, 3, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(topicA, 0, 4, 3)))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := r.WaitDurable(short, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitDurable(3) with beta held = %v, want the context's deadline", err)
	}
	close(h.release)
	if err := r.WaitDurable(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := storedIn(t, ctx, ts, "raw.beta"); !slices.Equal(got, seqRangeOf(1, 3)) {
		t.Errorf("raw.beta holds %v", got)
	}
}

// A batch of no rows (every record rejected) still reaches the tables of
// its spans, whose positions advance.
func TestRouterZeroRowBatch(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	mem := o.Allocator
	routeSend(t, ctx, r, 1, mixedBatch(mem, arrow.PrimitiveTypes.Uint32,
		append(rowsOf(topicA, 0, 1, 2), rowsOf(topicB, 0, 1, 2)...)))
	routeSend(t, ctx, r, 2, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, nil,
		batch.OffsetSpan{Partition: batch.JoinPartition(topicA, 0), First: 3, Last: 9},
		batch.OffsetSpan{Partition: batch.JoinPartition(topicB, 0), First: 3, Last: 5}))
	// A batch with rows of alpha only and rejected records of beta.
	routeSend(t, ctx, r, 3, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(topicA, 0, 10, 1),
		batch.OffsetSpan{Partition: batch.JoinPartition(topicB, 0), First: 6, Last: 8}))
	if err := r.WaitDurable(ctx, 3); err != nil {
		t.Fatal(err)
	}
	pos, err := ts.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := pos[batch.JoinPartition(topicA, 0)], pos[batch.JoinPartition(topicB, 0)]; a != 10 || b != 8 {
		t.Errorf("positions alpha %d, beta %d; want 10, 8 (%v)", a, b, pos)
	}
	if got := storedIn(t, ctx, ts, "raw.beta"); !slices.Equal(got, seqRangeOf(1, 2)) {
		t.Errorf("raw.beta holds %v", got)
	}
}

// Two topics that sanitise to one table with incompatible schemas: the
// second's records are refused for good, naming both topics, the table
// and the field; the table keeps the first topic's rows and schema.
func TestRouterCollisionRefused(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	mem := o.Allocator
	const dash, dot = "persistent://public/default/a-b", "persistent://public/default/a.b"
	routeSend(t, ctx, r, 1, mixedBatch(mem, arrow.PrimitiveTypes.Uint32, rowsOf(dash, 0, 1, 3)))
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := mixedBatch(mem, arrow.BinaryTypes.String, rowsOf(dot, 0, 1, 3))
	err := r.Send(ctx, 2, b)
	b.Release()
	e, ok := errorsAs(err)
	if !ok || !e.Permanent() || e.Retryable() {
		t.Fatalf("Send of the colliding topic = %v, want a permanent, not retryable *Error", err)
	}
	for _, want := range []string{dash, dot, "raw.a_b", `"v"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if err2 := r.WaitDurable(ctx, 1); err2 == nil {
		t.Error("WaitDurable after the refusal: nil, want the Router's failure")
	}
	if got := storedIn(t, ctx, ts, "raw.a_b"); !slices.Equal(got, seqRangeOf(1, 3)) {
		t.Errorf("raw.a_b holds %v", got)
	}
	tbl, _ := ts.Table("raw.a_b")
	it, _, err := tbl.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := it.Schema().FindFieldByName("v"); !ok || f.Type.String() != "long" {
		t.Errorf("raw.a_b's v is %v, want long (uint32) as the first topic made it", f)
	}
}

// A batch of several tables without identity columns cannot be split: it
// is refused for good.
func TestRouterUnsplittable(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	s := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Uint32}}, nil)
	bld := array.NewRecordBuilder(o.Allocator, s)
	defer bld.Release()
	bld.Field(0).(*array.Uint32Builder).AppendValues([]uint32{1, 2}, nil)
	b := &batch.Batch{Rec: bld.NewRecordBatch(), Spans: []batch.OffsetSpan{
		{Partition: batch.JoinPartition(topicA, 0), First: 1, Last: 1},
		{Partition: batch.JoinPartition(topicB, 0), First: 1, Last: 1}}}
	defer b.Release()
	err := r.Send(ctx, 1, b)
	e, ok := errorsAs(err)
	if !errors.Is(err, ErrUnsplittable) || !ok || !e.Permanent() || e.Retryable() ||
		!strings.Contains(err.Error(), "raw.alpha, raw.beta") {
		t.Fatalf("Send = %v, want a permanent ErrUnsplittable naming both tables", err)
	}
}

// routeCtx is a deadline for everything a test does.
func routeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// flakyCreate fails the first creation of one table with an error that
// heals.
type flakyCreate struct {
	catalogIO
	table  string
	failed bool
}

func (f *flakyCreate) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if strings.Join(ident, ".") == f.table && !f.failed {
		f.failed = true
		return nil, errors.New("injected: connection reset")
	}
	return f.catalogIO.CreateTable(ctx, ident, sc, opts...)
}

// A Send that one table failed to take with an error that heals leaves
// the Router usable: the lane's retry under the same offset goes only to
// the tables that did not get the batch, and every row is stored once.
func TestRouterSendRetried(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	f := &flakyCreate{table: "raw.beta"}
	o.hooks.catalog = func(c catalogIO) catalogIO { f.catalogIO = c; return f }
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	b := mixedBatch(o.Allocator, arrow.PrimitiveTypes.Uint32, append(rowsOf(topicA, 0, 1, 3), rowsOf(topicB, 0, 1, 4)...))
	defer b.Release()
	err := r.Send(ctx, 1, b)
	e, ok := errorsAs(err)
	if !ok || e.Permanent() || !strings.Contains(err.Error(), "raw.beta") {
		t.Fatalf("first Send = %v, want an error that is not permanent, naming raw.beta", err)
	}
	if err := r.Send(ctx, 1, b); err != nil {
		t.Fatalf("Send retried: %v", err)
	}
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]uint64{"raw.alpha": seqRangeOf(1, 3), "raw.beta": seqRangeOf(1, 4)} {
		if got := storedIn(t, ctx, ts, name); !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", name, got, want)
		}
	}
}

// filesByTable is the data files counter per table attribute.
func filesByTable(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == observability.IcebergDataFiles {
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value(observability.AttrTable)
					out[v.AsString()] += p.Value
				}
			}
		}
	}
	return out
}

// Through the Iceberg REST catalog fixture, a template with a placeholder
// in the namespace: the tables land in one namespace per Pulsar namespace,
// List finds them by listing the catalog's namespaces, Positions is their
// union.
func TestRouterREST(t *testing.T) {
	srv := icebergrest.Start(t)
	o := routeOptions(t, "{namespace}.t_{topic}")
	o.Catalog, o.Warehouse = CatalogOptions{Type: CatalogREST, URI: srv.URI}, ""
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	routeSend(t, ctx, r, 1, mixedBatch(o.Allocator, arrow.PrimitiveTypes.Uint32,
		append(rowsOf(topicA, 1, 5, 3), rowsOf(topicC, 0, 1, 2)...)))
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	names, err := ts.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default.t_alpha", "sales.t_gamma_x"}; !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	pos, err := ts.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, c := pos[batch.JoinPartition(topicA, 1)], pos[batch.JoinPartition(topicC, 0)]; len(pos) != 2 || a != 7 || c != 2 {
		t.Errorf("Positions = %v, want alpha-1 at 7, gamma-x-0 at 2", pos)
	}
}

// Every log line of a routed table's Sink names its table once: the
// Sink's lines carry the table themselves, so a logger that added it
// again would print it twice.
func TestRoutedTableLogsNameIt(t *testing.T) {
	o := routeOptions(t, "raw.{topic}")
	var logs crashtest.LogBuffer
	o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	ctx := routeCtx(t)
	ts := openTables(t, o)
	r := dialRouter(t, ctx, ts)
	mem := o.Allocator
	routeSend(t, ctx, r, 1, mixedBatch(mem, arrow.PrimitiveTypes.Uint32,
		append(rowsOf(topicA, 0, 1, 3), rowsOf(topicB, 0, 1, 3)...)))
	if err := r.WaitDurable(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // each table's lease released, and logged
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	named := map[string]bool{}
	for _, l := range lines {
		if n := strings.Count(l, `"table":`); n != 1 {
			t.Errorf("%d table keys in %s", n, l)
		}
		for _, tb := range []string{"raw.alpha", "raw.beta"} {
			if strings.Contains(l, `"table":"`+tb+`"`) {
				named[tb] = true
			}
		}
	}
	if len(named) != 2 {
		t.Errorf("lines naming the tables %v, want both:\n%s", named, logs.String())
	}
}
