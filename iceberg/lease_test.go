package iceberg

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/observability"
)

// TestMaintenanceLease: two sinks on one table (the SQL catalog): the
// first to commit takes the maintenance lease and is the only one that
// maintains; the other never steals the live lease; when the holder goes
// away cut off from the catalog (as a killed one does: no release), the
// other takes the lease once it passed and maintains, within LeaseTTL +
// CommitInterval + Interval of the holder's last commit.
func TestMaintenanceLease(t *testing.T) {
	testLeaseTakeover(t, testOptions(t))
}

// TestMaintenanceLeaseREST is TestMaintenanceLease through the REST
// catalog fixture.
func TestMaintenanceLeaseREST(t *testing.T) {
	srv := icebergrest.Start(t)
	testLeaseTakeover(t, Options{
		Catalog: CatalogOptions{Type: CatalogREST, URI: srv.URI}, Table: "raw.orders",
		CommitInterval: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
	})
}

// commitLatencySlack is what the takeover bound allows for the commits'
// own latency, which the bound does not count and a loaded test machine
// stretches (hundreds of milliseconds per commit on two shared cores).
const commitLatencySlack = 2 * time.Second

func testLeaseTakeover(t *testing.T, o Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o.Allocator = mem
	o.CommitTimeout = 5 * time.Second
	o.Maintenance = MaintenanceOptions{Interval: 50 * time.Millisecond, SnapshotMaxAge: 300 * time.Millisecond,
		MinSnapshots: 3, OrphanAge: time.Hour, OrphanInterval: time.Hour, LeaseTTL: 1500 * time.Millisecond,
		CompactMinFiles: -1}
	oa, ob := o, o
	oa.Maintenance.Holder, ob.Maintenance.Holder = "worker-a", "worker-b"
	ra, rb := sdkmetric.NewManualReader(), sdkmetric.NewManualReader()
	oa.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(ra))
	ob.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(rb))
	cut := &cutCatalog{}
	oa = WithCatalogHook(oa, func(c catalogIO) catalogIO { cut.catalogIO = c; return cut })
	ta, sa := openDial(t, ctx, oa)
	var sb *Sink
	var offA, offB uint64
	send := func(s *Sink, p int32, off *uint64) {
		t.Helper()
		*off++
		b := ibatch(mem, p, 10*(*off-1)+1, 10)
		err := s.Send(ctx, *off, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitDurable(ctx, *off); err != nil {
			t.Fatal(err)
		}
	}
	lease := func() Lease {
		t.Helper()
		tbl, _, err := ta.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := tableLease(tbl)
		if !ok {
			t.Fatalf("the table has no readable lease: %q", tbl.Properties()[PropMaintenanceLease])
		}
		return l
	}
	expired := func(r *sdkmetric.ManualReader) int64 {
		return metricValues(t, r)[observability.IcebergSnapshotsExpired]
	}

	send(sa, 0, &offA) // the first commit takes the lease
	// The other starts on the table with a live lease: one started before
	// the table existed could take it first (TestIdleSinkMaintains).
	_, sb = openDial(t, ctx, ob)
	// Both append for three lease lifetimes: the holder renews its lease
	// on its commits, the other never takes it.
	for end := time.Now().Add(3 * o.Maintenance.LeaseTTL); time.Now().Before(end); {
		send(sa, 0, &offA)
		send(sb, 1, &offB)
		if l := lease(); l.Holder != "worker-a" {
			t.Fatalf("the lease of a live holder was taken: %+v", l)
		}
	}
	if n := expired(rb); n != 0 {
		t.Errorf("the worker without the lease expired %d snapshots", n)
	}
	if n := expired(ra); n == 0 {
		t.Errorf("the lease's holder expired no snapshot")
	}
	// The worker without the lease still exports the table's gauges.
	if ms := metricValues(t, rb); ms[observability.IcebergSnapshots] == 0 || ms[observability.IcebergMetadataBytes] == 0 {
		t.Errorf("the worker without the lease exports %d snapshots and %d metadata bytes; want the table's",
			ms[observability.IcebergSnapshots], ms[observability.IcebergMetadataBytes])
	}

	// The holder goes away without releasing the lease: its commits fail.
	// It renews the lease when half of its TTL is left, so the lease may
	// pass up to half a TTL after its last commit: what the other worker
	// must wait for is the lease's until.
	held := lease()
	last := time.Now()
	cut.cut.Store(true)
	if err := sa.Close(); err != nil {
		t.Fatal(err)
	}
	bound := o.Maintenance.LeaseTTL + o.CommitInterval + o.Maintenance.Interval + commitLatencySlack
	var took time.Duration
	var tookAt time.Time
	testenv.WaitFor(t, bound-time.Since(last), "the other worker to take the lease and maintain", func() bool {
		send(sb, 1, &offB)
		if took == 0 && lease().Holder == "worker-b" {
			tookAt = time.Now()
			took = tookAt.Sub(last)
		}
		return took > 0 && expired(rb) > 0
	})
	t.Logf("the other worker took the lease %v and maintained %v after the holder's last commit (lease TTL %v, until %v after it)",
		took, time.Since(last), o.Maintenance.LeaseTTL, held.Until.Sub(last))
	if tookAt.Before(held.Until) {
		t.Errorf("the lease was taken %v before it passed (its until %v)", held.Until.Sub(tookAt), held.Until)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]uint64{0: 10 * offA, 1: 10 * offB} {
		if rows := rebuiltRows(t, ctx, ta, ipart(p)); rows != int64(want) {
			t.Errorf("partition %d: %d rows, want %d", p, rows, want)
		}
	}
}

