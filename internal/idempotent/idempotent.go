// Package idempotent is the rule of idempotent append that the Flight
// receiver and the Iceberg sink both apply to an ordered batch: a record
// at or below its partition's stored position is stored already.
//
// It stays thalweg's own: the rule is thalweg's seq positions, which no
// library knows.
package idempotent

// Verdict is what the stored positions say of a batch, from its spans
// alone.
type Verdict int

const (
	KeepAll Verdict = iota // every span is above its partition's position
	DropAll                // every span is at or below it: stored already
	Mixed                  // decided row by row
)

// Judge decides a batch of n spans against pos, the stored position of
// each partition (a partition missing has nothing stored); span(i) is
// span i's partition and its first and last seq. A batch without spans is
// Mixed.
func Judge(pos map[string]uint64, n int, span func(i int) (partition string, first, last uint64)) Verdict {
	if n == 0 {
		return Mixed
	}
	above, below := 0, 0
	for i := range n {
		part, first, last := span(i)
		p, ok := pos[part]
		switch {
		case !ok || first > p:
			above++
		case last <= p:
			below++
		}
	}
	switch {
	case above == n:
		return KeepAll
	case below == n:
		return DropAll
	}
	return Mixed
}
