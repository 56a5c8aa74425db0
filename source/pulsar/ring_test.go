package pulsar

import "testing"

// TestEntryRing: the outstanding queue is a FIFO through wrap-around and
// growth with entries held across both, and once it has grown to the
// stream's depth a steady push/pop stream allocates nothing (the appended
// slice it replaces reallocated as it crept forward).
func TestEntryRing(t *testing.T) {
	var r entryRing
	next, want := uint64(1), uint64(1)
	push := func(k int) {
		for range k {
			r.push(entry{seq: next})
			next++
		}
	}
	pop := func(k int) {
		for range k {
			if r.front().seq != want {
				t.Fatalf("front %d, want %d", r.front().seq, want)
			}
			if e := r.pop(); e.seq != want {
				t.Fatalf("popped %d, want %d", e.seq, want)
			}
			want++
		}
	}
	// Wrap around, then grow while wrapped, several times.
	for _, k := range []int{50, 70, 130, 300, 1000} {
		push(k)
		pop(k / 2)
		push(k)
		pop(k)
	}
	pop(r.len())
	if r.len() != 0 {
		t.Fatalf("len %d after popping everything", r.len())
	}
	for i, e := range r.buf {
		if e != (entry{}) {
			t.Fatalf("slot %d still holds %+v after its pop", i, e)
		}
	}

	push(500) // the stream's depth
	if allocs := testing.AllocsPerRun(1000, func() { push(10); pop(10) }); allocs != 0 {
		t.Fatalf("steady stream: %.1f allocations per 10 records", allocs)
	}
	pop(500)
}
