package receiver

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDirectWriter: after every flush the file holds exactly the bytes
// written so far (no padding, nothing missing), whatever the sizes of the
// writes and where the flushes fall, with real direct writes on the test's
// file system.
func TestDirectWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, hdrLen := range []int{0, 17, directAlign, directAlign + 5, 3*directAlign - 1} {
		path := filepath.Join(t.TempDir(), "seg")
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		want := randBytes(rng, hdrLen)
		if _, err := f.Write(want); err != nil {
			t.Fatal(err)
		}
		supported := DirectIOSupported(t.TempDir())
		df, err := openDirect(path)
		if err != nil {
			if supported {
				t.Fatalf("openDirect on a file system that takes direct writes: %v", err)
			}
			df = refusing{}
		}
		w := newDirectWriter(df, f, want, nil)
		for round := range 40 {
			for range rng.IntN(4) {
				var n int
				switch rng.IntN(4) {
				case 0:
					n = rng.IntN(100)
				case 1:
					n = rng.IntN(3 * directAlign)
				default:
					n = rng.IntN(3 * directChunk)
				}
				p := randBytes(rng, n)
				if got, err := w.Write(p); err != nil || got != n {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
				want = append(want, p...)
			}
			if err := w.flush(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("header %d, round %d: the file has %d bytes, want %d (equal prefix %v)", hdrLen, round, len(got), len(want), bytes.HasPrefix(want, got))
			}
		}
		if supported != (w.direct != nil) {
			t.Fatalf("the file system takes direct writes: %v, the writer still writes directly: %v", supported, w.direct != nil)
		}
		if err := errors.Join(w.close(), f.Close()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirectWriterRefused: a file system that refuses direct writes
// (EINVAL) gets every byte through the buffered file, and the direct file
// is closed; another error is the write's error.
func TestDirectWriterRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tail := &memFile{}
	r := &refusingFile{err: syscall.EINVAL}
	w := newDirectWriter(r, tail, nil, nil)
	var want []byte
	for range 5 {
		p := randBytes(rng, rng.IntN(2*directChunk))
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(tail.b, want) || !r.closed || w.direct != nil {
		t.Fatalf("refused: %d of %d bytes through the buffered file, direct closed %v", len(tail.b), len(want), r.closed)
	}

	eio := &refusingFile{err: syscall.EIO}
	w = newDirectWriter(eio, &memFile{}, nil, nil)
	if _, err := w.Write(make([]byte, directChunk)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Write over a failing device: %v, want EIO", err)
	}
	if err := w.close(); err != nil || !eio.closed {
		t.Fatalf("close: %v, closed %v", err, eio.closed)
	}
	w = newDirectWriter(&refusingFile{err: syscall.EIO}, &memFile{}, nil, nil)
	if _, err := w.Write(make([]byte, directAlign+1)); err != nil {
		t.Fatal(err) // staged only
	}
	if err := w.flush(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("flush over a failing device: %v, want EIO", err)
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// refusing is a direct file of a platform without direct writes.
type refusing struct{}

func (refusing) WriteAt([]byte, int64) (int, error) { return 0, syscall.EINVAL }
func (refusing) Close() error                       { return nil }

type refusingFile struct {
	err    error
	closed bool
}

func (r *refusingFile) WriteAt([]byte, int64) (int, error) { return 0, r.err }
func (r *refusingFile) Close() error                       { r.closed = true; return nil }

// memFile is an in-memory io.WriterAt.
type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}