// cutCatalog fails every commit once cut holds, as for a worker cut off
// from the catalog.
type cutCatalog struct {
	catalogIO
	cut atomic.Bool
}

func (c *cutCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if c.cut.Load() {
		return nil, "", errors.New("catalog unreachable")
	}
	return c.catalogIO.CommitTable(ctx, ident, reqs, updates)
}

// TestMaintenanceLeaseReleasedOnClose: two sinks on one table (the SQL
// catalog) with a lease of an hour; the holder is closed, and the other
// holds the lease within a few of its commits, not once the hour passed.
func TestMaintenanceLeaseReleasedOnClose(t *testing.T) {
	testLeaseRelease(t, testOptions(t))
}

// TestMaintenanceLeaseReleasedOnCloseREST is
// TestMaintenanceLeaseReleasedOnClose through the REST catalog fixture.
func TestMaintenanceLeaseReleasedOnCloseREST(t *testing.T) {
	srv := icebergrest.Start(t)
	testLeaseRelease(t, Options{
		Catalog: CatalogOptions{Type: CatalogREST, URI: srv.URI}, Table: "raw.orders",
		CommitInterval: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
	})
}

func testLeaseRelease(t *testing.T, o Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o.Allocator = mem
	o.CommitTimeout = 5 * time.Second
	o.Maintenance = MaintenanceOptions{Interval: 50 * time.Millisecond, OrphanAge: 2 * time.Hour,
		OrphanInterval: time.Hour, LeaseTTL: time.Hour, CompactMinFiles: -1}
	oa, ob := o, o
	oa.Maintenance.Holder, ob.Maintenance.Holder = "worker-a", "worker-b"
	ta, sa := openDial(t, ctx, oa)
	lease := func() Lease {
		t.Helper()
		tbl, _, err := ta.load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := tableLease(tbl)
		return l
	}
	var offA, offB uint64
	commitUntil(t, ctx, sa, mem, &offA, 1, "the first commit", func() bool { return true })
	_, sb := openDial(t, ctx, ob) // on the table worker-a's first commit made, with its lease
	commitUntil(t, ctx, sb, mem, &offB, 1, "the first commit", func() bool { return true })
	if l := lease(); l.Holder != "worker-a" {
		t.Fatalf("lease %+v after the first commit, want worker-a's", l)
	}
	if err := sa.Close(); err != nil {
		t.Fatal(err)
	}
	if l := lease(); l.Holder != "worker-a" || l.Until.After(time.Now()) {
		t.Errorf("lease %+v after the holder closed, want worker-a's, passed", l)
	}
	n := commitUntil(t, ctx, sb, mem, &offB, 10, "the other worker holds the lease", func() bool {
		return lease().Holder == "worker-b"
	})
	if l := lease(); l.Until.Before(time.Now().Add(o.Maintenance.LeaseTTL / 2)) {
		t.Errorf("lease %+v taken, want it to last LeaseTTL %v", l, o.Maintenance.LeaseTTL)
	}
	t.Logf("the other worker held the lease after %d of its commits", n)
}

// TestLeaseValue: what a commit writes into the lease property: it takes a
// missing, unreadable or passed lease, keeps off another worker's live
// one, and renews its own once half of LeaseTTL passed; a sink with
// maintenance off writes none.
func TestLeaseValue(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ttl := time.Minute
	s := &Sink{opts: &Options{Maintenance: MaintenanceOptions{Holder: "me", LeaseTTL: ttl}}}
	mine := Lease{Holder: "me", Until: now.Add(ttl)}.String()
	withLease := func(v *string) *table.Table {
		t.Helper()
		props := iceberg.Properties{}
		if v != nil {
			props[PropMaintenanceLease] = *v
		}
		meta, err := table.NewMetadata(iceberg.NewSchema(0), iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///t", props)
		if err != nil {
			t.Fatal(err)
		}
		return table.New(table.Identifier{"ns", "t"}, meta, "", nil, nil)
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		lease *string
		want  string
		holds bool
	}{
		{"none", nil, mine, false},
		{"unreadable", str("{"), mine, false},
		{"another's, passed", str(Lease{Holder: "other", Until: now.Add(-time.Second)}.String()), mine, false},
		{"another's, live", str(Lease{Holder: "other", Until: now.Add(time.Second)}.String()), "", false},
		{"mine, fresh", str(Lease{Holder: "me", Until: now.Add(ttl/2 + time.Second)}.String()), "", true},
		{"mine, half passed", str(Lease{Holder: "me", Until: now.Add(ttl / 2)}.String()), mine, true},
		{"mine, passed", str(Lease{Holder: "me", Until: now}.String()), mine, false},
	} {
		tbl := withLease(tc.lease)
		if got := s.leaseValue(tbl, now); got != tc.want {
			t.Errorf("%s: leaseValue %q, want %q", tc.name, got, tc.want)
		}
		if got := s.holdsLease(tbl, now); got != tc.holds {
			t.Errorf("%s: holdsLease %v, want %v", tc.name, got, tc.holds)
		}
	}
	l, err := ParseLease(mine)
	if err != nil || l.Holder != "me" || !l.Until.Equal(now.Add(ttl)) {
		t.Errorf("ParseLease(%s) = %+v, %v", mine, l, err)
	}
	s.opts.Maintenance.Disabled = true
	if got := s.leaseValue(withLease(nil), now); got != "" {
		t.Errorf("maintenance off: leaseValue %q, want none", got)
	}
}
