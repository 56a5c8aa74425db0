package receiver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/thalweg/thalweg/flight"
	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// TestPyarrowClientInterop: pyarrow's Flight client DoPuts to the receiver
// with app_metadata offsets, checks the cumulative acks and DoGets the data
// back identical (in Python); the Go side then checks that what it stored is
// exactly what the script sent, under the script's offsets.
func TestPyarrowClientInterop(t *testing.T) {
	py := testenv.Python(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Allocator: mem, Token: "tok"})
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	out := filepath.Join(t.TempDir(), "sent.arrows")
	ctx := flighttest.Ctx(t, 60*time.Second)

	cmd := exec.CommandContext(ctx, py, filepath.Join(testenv.RepoRoot(), "testdata", "flight", "put_client.py"),
		"--port", port, "--path", "py/events", "--out", out, "--token", "tok")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "put_client.py failed")
	var summary struct {
		Acks int `json:"acks"`
		Rows int `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(stdout, &summary), "%s", stdout)
	require.Positive(t, summary.Acks)

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	rdr, err := ipc.NewReader(f, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer rdr.Release()

	got, err := flight.ReadAll(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer tok"),
		flighttest.Client(t, addr), []string{"py", "events"}, mem)
	require.NoError(t, err)
	defer flight.ReleaseAll(got)
	i, rows := 0, 0
	for rdr.Next() {
		sent := rdr.RecordBatch()
		require.Less(t, i, len(got))
		require.True(t, array.RecordEqual(sent, got[i].Rec), "batch %d differs:\n%v\n%v", i, sent, got[i].Rec)
		require.Equal(t, uint64(5+2*i), got[i].OffsetID)
		require.Empty(t, got[i].Spans, "pyarrow sent no spans")
		rows += int(sent.NumRows())
		i++
	}
	require.NoError(t, rdr.Err())
	require.Equal(t, len(got), i)
	require.Equal(t, summary.Rows, rows)
}

// TestPyarrowPositionsAction: pyarrow's Flight client, as a third-party
// worker, DoPuts ordered batches with spans twice (the second stream
// repeats rows), lists the actions, calls "positions" with do_action and
// reads the result; the Go side checks what the script saw: every row
// stored once, the positions the highest seq per partition, both streams
// acknowledged through their last offset with every row counted.
func TestPyarrowPositionsAction(t *testing.T) {
	py := testenv.Python(t)
	srv, addr := flighttest.Receiver(t, receiver.Options{Dir: t.TempDir(), Token: "tok"})
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	ctx := flighttest.Ctx(t, 60*time.Second)
	cmd := exec.CommandContext(ctx, py, filepath.Join(testenv.RepoRoot(), "testdata", "flight", "positions_client.py"),
		"--port", port, "--path", "py/raw", "--token", "tok")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "positions_client.py failed")
	var got struct {
		Positions struct {
			Positions []struct {
				Partition string `json:"partition"`
				Seq       uint64 `json:"seq"`
			} `json:"positions"`
		} `json:"positions"`
		Raw  []map[string]uint64 `json:"acks"`
		Rows []string            `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(stdout, &got), "%s", stdout)
	const topic = "persistent://public/default/py"
	p0, p1 := topic+"-partition-0", topic+"-partition-1"
	require.Len(t, got.Positions.Positions, 2)
	require.Equal(t, p0, got.Positions.Positions[0].Partition)
	require.Equal(t, uint64(15), got.Positions.Positions[0].Seq)
	require.Equal(t, p1, got.Positions.Positions[1].Partition)
	require.Equal(t, uint64(7), got.Positions.Positions[1].Seq)
	require.Equal(t, []map[string]uint64{
		{"ack_up_to_offset": 2, "ack_up_to_records": 15},
		{"ack_up_to_offset": 3, "ack_up_to_records": 20},
	}, got.Raw)
	var want []string
	for s := 1; s <= 10; s++ {
		want = append(want, fmt.Sprintf("%s/%d", p0, s))
	}
	for s := 1; s <= 5; s++ {
		want = append(want, fmt.Sprintf("%s/%d", p1, s))
	}
	for s := 11; s <= 15; s++ {
		want = append(want, fmt.Sprintf("%s/%d", p0, s))
	}
	want = append(want, p1+"/6", p1+"/7")
	require.Equal(t, want, got.Rows, "every row stored once, in order")
	st := srv.Stats()
	require.Equal(t, receiver.Stats{DroppedRows: 13, DroppedBatches: 1, FilteredBatches: 1}, st)
}
