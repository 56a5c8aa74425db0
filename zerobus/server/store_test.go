package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// checkJSONLines asserts that data is whole JSON lines and returns them.
func checkJSONLines(t *testing.T, data []byte) []string {
	t.Helper()
	var lines []string
	for rest := data; len(rest) > 0; {
		l, tail, ok := bytes.Cut(rest, []byte{'\n'})
		require.True(t, ok, "the file ends with a complete line, not %.200q", l)
		require.True(t, json.Valid(l), "line %d is not one JSON record: %.200q", len(lines), l)
		lines = append(lines, string(l))
		rest = tail
	}
	return lines
}

// TestTornLastLineRepairedAtEveryOffset cuts a table file at every byte of
// its last line, as a kill or a full disk mid-write leaves it, then opens
// the store and appends a record: the torn bytes are set aside (not
// merged with the new record), logged, and every complete record is kept.
func TestTornLastLineRepairedAtEveryOffset(t *testing.T) {
	src := t.TempDir()
	st, err := newStore(src, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	tb, err := st.table(testTable)
	require.NoError(t, err)
	var recs [][]byte
	for i := range 4 {
		recs = append(recs, fmt.Appendf(nil, `{"seq":%d,"pad":"%s"}`, i, strings.Repeat("p", 20+i)))
	}
	_, err = tb.append(recs)
	require.NoError(t, err)
	require.NoError(t, st.close())
	whole, err := os.ReadFile(TablePath(src, testTable))
	require.NoError(t, err)
	lastStart := bytes.LastIndexByte(whole[:len(whole)-1], '\n') + 1
	next := []byte(`{"seq":99}`)

	for k := lastStart; k <= len(whole); k++ {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(TablePath(dir, testTable), whole[:k], 0o644))
		logs := &crashtest.LogBuffer{}
		st, err := newStore(dir, slog.New(slog.NewTextHandler(logs, nil)))
		require.NoError(t, err)
		tb, err := st.table(testTable)
		require.NoError(t, err)
		_, err = tb.append([][]byte{next})
		require.NoError(t, err)
		require.NoError(t, st.close())

		data, err := os.ReadFile(TablePath(dir, testTable))
		require.NoError(t, err)
		lines := checkJSONLines(t, data)
		keep := 3
		if k == len(whole) {
			keep = 4
		}
		require.Len(t, lines, keep+1, "cut at %d", k)
		for i := range keep {
			require.Equal(t, string(recs[i]), lines[i], "cut at %d", k)
		}
		require.Equal(t, string(next), lines[keep], "cut at %d: the new record is a line of its own", k)

		torn := k > lastStart && k < len(whole)
		qs, _ := filepath.Glob(filepath.Join(dir, QuarantineDir, "*"))
		if !torn {
			require.Empty(t, logs.String(), "cut at %d", k)
			require.Empty(t, qs, "cut at %d", k)
			continue
		}
		require.Contains(t, logs.String(), "table file ended in a torn line", "cut at %d", k)
		require.Len(t, qs, 1, "cut at %d", k)
		require.Equal(t, fmt.Sprintf("%s.jsonl.%d-%d.torn", testTable, lastStart, k), filepath.Base(qs[0]))
		q, err := os.ReadFile(qs[0])
		require.NoError(t, err)
		require.Equal(t, whole[lastStart:k], q, "cut at %d: the torn bytes are kept", k)
	}
}

