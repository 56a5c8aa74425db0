package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

// deliverTo stores records of partition seqs first..last at the Flight
// receiver at addr (dataset raw) through the real sink.
func deliverTo(t *testing.T, addr, token, partition string, first, last uint64) {
	t.Helper()
	ctx := flighttest.Ctx(t, 30*time.Second)
	sink, err := flight.Dial(ctx, flight.Options{Endpoint: addr, Path: []string{"raw"}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var out []*batch.Batch
	asm, err := batch.NewAssembler(batch.AssemblerOptions{MaxRows: 1 << 20, Allocator: memory.NewGoAllocator(),
		Emit: func(b *batch.Batch) { out = append(out, b) }})
	if err != nil {
		t.Fatal(err)
	}
	for seq := first; seq <= last; seq++ {
		rec := batch.Record{Partition: partition, Seq: seq, ID: []byte{byte(seq)}, Payload: []byte(fmt.Sprint("p", seq))}
		if err := asm.Add(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := asm.Close(); err != nil {
		t.Fatal(err)
	}
	for i, b := range out {
		if err := sink.Send(ctx, uint64(i+1), b); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := sink.WaitDurable(ctx, uint64(len(out))); err != nil {
		t.Fatal(err)
	}
}

// The Pulsar source's Reconcile, as `thalweg run` wires it, asks the raw
// anchor's dataset for its positions with the destination's token: a
// worker with an empty store starts from what the anchor holds. A
// Zerobus anchor has none to offer (nil).
func TestReconcileAsksTheFlightAnchor(t *testing.T) {
	const token = "anchor-secret"
	addr := startFlight(t, receiver.Options{Token: token})
	p0, p1 := "persistent://public/default/rc-partition-0", "persistent://public/default/rc-partition-1"
	deliverTo(t, addr, token, p0, 1, 40)
	deliverTo(t, addr, token, p1, 1, 7)

	doc := fmt.Sprintf(`source:
  url: pulsar://127.0.0.1:6650
  topics: [rc]
  subscription: {name: s}
destinations:
  - {name: raw, kind: flight, role: raw_anchor, endpoint: '%s', token_env: RAW_TOKEN}
store: {dir: /tmp/unused}
`, addr)
	for _, tc := range []struct {
		name, token string
		wantErr     bool
	}{{"right token", token, false}, {"wrong token", "nope", true}} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"RAW_TOKEN": tc.token}
			cfg, err := config.Parse([]byte(doc), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			env := &cliEnv{getenv: func(k string) string { return vars[k] }}
			rebuild, reconcile, conn, err := anchorReads(cfg, cfg.RawAnchor(), nil, env, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if rebuild == nil || reconcile == nil {
				t.Fatal("a Flight anchor offers rebuild and reconcile")
			}
			opts, err := pulsarOptions(cfg, nil, reconcile, env, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := opts.Reconcile(ctx)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Reconcile with a wrong token = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]uint64{p0: 40, p1: 7}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("Reconcile = %v, want %v", got, want)
			}
		})
	}

	zb := `source:
  url: pulsar://127.0.0.1:6650
  topics: [rc]
  subscription: {name: s}
destinations:
  - {name: zb, kind: zerobus, role: raw_anchor, endpoint: '127.0.0.1:1', table: a.b.c}
store: {dir: /tmp/unused}
`
	cfg, err := config.Parse([]byte(zb), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rebuild, reconcile, conn, err := anchorReads(cfg, cfg.RawAnchor(), nil, &cliEnv{getenv: func(string) string { return "" }}, slog.New(slog.DiscardHandler))
	if err != nil || rebuild != nil || reconcile != nil || conn != nil {
		t.Fatalf("a Zerobus anchor: rebuild %v, reconcile %v, conn %v, err %v; want all nil", rebuild != nil, reconcile != nil, conn, err)
	}
}
