package iceberg_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
	"github.com/thalweg/thalweg/internal/testkit/icebergrest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// restOptions are the options of a table in the REST catalog srv, in the
// server's own warehouse.
func restOptions(srv *icebergrest.Server) iceberg.Options {
	o := iceberg.Options{
		Catalog:        iceberg.CatalogOptions{Type: iceberg.CatalogREST, URI: srv.URI},
		Table:          "raw.orders",
		CommitInterval: 20 * time.Millisecond,
	}
	return o
}

// TestRESTCatalog writes raw batches through the Apache Iceberg REST
// catalog fixture (the Iceberg project's server, not iceberg-go's), from
// two sinks one after the other as a restarted worker would, and reads the
// table back with pyiceberg through the same server: every row once, the
// positions in the summaries; Positions and Rebuild read it back.
func TestRESTCatalog(t *testing.T) {
	ctx := ctxFor(t)
	srv := icebergrest.Start(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	o := restOptions(srv)
	o.Allocator = mem
	o.Ordered = true
	off := uint64(0)
	for run := range 2 {
		tbl := openTable(t, o)
		s := dial(t, ctx, tbl)
		firsts := []uint64{1, 101, 201}
		if run == 1 {
			// A restarted worker gets the last batch again (a
			// redelivery): the ordered sink drops it.
			firsts = []uint64{201, 301, 401, 501}
		}
		writeRounds(t, ctx, s, mem, &off, firsts...)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	v := icebergpeer.Read(t, ctx, srv.PeerProps(), o.Table)
	if v.Rows != 1200 {
		t.Errorf("pyiceberg reads %d rows through the REST catalog, want 1200", v.Rows)
	}
	if v.DuckDBCount == nil || *v.DuckDBCount != 1200 {
		t.Errorf("DuckDB count = %v, want 1200", v.DuckDBCount)
	}
	for p := range int32(2) {
		if got := v.Seqs[topic+"/"+string(rune('0'+p))]; !slices.Equal(got, span(1, 600)) {
			t.Errorf("pyiceberg: seqs of partition %d: %d rows, want 1..600 once each", p, len(got))
		}
	}
	if len(v.Snapshots) < 6 {
		t.Errorf("%d snapshots, want at least 6 (one per wait)", len(v.Snapshots))
	}
	checkPositionsAndRebuild(t, ctx, openTable(t, o), 600, 250, 349)
}

// TestRESTCatalogUnreachable: a REST catalog nobody serves is a failure
// that may heal (retryable, Unavailable) and says where it looked.
func TestRESTCatalogUnreachable(t *testing.T) {
	ctx := ctxFor(t)
	o := iceberg.Options{
		Catalog: iceberg.CatalogOptions{Type: iceberg.CatalogREST, URI: "http://" + testenv.FreeAddr(t)},
		Table:   "raw.orders",
	}
	tbl := openTable(t, o)
	_, err := tbl.Dial(ctx)
	var ie *iceberg.Error
	if !errors.As(err, &ie) {
		t.Fatalf("Dial to an unreachable catalog: %v, want an *iceberg.Error", err)
	}
	if !ie.Retryable() {
		t.Errorf("an unreachable catalog is not retryable (%s): %v", ie.StatusName(), err)
	}
	if !strings.Contains(err.Error(), o.Catalog.URI) {
		t.Errorf("the error does not name the catalog %s: %v", o.Catalog.URI, err)
	}
}
