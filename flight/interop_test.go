package flight_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestSinkToPyarrowServer: the sink streams to an independent pyarrow Flight
// server that acknowledges each batch with the agreed encoding; every
// WaitDurable succeeds and every row arrives with its offset and spans.
func TestSinkToPyarrowServer(t *testing.T) {
	py := testenv.Python(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := filepath.Join(t.TempDir(), "recv.arrows")
	cmd := exec.Command(py, filepath.Join(testenv.RepoRoot(), "testdata", "flight", "ack_server.py"), "--out", out)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line)
	}()
	var port string
	select {
	case line := <-ready:
		var ok bool
		port, ok = strings.CutPrefix(line, "READY ")
		require.True(t, ok, "ack_server.py said %q", line)
	case <-time.After(30 * time.Second):
		t.Fatal("ack_server.py did not become ready")
	}

	ctx := flighttest.Ctx(t, 60*time.Second)
	s, err := flight.Dial(ctx, flight.Options{Endpoint: "127.0.0.1:" + port, Path: []string{"py", "sink"},
		Compression: flight.CompressionLZ4, MaxMessageSize: 256 << 10, Allocator: mem, Ordered: true})
	require.NoError(t, err)
	var want []string
	for i := range 30 {
		rows := 20
		if i == 7 {
			rows = 20000 // ~10 MB raw, over 256 KiB even compressed: split into parts acked at the last one
		}
		b := flighttest.MakeBatch(mem, int32(i%3), uint64(i*10000), rows, 500)
		want = append(want, flighttest.Rows(b.Rec)...)
		require.NoError(t, s.Send(ctx, uint64(100+i), b))
		b.Release()
	}
	require.NoError(t, s.WaitDurable(ctx, 129))
	_, recs, _ := s.Acked()
	require.Equal(t, uint64(29*20+20000), recs)
	require.NoError(t, s.Close())

	// The server writes its files when the stream ends.
	var f *os.File
	testenv.WaitFor(t, 20*time.Second, "the server to write its files", func() bool {
		if _, err := os.Stat(out + ".1.offsets"); err != nil {
			return false
		}
		f, err = os.Open(out + ".1")
		return err == nil
	})
	defer f.Close()
	rdr, err := ipc.NewReader(f, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer rdr.Release()
	var got []arrow.RecordBatch
	for rdr.Next() {
		r := rdr.RecordBatch()
		r.Retain()
		got = append(got, r)
	}
	require.NoError(t, rdr.Err())
	require.Equal(t, want, flighttest.Rows(got...))
	for _, r := range got {
		r.Release()
	}

	raw, err := os.ReadFile(out + ".1.offsets")
	require.NoError(t, err)
	var meta struct {
		Path []string         `json:"path"`
		Meta []map[string]any `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(raw, &meta))
	require.Equal(t, []string{"py", "sink"}, meta.Path)
	require.Greater(t, len(meta.Meta), 30, "batch 7 arrived in parts")
	require.Equal(t, float64(100), meta.Meta[0]["offset_id"])
	require.Equal(t, fmt.Sprint([]any{map[string]any{"partition": flighttest.Partition(0), "first": 0.0, "last": 19.0}}), fmt.Sprint(meta.Meta[0]["spans"]))
	for i, m := range meta.Meta {
		require.Equal(t, true, m["ordered"], "message %d: Options.Ordered marks every batch, split parts too", i)
	}
}