// TestZeroedTailRepaired: a power loss kept the file's length but not its
// last blocks: the zeros (and a torn record after them) are set aside, the
// records before them kept.
func TestZeroedTailRepaired(t *testing.T) {
	dir := t.TempDir()
	data := []byte("{\"seq\":0}\n{\"seq\":1}\n")
	data = append(data, make([]byte, 5000)...)
	data = append(data, "1,\"pad\":\"x\"}\n{\"seq\":3,\"pa"...)
	require.NoError(t, os.WriteFile(TablePath(dir, testTable), data, 0o644))
	logs := &crashtest.LogBuffer{}
	st, err := newStore(dir, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	require.NoError(t, st.close())
	got, err := os.ReadFile(TablePath(dir, testTable))
	require.NoError(t, err)
	require.Equal(t, []string{`{"seq":0}`, `{"seq":1}`}, checkJSONLines(t, got))
	require.Contains(t, logs.String(), "invalid_lines=1")
	q, err := os.ReadFile(filepath.Join(dir, QuarantineDir, fmt.Sprintf("%s.jsonl.%d-%d.torn", testTable, 20, len(data))))
	require.NoError(t, err)
	require.Equal(t, data[20:], q)
}

// TestTornLineOnlyLineRepaired: a file whose only content is a torn line
// (the first record's write was interrupted) is emptied, then appended to.
func TestTornLineOnlyLineRepaired(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(TablePath(dir, testTable), []byte(`{"seq":0,"pa`), 0o644))
	srv, cc := startBufconn(t, Options{Dir: dir})
	st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(headers("", testTable))
	require.NoError(t, err)
	require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
	require.NoError(t, st.Send(jsonRecord(0, `{"seq":1}`)))
	_, err = finish(t, st)
	require.NoError(t, err)
	got, err := ReadTable(srv.Dir(), testTable)
	require.NoError(t, err)
	require.Equal(t, []string{`{"seq":1}`}, strs(got))
}

const zbChildEnv = "THALWEG_ZEROBUS_CHILD_DIR"

