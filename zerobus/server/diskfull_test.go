package server

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/internal/testkit/crashtest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
	"github.com/thalweg/thalweg/zerobus/zerobuspb"
)

// A table whose disk fills ends the stream with ResourceExhausted naming
// the full disk and saying that a restart is needed, not a bare Internal.
func TestFullDiskEndsTheStreamWithResourceExhausted(t *testing.T) {
	vol := testenv.Tmpfs(t, "1m")
	var logs crashtest.LogBuffer
	srv, err := New(Options{Dir: filepath.Join(vol, "tables"), Token: testToken, MaxPendingBytes: 64 << 20, MaxMessageBytes: 4 << 20,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rec := `{"pad":"` + strings.Repeat("p", 64<<10) + `"}`
	reqs := []*zerobuspb.EphemeralStreamRequest{createReq(testTable, zerobuspb.RecordType_JSON.Enum())}
	for i := range int64(40) { // 40 × 64 KiB: more than the volume
		reqs = append(reqs, jsonRecord(i, rec))
	}
	fs := &fakeEphemeral{ctx: incoming(testToken, testTable), reqs: reqs}
	st := status.Convert(srv.EphemeralStream(fs))
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "no space left on device") || !strings.Contains(st.Message(), "restart") {
		t.Fatalf("stream on a full disk ended with %v %q; want ResourceExhausted naming the full disk and the restart", st.Code(), st.Message())
	}
	// The sync loop meets the failed table on every 10 ms tick: it says so
	// once (with the restart), not once per tick.
	failedAt := srv.syncRounds.Load()
	testenv.WaitFor(t, 10*time.Second, "100 sync rounds after the failure", func() bool { return srv.syncRounds.Load() >= failedAt+100 })
	if n := strings.Count(logs.String(), "sync failed"); n > 2 {
		t.Fatalf("%d 'sync failed' lines in %d sync rounds:\n%s", n, srv.syncRounds.Load()-failedAt, logs.String())
	}
	// A client that reconnects at once (the official SDK does, ~1400 streams
	// a second) is refused on the failed table with the same status, and
	// the server logs nothing per refused stream: the failure was said once.
	for range 50 {
		fs := &fakeEphemeral{ctx: incoming(testToken, testTable), reqs: reqs[:2]}
		if st := status.Convert(srv.EphemeralStream(fs)); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "restart") {
			t.Fatalf("stream on the failed table ended with %v %q; want ResourceExhausted saying a restart is needed", st.Code(), st.Message())
		}
	}
	if n := strings.Count(logs.String(), "stream opened"); n > 1 {
		t.Fatalf("%d 'stream opened' lines for streams refused on a failed table; want 1 (the first stream)", n)
	}
}
