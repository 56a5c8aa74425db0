package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// Receiver is a `thalweg receive` process: the durable Flight receiver the
// worker's raw-anchor lane writes to. It keeps its address and data
// directory across Kill and Restart, like a real server that crashed and
// came back. Not safe for concurrent use.
type Receiver struct {
	bin, dir, log string
	ackDelay      time.Duration
	addr          string // host:port, fixed after the first start
	proc          *Process
	starts        int
}

var listeningRE = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// StartReceiver starts `bin receive` on a free loopback port with its data
// in dir, holding every durable ack back by ackDelay (which widens the
// window between a batch's arrival and its acknowledgement). The test's
// cleanup kills it.
func StartReceiver(t testing.TB, bin, dir string, ackDelay time.Duration) *Receiver {
	t.Helper()
	r := &Receiver{bin: bin, dir: filepath.Join(dir, "data"), log: filepath.Join(dir, "receiver.log"), ackDelay: ackDelay}
	r.start(t, "127.0.0.1:0")
	t.Cleanup(func() {
		if r.proc != nil {
			r.proc.Kill()
		}
		if t.Failed() {
			t.Logf("receiver log (tail):\n%s", Tail(r.log, 20))
		}
	})
	return r
}

func (r *Receiver) start(t testing.TB, listen string) {
	t.Helper()
	r.starts++
	args := []string{"receive", "--listen", listen, "--dir", r.dir}
	if r.ackDelay > 0 {
		args = append(args, "--ack-delay", r.ackDelay.String())
	}
	// The log is shared by every run; remember where this run's lines begin.
	var from int64
	if fi, err := os.Stat(r.log); err == nil {
		from = fi.Size()
	}
	p, err := StartProcess(fmt.Sprintf("receiver#%d", r.starts), r.log, r.bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	r.proc = p
	listening := false
	defer func() {
		if !listening { // a receiver that never listened is not left behind
			p.Kill()
			t.Logf("harness: receiver log:\n%s", Tail(r.log, 20))
		}
	}()
	testenv.WaitFor(t, 15*time.Second, "the receiver to listen", func() bool {
		if b, err := os.ReadFile(r.log); err == nil && int64(len(b)) > from {
			if m := listeningRE.FindSubmatch(b[from:]); m != nil {
				r.addr = string(m[1])
				return true
			}
		}
		if p.Exited() {
			t.Fatalf("harness: receiver exited (%v) before it listened", p.State())
		}
		return false
	})
	listening = true
}

// Addr is the receiver's host:port.
func (r *Receiver) Addr() string { return r.addr }

// Kill SIGKILLs the receiver: whatever it had not synced is gone, what it
// acknowledged is on disk.
func (r *Receiver) Kill() { r.proc.Kill() }

// Restart starts the receiver again on the same address and directory
// (recovering its segments). A just-freed port may still be busy for a
// moment; Restart retries for a few seconds.
func (r *Receiver) Restart(t testing.TB) {
	t.Helper()
	if r.proc != nil && !r.proc.Exited() {
		t.Fatal("harness: Restart of a running receiver")
	}
	r.start(t, r.addr)
}

// Stop stops the receiver gracefully (SIGTERM).
func (r *Receiver) Stop(t testing.TB) {
	t.Helper()
	if err := r.proc.Stop(20 * time.Second); err != nil {
		t.Errorf("receiver: %v", err)
	}
}

// ReadTally reads every durable batch of the dataset at path from the
// Flight server at addr (flight.ReadAll) and counts the producer ids in the
// payloads as audit.PayloadPartition of a audit.Tally: what a store
// without the identity columns holds (ReadRows needs them).
func ReadTally(addr string, path []string) (*audit.Tally, error) {
	tally := audit.NewTally()
	return tally, readStored(addr, path, tally.AddPayloadIDs)
}

// readStored reads every durable batch of the dataset at path from the
// Flight server at addr (flight.ReadAll, duplicates included) and hands each
// record to each, stopping at its first error. Arrow memory comes from a
// checked allocator and must all be released again.
func readStored(addr string, path []string, each func(arrow.RecordBatch) error) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	stored, err := flight.ReadAll(ctx, arrowflight.NewFlightServiceClient(conn), path, mem)
	if err != nil {
		return err
	}
	for _, s := range stored {
		if err = each(s.Rec); err != nil {
			break
		}
	}
	flight.ReleaseAll(stored)
	if n := mem.CurrentAlloc(); err == nil && n != 0 {
		err = fmt.Errorf("harness: %d bytes of Arrow memory not released after ReadAll", n)
	}
	return err
}
