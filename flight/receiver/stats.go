package receiver

import (
	"time"
)

// Stats returns the idempotent append counters since New. Safe for
// concurrent use.
func (s *Server) Stats() Stats {
	return Stats{DroppedRows: s.stats.droppedRows.Load(), DroppedBatches: s.stats.droppedBatches.Load(),
		FilteredBatches: s.stats.filtered.Load(), UncheckedBatches: s.stats.unchecked.Load()}
}

// SyncStats are a Server's counters of group commit, since New, summed
// over its datasets.
type SyncStats struct {
	// Syncs counts the committers' sync rounds: each writes what its
	// dataset appended since the last one and syncs the segment and the
	// index (seals are not counted).
	Syncs int64
	// Busy is the time the committers spent in those rounds, writing and
	// syncing. Each dataset has one committer, and a batch is acknowledged
	// only after its round: a dataset whose committer is busy nearly all
	// the time (Busy grows almost as fast as the wall clock) receives as
	// fast as its disk writes, whatever the network and the senders could
	// do (BENCHMARKS.md, "commit-busy").
	Busy time.Duration
}

// SyncStats returns the group commit counters. Safe for concurrent use.
func (s *Server) SyncStats() SyncStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st SyncStats
	for _, d := range s.mu.datasets {
		st.Syncs += d.syncs.Load()
		st.Busy += time.Duration(d.syncNanos.Load())
	}
	return st
}

func (s *Server) count(r appendResult) {
	if r.dropped > 0 {
		s.stats.droppedRows.Add(r.dropped)
	}
	if !r.stored && r.dropped > 0 {
		s.stats.droppedBatches.Add(1)
	}
	if r.filtered {
		s.stats.filtered.Add(1)
	}
	if r.unchecked {
		s.stats.unchecked.Add(1)
	}
}
