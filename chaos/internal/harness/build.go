package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// UnsafeAckTag is the build tag of the "red" worker: it acknowledges upstream
// when a batch is submitted, before its delivered offset is durable
// (pipeline/unsafeack_on.go). The chaos tests use it to show that they see
// the gap that ordering causes.
const UnsafeAckTag = "thalweg_unsafe_ack"

// builds caches one `go build` per tag set for the life of the test binary.
var builds struct {
	sync.Mutex
	dir string
	m   map[string]*buildResult
}

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the thalweg worker binary built with tags (""
// for the normal build). The first call per tag set builds it (serialised
// with the others: the machine is small); later calls return the cached
// path. Call Cleanup from TestMain to remove the binaries.
func Binary(t testing.TB, tags string) string {
	t.Helper()
	builds.Lock()
	if builds.m == nil {
		builds.m = map[string]*buildResult{}
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "thalweg-chaos-bin-")
		if err != nil {
			builds.Unlock()
			t.Fatalf("harness: temp dir for binaries: %v", err)
		}
		builds.dir = dir
	}
	r := builds.m[tags]
	if r == nil {
		r = &buildResult{}
		builds.m[tags] = r
	}
	dir := builds.dir
	builds.Unlock()

	r.once.Do(func() {
		name := "thalweg"
		if tags != "" {
			name += "-" + strings.NewReplacer(",", "-", " ", "-").Replace(tags)
		}
		r.path = filepath.Join(dir, name)
		start := time.Now()
		if r.err = testenv.GoBuild(context.Background(), r.path, tags, "./cmd/thalweg"); r.err != nil {
			return
		}
		t.Logf("harness: built %s (tags %q) in %v", r.path, tags, time.Since(start).Round(time.Millisecond))
	})
	if r.err != nil {
		t.Fatalf("harness: %v", r.err)
	}
	return r.path
}

// Cleanup removes the binaries Binary built. Call it once, from TestMain,
// after m.Run.
func Cleanup() {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
		builds.dir = ""
		builds.m = nil
	}
}
