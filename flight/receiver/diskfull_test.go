package receiver_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// A receiver whose disk fills ends the stream with ResourceExhausted naming
// the full disk and saying that a restart is needed (a failed write is
// sticky), not with a bare Internal.
func TestFullDiskEndsTheStreamWithResourceExhausted(t *testing.T) {
	vol := testenv.Tmpfs(t, "2m")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	_, c := newServer(t, receiver.Options{Dir: filepath.Join(vol, "data"), Allocator: mem})
	ctx := flighttest.Ctx(t, 30*time.Second)
	p := openPut(t, ctx, c, "").schema([]string{"raw"}, flighttest.Schema)
	for i := range 200 { // 200 × 100 rows × 1 KiB: ten times the volume
		b := flighttest.MakeBatch(mem, 0, uint64(1+100*i), 100, 1024)
		p.batch(encodeBatch(t, b.Rec), meta(uint64(i+1)))
		b.Release()
	}
	_, err := p.finish()
	st := status.Convert(err)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "status %v", err)
	for _, want := range []string{"no space left on device", "restart"} {
		require.True(t, strings.Contains(st.Message(), want), "status message %q lacks %q", st.Message(), want)
	}
}
