//go:build linux

package receiver

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// BenchmarkSegmentWrite compares the committer's two ways of writing a
// segment, on the test's file system: each iteration appends one batch
// body of the given size and syncs the file (fdatasync), as a sync round of
// one batch does.
//
//	buffered: write(2) through the page cache, as on any vfs.FS
//	direct:   the directWriter: a copy into the aligned staging buffer,
//	          whole blocks with O_DIRECT, the partial block buffered
//
// The modes run in ABBA order, two rounds per size; compare cpu-ns/B (the process's user + system time per byte, which
// counts the kernel's copy and writeback) and MB/s.
func BenchmarkSegmentWrite(b *testing.B) {
	for _, size := range []int{280 << 10, 8 << 20} {
		for round := range 2 {
			modes := []string{"buffered", "direct"}
			if round%2 == 1 {
				modes = []string{"direct", "buffered"}
			}
			for _, mode := range modes {
				b.Run(fmt.Sprintf("body=%dKiB/%s", size>>10, mode), func(b *testing.B) { benchSegmentWrite(b, mode, size) })
			}
		}
	}
}

func benchSegmentWrite(b *testing.B, mode string, size int) {
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	bodies := make([][]byte, 4)
	for i := range bodies {
		bodies[i] = randBytes(rng, size+i*8) // not a multiple of the block size
	}
	path := filepath.Join(b.TempDir(), "seg")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var w interface{ Write([]byte) (int, error) } = f
	var dw *directWriter
	if mode == "direct" {
		df, err := openDirect(path)
		if err != nil {
			b.Fatal(err)
		}
		dw = newDirectWriter(df, f, nil, nil)
		defer dw.close()
		w = dw
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	start, cpu0 := time.Now(), testenv.ProcessCPU()
	for i := range b.N {
		if _, err := w.Write(bodies[i%len(bodies)]); err != nil {
			b.Fatal(err)
		}
		if dw != nil {
			if err := dw.flush(); err != nil {
				b.Fatal(err)
			}
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if dw != nil && dw.direct == nil {
		b.Fatal("the file system refused direct writes")
	}
	elapsed, cpu := time.Since(start), testenv.ProcessCPU()-cpu0
	bytes := float64(b.N) * float64(size)
	b.ReportMetric(cpu.Seconds()*1e9/bytes, "cpu-ns/B")
	b.ReportMetric(bytes/elapsed.Seconds()/1e6, "MB/s-wall")
}
