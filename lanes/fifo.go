package lanes

// fifo is a slice-backed queue. Popped slots are zeroed so that released
// batches and callbacks are not kept reachable. Not safe for concurrent use.
type fifo[E any] struct {
	buf  []E
	head int
}

func (f *fifo[E]) len() int { return len(f.buf) - f.head }

func (f *fifo[E]) push(e E) { f.buf = append(f.buf, e) }

// at returns the i-th element from the front.
func (f *fifo[E]) at(i int) *E { return &f.buf[f.head+i] }

func (f *fifo[E]) pop() E {
	e := f.buf[f.head]
	var zero E
	f.buf[f.head] = zero
	f.head++
	switch {
	case f.head == len(f.buf):
		f.buf, f.head = f.buf[:0], 0
	case f.head >= 256 && 2*f.head >= len(f.buf):
		// Compact so that a queue that never fully drains does not grow
		// without bound.
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	return e
}

// appendTo appends the queued elements, front first, to dst.
func (f *fifo[E]) appendTo(dst []E) []E { return append(dst, f.buf[f.head:]...) }
