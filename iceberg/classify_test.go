package iceberg_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/thalweg/thalweg/iceberg"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/lanes"
)

// TestErrorsClassifyThroughLanes: the lane decides retry or poison by
// lanes.Classify, which finds the sink's *Error in the chain the lane
// wraps: a catalog nobody serves heals (retryable, Unavailable), a
// warehouse the worker cannot write does not (permanent).
func TestErrorsClassifyThroughLanes(t *testing.T) {
	ctx := ctxFor(t)
	classify := func(t *testing.T, err error, want lanes.Class, wantCode string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		class, code := lanes.Classify(fmt.Errorf("lane: %w", err))
		if class != want || code != wantCode {
			t.Errorf("Classify(%v) = %v %q, want %v %q", err, class, code, want, wantCode)
		}
	}
	t.Run("catalog unreachable", func(t *testing.T) {
		tbl := openTable(t, iceberg.Options{
			Catalog: iceberg.CatalogOptions{Type: iceberg.CatalogREST, URI: "http://" + testenv.FreeAddr(t)},
			Table:   "raw.orders",
		})
		_, err := tbl.Dial(ctx)
		classify(t, err, lanes.ClassRetryable, "Unavailable")
	})
	t.Run("warehouse unwritable", func(t *testing.T) {
		o := sqlOptions(t)
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		o.Warehouse = filepath.Join(file, "warehouse")
		_, mem, _, s := newSink(t, o)
		b := rawBatch(mem, 0, 1, 10)
		err := s.Send(ctx, 1, b)
		b.Release()
		if err == nil {
			err = s.WaitDurable(ctx, 1)
		}
		classify(t, err, lanes.ClassPermanent, "InvalidArgument")
	})
}