// runZerobusChild is the re-executed test binary: a server on a loopback
// port that prints its address and serves until killed.
func runZerobusChild() {
	// A long sync interval keeps appended, unsynced records (and so a torn
	// last line) in the file most of the time, wherever the kill lands.
	srv, err := New(Options{Dir: os.Getenv(zbChildEnv), SyncInterval: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	crashtest.ChildMain(func(lis net.Listener) error { return srv.Serve(lis) }, err)
}

// zbRecord is record seq of the SIGKILL test: larger than the table's 1 MiB
// write buffer and of varying size, so that records reach the file in
// pieces between syncs, as under heavy load.
func zbRecord(seq int) string {
	n := 1<<20 + (seq*7919)%(512<<10)
	return fmt.Sprintf(`{"seq":%d,"pad":"%s"}`, seq, strings.Repeat(string(rune('a'+seq%26)), n))
}

// TestSIGKILLNoMergedRecords kills the server process with SIGKILL
// mid-stream again and again, each restart resuming after the last
// acknowledged record, as a client does. The table file must stay valid
// JSON lines, every acknowledged record must appear intact (more than once
// only when an earlier server stored it without acknowledging it, so the
// client sent it again), and no record may be merged with another.
func TestSIGKILLNoMergedRecords(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(14, 2))
	logs := &crashtest.LogBuffer{}
	next := 0 // first seq not yet acknowledged
	resent := map[int]bool{}
	for round := range 6 {
		cmd, addr := crashtest.StartChild(t, []string{zbChildEnv + "=" + dir}, logs)

		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(headers("", testTable), 30*time.Second)
		st, err := zerobuspb.NewZerobusClient(cc).EphemeralStream(ctx)
		require.NoError(t, err)
		require.NoError(t, st.Send(createReq(testTable, zerobuspb.RecordType_JSON.Enum())))
		_, err = st.Recv()
		require.NoError(t, err)
		base, killAt := next, int64(3+rng.IntN(12))
		var sent atomic.Int64
		go func() {
			for off := int64(0); ; off++ {
				if st.Send(jsonRecord(off, zbRecord(base+int(off)))) != nil {
					return
				}
				sent.Store(off + 1)
			}
		}()
		acked, killing := int64(-1), false
		for {
			r, err := st.Recv()
			if err != nil {
				break
			}
			if a := r.GetIngestRecordResponse(); a != nil {
				acked = a.GetDurabilityAckUpToOffset()
				if acked >= killAt && !killing {
					killing = true
					time.AfterFunc(time.Duration(rng.IntN(100000))*time.Microsecond, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				}
			}
		}
		require.NoError(t, ctx.Err(), "round %d: the stream did not end after SIGKILL", round)
		cancel()
		cc.Close()
		_ = cmd.Wait()
		require.GreaterOrEqual(t, acked, killAt, "round %d", round)
		next = base + int(acked) + 1
		for seq := next; seq < base+int(sent.Load()); seq++ {
			resent[seq] = true // sent, not acknowledged: the next round sends it again
		}
		t.Logf("round %d: records %d..%d acknowledged, killed", round, base, next-1)
	}
	// A last start repairs what the last kill left.
	srv, err := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	require.NoError(t, srv.Stop())
	t.Logf("restarts set aside %d torn last lines", strings.Count(logs.String(), "table file ended in a torn line"))

	data, err := os.ReadFile(TablePath(dir, testTable))
	require.NoError(t, err)
	seen := map[int]int{}
	for i, l := range checkJSONLines(t, data) {
		var r struct {
			Seq int    `json:"seq"`
			Pad string `json:"pad"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r), "line %d", i)
		require.Equal(t, zbRecord(r.Seq), l, "line %d is not record %d as sent", i, r.Seq)
		seen[r.Seq]++
	}
	dups := 0
	for seq := range next {
		require.Positive(t, seen[seq], "acknowledged record %d is not stored", seq)
		if seen[seq] > 1 {
			require.True(t, resent[seq], "record %d appears %d times but was sent once", seq, seen[seq])
			dups++
		}
	}
	t.Logf("%d records acknowledged, %d stored twice (stored unacknowledged before a kill, then sent again)", next, dups)
}

// TestWriteFailureReportedOnce: after a write fails (here: the file is
// closed under the table, as a full disk fails it), the table refuses
// records, saying a restart is needed, and the sync loop hears of the
// failure once, not on every tick.
func TestWriteFailureReportedOnce(t *testing.T) {
	st, err := newStore(t.TempDir(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	tb, err := st.table(testTable)
	require.NoError(t, err)
	_, err = tb.append([][]byte{[]byte(`{"a":1}`)})
	require.NoError(t, err)
	require.NoError(t, st.syncAll())
	require.NoError(t, tb.f.Close())
	_, err = tb.append([][]byte{[]byte(`{"a":2}`)})
	require.NoError(t, err, "buffered")
	err = st.syncAll()
	require.ErrorContains(t, err, "until the server is restarted")
	_, _, serr := tb.state()
	require.Error(t, serr, "waiters see the failure")
	for range 3 {
		require.NoError(t, st.syncAll(), "reported once")
	}
	_, err = tb.append([][]byte{[]byte(`{"a":3}`)})
	require.ErrorContains(t, err, "until the server is restarted")
	st.mu.Lock()
	delete(st.mu.tables, testTable) // its file is closed already
	st.mu.Unlock()
	require.NoError(t, st.close())
}

// FuzzRepairTail: whatever a table file holds, the repair on open leaves a
// prefix of it made of whole lines whose last one is JSON, moves exactly the
// rest to quarantine, and changes nothing in a file that ends in a complete
// JSON line.
func FuzzRepairTail(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"a\":2}\n"))
	f.Add([]byte("{\"a\":1}\n{\"a\":"))
	f.Add([]byte("{\"a\":1}\n\x00\x00\x00\n{\"a\":3"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(TablePath(dir, testTable), data, 0o644))
		require.NoError(t, repairTornTail(dir, testTable, slog.New(slog.DiscardHandler)))
		got, err := os.ReadFile(TablePath(dir, testTable))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, got), "the repair only cuts")
		if len(got) > 0 {
			require.Equal(t, byte('\n'), got[len(got)-1])
			last := got[bytes.LastIndexByte(got[:len(got)-1], '\n')+1 : len(got)-1]
			require.True(t, json.Valid(last), "the last line kept is JSON: %q", last)
		}
		qs, _ := filepath.Glob(filepath.Join(dir, QuarantineDir, "*"))
		if len(got) == len(data) {
			require.Empty(t, qs)
			return
		}
		require.Len(t, qs, 1)
		q, err := os.ReadFile(qs[0])
		require.NoError(t, err)
		require.Equal(t, data[len(got):], q, "what was cut is kept")
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 && i == len(data)-1 {
			line := data[bytes.LastIndexByte(data[:i], '\n')+1 : i]
			require.False(t, json.Valid(line), "a file ending in a complete JSON line is left alone")
		}
	})
}
