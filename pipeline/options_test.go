package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/lanes"
	"github.com/thalweg/thalweg/offsetstore"
)

// Every invalid field is reported at once, each by name, in one error that
// wraps ErrInvalidOptions; nothing is built.
func TestOptionsValidation(t *testing.T) {
	_, err := New(Options{
		Anchor:       Destination{Queue: -1},
		Secondaries:  []Destination{{Name: "s"}, {Name: "s"}},
		DrainTimeout: -1,
		MaxUnacked:   -1,
	})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New = %v, want ErrInvalidOptions", err)
	}
	for _, field := range []string{
		"Options.Source", "Options.Store", "Options.Anchor.Name", "Options.Anchor.Dial", "Options.Anchor.Queue",
		`Options.Secondaries[1].Name "s" is used twice`, "Options.Secondaries[0].Dial",
		"Options.DrainTimeout", "Options.MaxUnacked",
	} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
}

// nopSource is a Source for tests that never run the pipeline.
type nopSource struct{}

func (nopSource) Next(ctx context.Context, _ *batch.Record) error { <-ctx.Done(); return ctx.Err() }
func (nopSource) Ack([]batch.OffsetSpan) error                    { return nil }
func (nopSource) DeadLetter(context.Context, *batch.Record, string) error {
	return nil
}
func (nopSource) Close() error { return nil }

// The options of the parts the pipeline builds (each lane's LaneOptions,
// the Assembler) are the pipeline's options too: an invalid one is
// ErrInvalidOptions naming its field by its path, not a bare error of the
// lanes or batch package. The Assembler callbacks the pipeline sets itself
// (Emit, OnReject) are refused when set, not silently overwritten.
func TestNestedOptionsValidation(t *testing.T) {
	store, err := offsetstore.Open(t.TempDir(), offsetstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dial := func(context.Context) (lanes.Transport, error) { return nil, errors.New("no sink in this test") }
	for _, c := range []struct {
		name string
		set  func(*Options)
		want []string
	}{
		{"anchor lane", func(o *Options) { o.Anchor.Lane.Capacity = -1 }, []string{"Options.Anchor.Lane: ", "Options.Capacity -1"}},
		{"secondary lane", func(o *Options) {
			o.Secondaries = []Destination{{Name: "s", Dial: dial, Lane: LaneOptions{AckTimeout: -1}}}
		}, []string{"Options.Secondaries[0].Lane: ", "Options.AckTimeout"}},
		{"assembler", func(o *Options) { o.Assembler.MaxRows = -1 }, []string{"Options.Assembler: ", "MaxRows -1"}},
		{"assembler callbacks", func(o *Options) {
			o.Assembler.Emit = func(b *batch.Batch) { b.Release() }
			o.Assembler.OnReject = func(*batch.Record, error) {}
		}, []string{"Options.Assembler.Emit", "Options.Assembler.OnReject"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Source: nopSource{}, Store: store, Anchor: Destination{Name: "raw", Dial: dial},
				Logger: slog.New(slog.DiscardHandler)}
			c.set(&o)
			p, err := New(o)
			if err == nil {
				p.closeLanes(context.Background())
				t.Fatal("New accepted the options")
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("New = %v, want ErrInvalidOptions", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
		})
	}
}
