package zerobus

import "github.com/apache/arrow-go/v18/arrow"

// EncodeJSONForBench exposes the JSON encoder to the external benchmarks.
func EncodeJSONForBench(rec arrow.RecordBatch) {
	if _, err := encodeJSON(rec, DefaultMaxPayload); err != nil {
		panic(err)
	}
}

// Written reports how many tracked batches have been written to the stream.
func (s *Sink) Written() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.unsent
}

// Retained reports, in ephemeral mode, how many batches the Sink tracks
// (sent, not yet acknowledged) and how many encoded record bytes it keeps
// of them.
func (s *Sink) Retained() (batches, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.mu.entries {
		for _, f := range e.frames {
			for _, r := range f.json {
				bytes += len(r)
			}
			for _, r := range f.proto {
				bytes += len(r)
			}
		}
	}
	return len(s.mu.entries), bytes
}
