package pipeline_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
	"github.com/thalweg/thalweg/pipeline"
	"github.com/thalweg/thalweg/source/gen"
)

// A pipeline embedded without a Logger whose anchor cannot be reached says
// so — through slog.Default() and the lane's OnStateChange, which passes
// through Destination.Lane — instead of hanging silently.
func TestUnreachableAnchorIsLoggedByDefault(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens there now

	// The handler serialises its writes; the buffer is read after Run, once
	// every lane goroutine is gone.
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)

	store, err := offsetstore.Open(filepath.Join(t.TempDir(), "offsets"), offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	src, err := gen.NewSource(gen.Options{Seed: 1, Partitions: 1, Records: 1000, Mode: gen.ModeRaw})
	if err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int64
	p, err := pipeline.New(pipeline.Options{
		Source:    src,
		Store:     store,
		Assembler: batch.AssemblerOptions{MaxRows: 100},
		Anchor: pipeline.Destination{
			Name: "raw",
			Dial: func(ctx context.Context) (lanes.Transport, error) {
				return flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"events"}})
			},
			Lane: pipeline.LaneOptions{
				Backoff: lanes.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond},
				OnStateChange: func(c lanes.StateChange) {
					if c.Err != nil && c.Attempt > 0 {
						failures.Add(1)
					}
				},
			},
		},
		DrainTimeout: 200 * time.Millisecond,
		// No Logger.
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	runErr := p.Run(ctx)
	t.Logf("Run: %v", runErr)
	if failures.Load() == 0 {
		t.Error("OnStateChange set in Destination.Lane saw no failed dial")
	}
	out := logs.String()
	if !strings.Contains(out, `msg="lane failing"`) || !strings.Contains(out, "destination=raw") || !strings.Contains(out, "step=dial") {
		t.Fatalf("slog.Default() got no failed dial of destination raw:\n%s", out)
	}
}
