package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	tflight "github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// startServerCmd runs a bundled server command in-process until the test
// ends and returns once it listens, with its stderr.
func startServerCmd(t *testing.T, args ...string) *cli {
	t.Helper()
	c := &cli{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, args...) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("%s exited %d: %s", args[0], code, c.stderr.String())
		}
	})
	testenv.WaitFor(t, 20*time.Second, args[0]+" listening", func() bool {
		select {
		case code := <-done:
			t.Fatalf("%s exited %d: %s", args[0], code, c.stderr.String())
		default:
		}
		return strings.Contains(c.stderr.String(), "listening on")
	})
	return c
}

// TestReceivePrintsRecovery: `thalweg receive` logs what recovery set aside
// (a batch damaged on disk) to stderr.
func TestReceivePrintsRecovery(t *testing.T) {
	dir := t.TempDir()
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: dir})
	mem := memory.NewGoAllocator()
	stream, err := flighttest.Client(t, addr).DoPut(flighttest.Ctx(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(flighttest.Schema), ipc.WithAllocator(mem))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"events"}})
	for o := range 5 {
		b := flighttest.MakeBatch(mem, 0, uint64(o)*10, 10, 100)
		if err := w.WriteWithAppMetadata(b.Rec, fmt.Appendf(nil, `{"offset_id":%d}`, o)); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err != nil {
			break // acks, then EOF
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "events", "00000001.arrows")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 2; i < len(data)/2+16; i++ {
		data[i] ^= 0xFF
	}
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := startServerCmd(t, "receive", "--dir", dir, "--listen", "127.0.0.1:0")
	for _, want := range []string{"stored batch failed verification; set aside", "quarantine=quarantine/00000001.arrows."} {
		if !strings.Contains(cmd.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, cmd.stderr.String())
		}
	}
}

// TestZerobusServerPrintsRepair: `thalweg zerobus-server` logs the torn last
// line it moved aside to stderr.
func TestZerobusServerPrintsRepair(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.default.events.jsonl"), []byte("{\"a\":1}\n{\"a\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := startServerCmd(t, "zerobus-server", "--dir", dir, "--listen", "127.0.0.1:0")
	if want := "table file ended in a torn line"; !strings.Contains(cmd.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, cmd.stderr.String())
	}
}

// TestReceivePrintsIdempotentAppend: when it stops, `thalweg receive` says
// how many rows of ordered batches it acknowledged without storing them
// again — an operator's evidence that replays reached the disk once.
func TestReceivePrintsIdempotentAppend(t *testing.T) {
	c := &cli{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- c.run(ctx, "receive", "--dir", t.TempDir(), "--listen", "127.0.0.1:0") }()
	defer func() {
		cancel()
		<-done
	}()
	addr := ""
	testenv.WaitFor(t, 20*time.Second, "receive listening", func() bool {
		if m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(c.stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	mem := memory.NewGoAllocator()
	sink, err := tflight.Dial(sctx, tflight.Options{Endpoint: addr, Path: []string{"raw"}, Allocator: mem, Ordered: true})
	if err != nil {
		t.Fatal(err)
	}
	for offset := uint64(1); offset <= 2; offset++ { // the same rows twice: a replay
		b := flighttest.MakeBatch(mem, 0, 1, 10, 50)
		err := sink.Send(sctx, offset, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.WaitDurable(sctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("receive exited %d: %s", code, c.stderr.String())
	}
	done <- exitOK // for the deferred receive
	want := "ordered rows already stored, acknowledged and not stored again: 10 (1 batches dropped whole, 0 filtered)"
	if !strings.Contains(c.stderr.String(), want) {
		t.Fatalf("stderr lacks %q:\n%s", want, c.stderr.String())
	}
	// The batch stored was acknowledged after a sync, which the group
	// commit line counts.
	m := regexp.MustCompile(`group commit: (\d+) syncs; committers busy writing and syncing \S+ of the \S+ run`).FindStringSubmatch(c.stderr.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("stderr lacks the group commit line with a sync:\n%s", c.stderr.String())
	}
}
