package receiver

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Direct writes: on Linux, with the operating system's file system
// (Options.FS is vfs.Default), the committer writes a segment's whole 4 KiB
// blocks with O_DIRECT and only its last, partial block through the page
// cache. At the worker's default 8 MiB batches, writing through the page
// cache cost this receiver more CPU than everything else it does: the
// kernel copies every byte into freshly allocated cache pages and fsync
// then writes them back, 1.0–2.4 ns per byte on the 2-core machine of
// BENCHMARKS.md, against 0.25–0.30 ns for a copy into a reused aligned
// buffer plus a direct write (BenchmarkSegmentWrite; BENCHMARKS.md, "The
// receiver's writes and buffers").
//
// The file's bytes are the same either way: the segment never holds
// padding, a sync still ends in fsync (which also flushes the device cache
// the direct writes went to), and recovery reads it as it always did. The
// staged partial block is written again, whole, by the next direct write
// (the kernel drops its cached page first).

const (
	// directAlign is the alignment of a direct write's memory, offset and
	// length: the largest logical block size of common devices.
	directAlign = 4096
	// directChunk is the staging buffer of one write round.
	directChunk = 1 << 20
)

// directFile is the part of an O_DIRECT *os.File a directWriter uses.
type directFile interface {
	io.WriterAt
	io.Closer
}

// directWriter writes a segment through a direct file. Bytes are staged in
// an aligned chunk; whole blocks go to direct, the final partial block to
// tail (the segment's buffered file) and stays staged in carry, so that
// the next round starts on a block boundary. It is used by the committer
// only (see dataset.write).
type directWriter struct {
	direct directFile // nil after a direct write was refused: tail takes everything
	tail   io.WriterAt
	off    int64  // file offset of the first staged byte: a multiple of directAlign
	carry  []byte // the last partial block, written to tail, staged again
	chunk  []byte // the round's staging buffer (from chunks), nil between rounds
	n      int    // bytes staged in chunk
	// directBytes counts the bytes written directly (the dataset's, for
	// its tests); it may be nil.
	directBytes *atomic.Int64
}

// chunks are the aligned staging buffers, shared by every dataset: a chunk
// is held only for one write round, so idle datasets hold none.
var chunks = sync.Pool{New: func() any {
	b := make([]byte, directChunk+directAlign)
	off := (directAlign - int(uintptr(unsafe.Pointer(&b[0]))%directAlign)) % directAlign
	b = b[off : off+directChunk]
	return &b
}}

// newDirectWriter returns a writer for a segment whose first bytes,
// written (the schema frame), went through tail; directBytes, if not nil,
// counts the bytes it writes directly.
func newDirectWriter(direct directFile, tail io.WriterAt, written []byte, directBytes *atomic.Int64) *directWriter {
	whole := len(written) &^ (directAlign - 1)
	return &directWriter{direct: direct, tail: tail, off: int64(whole),
		carry: append(make([]byte, 0, directAlign), written[whole:]...), directBytes: directBytes}
}

// Write stages p, writing every chunk that fills.
func (w *directWriter) Write(p []byte) (int, error) {
	if w.chunk == nil {
		w.chunk = *chunks.Get().(*[]byte)
		w.n = copy(w.chunk, w.carry)
	}
	total := len(p)
	for len(p) > 0 {
		c := copy(w.chunk[w.n:], p)
		w.n += c
		p = p[c:]
		if w.n == len(w.chunk) {
			if err := w.writeBlocks(w.n); err != nil {
				return total - len(p), err
			}
			w.off += int64(w.n)
			w.n = 0
		}
	}
	return total, nil
}

// flush writes what is staged, whole blocks directly and the partial one
// through tail, keeps that block in carry and gives the chunk back. After
// flush, the file holds exactly the bytes written, nothing after them.
func (w *directWriter) flush() error {
	if w.chunk == nil {
		return nil
	}
	defer w.putChunk()
	whole := w.n &^ (directAlign - 1)
	if whole > 0 {
		if err := w.writeBlocks(whole); err != nil {
			return err
		}
	}
	rest := w.chunk[whole:w.n]
	if len(rest) > 0 {
		if _, err := w.tail.WriteAt(rest, w.off+int64(whole)); err != nil {
			return err
		}
	}
	w.off += int64(whole)
	w.carry = append(w.carry[:0], rest...)
	return nil
}

// writeBlocks writes chunk[:n] (whole blocks) at off. A file system that
// refuses the direct write (EINVAL: it does not support O_DIRECT, or
// not at this alignment) gets it, and every later write, through tail.
func (w *directWriter) writeBlocks(n int) error {
	if w.direct != nil {
		_, err := w.direct.WriteAt(w.chunk[:n], w.off)
		if err == nil && w.directBytes != nil {
			w.directBytes.Add(int64(n))
		}
		if err == nil || !errors.Is(err, syscall.EINVAL) {
			return err
		}
		w.direct.Close()
		w.direct = nil
	}
	_, err := w.tail.WriteAt(w.chunk[:n], w.off)
	return err
}

// putChunk gives the round's staging buffer back, if it holds one.
func (w *directWriter) putChunk() {
	if w.chunk != nil {
		chunk := w.chunk
		w.chunk = nil
		chunks.Put(&chunk)
	}
}

// close closes the direct file; the caller closes tail.
func (w *directWriter) close() error {
	w.putChunk()
	if w.direct == nil {
		return nil
	}
	err := w.direct.Close()
	w.direct = nil
	return err
}
