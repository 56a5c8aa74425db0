// Package audit checks what a sink stored against what a source produced:
// every (partition name, seq) present, duplicates counted, gaps never. The demo,
// the pipeline tests and the chaos tests share it so that "nothing lost" is
// always counted at the sink, never from the engine's own counters.
//
// It stays thalweg's own: what it checks is thalweg's record identity
// (partition name, seq), which no library knows.
package audit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/batch"
)

// PayloadPartition is the partition AddPayloadIDs tallies under.
const PayloadPartition = ""

// Tally counts the records a sink holds per partition and sequence number.
// The zero value is not usable; call NewTally.
type Tally struct {
	seen map[string]map[uint64]uint32
	rows uint64
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{seen: map[string]map[uint64]uint32{}} }

// Add records one (partition, seq) occurrence.
func (t *Tally) Add(p string, seq uint64) {
	m := t.seen[p]
	if m == nil {
		m = map[uint64]uint32{}
		t.seen[p] = m
	}
	m[seq]++
	t.rows++
}

// Count returns how many times (p, seq) was tallied.
func (t *Tally) Count(p string, seq uint64) uint32 { return t.seen[p][seq] }

// AddRecord tallies every row of rec, which must have identity columns
// (batch.IdentityOf: the raw schema's "topic", "partition" and "seq", or
// the JSON mode's "_topic", "_partition" and "_seq"). A row counts under
// its partition name, batch.JoinPartition(topic, partition).
func (t *Tally) AddRecord(rec arrow.RecordBatch) error {
	id, ok := batch.IdentityOf(rec.Schema())
	if !ok {
		return fmt.Errorf("verify: record has no identity columns topic (utf8), partition (int32), seq (uint64), with or without a leading _ (schema %s)", rec.Schema())
	}
	id.Each(rec, func(p string, seq uint64, _ int) { t.Add(p, seq) })
	return nil
}

// Rows is the number of occurrences added.
func (t *Tally) Rows() uint64 { return t.rows }

// Report is the outcome of Check.
type Report struct {
	Expected   uint64 // records the source produced that the sink must hold
	Distinct   uint64 // of those, present at least once
	Duplicates uint64 // extra occurrences (at-least-once)
	Missing    uint64 // gaps: expected but absent
	Unexpected uint64 // present but never produced
	// FirstMissing lists up to 10 gaps as "<partition>/<seq>" (or "id <n>"
	// when payload ids were tallied).
	FirstMissing []string
}

// OK reports whether nothing is missing.
func (r Report) OK() bool { return r.Missing == 0 && r.Unexpected == 0 }

func (r Report) String() string {
	s := fmt.Sprintf("expected %d, present %d, duplicates %d, missing %d, unexpected %d",
		r.Expected, r.Distinct, r.Duplicates, r.Missing, r.Unexpected)
	if len(r.FirstMissing) > 0 {
		s += " (first missing: " + strings.Join(r.FirstMissing, ", ") + ")"
	}
	return s
}

// Check compares the tally with the expected records: for each partition p,
// every seq in [1, last[p]] except those in skip[p] (records the pipeline
// rightly dead-lettered; may be nil).
func (t *Tally) Check(last map[string]uint64, skip map[string]map[uint64]bool) Report {
	var r Report
	parts := make([]string, 0, len(last))
	for p := range last {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	for _, p := range parts {
		got := t.seen[p]
		for seq := uint64(1); seq <= last[p]; seq++ {
			if skip[p][seq] {
				continue
			}
			r.Expected++
			n := got[seq]
			if n == 0 {
				r.Missing++
				if len(r.FirstMissing) < 10 {
					r.FirstMissing = append(r.FirstMissing, missingName(p, seq))
				}
				continue
			}
			r.Distinct++
			r.Duplicates += uint64(n - 1)
		}
	}
	for p, m := range t.seen {
		for seq, n := range m {
			if seq == 0 || seq > last[p] || skip[p][seq] {
				r.Unexpected += uint64(n)
			}
		}
	}
	return r
}

// missingName is how Report names a missing record: "<partition>/<seq>",
// or "id <n>" for a payload id (PayloadPartition).
func missingName(p string, seq uint64) string {
	if p == PayloadPartition {
		return fmt.Sprintf("id %d", seq)
	}
	return fmt.Sprintf("%s/%d", p, seq)
}

// AddPayloadIDs tallies every row of rec as (PayloadPartition, id), where id is the "id"
// of the JSON object in the row's binary "payload" column (the raw schema).
// Tests and the demo that produce such payloads count what reached a sink
// independently of the engine's partition and seq numbering.
func (t *Tally) AddPayloadIDs(rec arrow.RecordBatch) error {
	idx := rec.Schema().FieldIndices("payload")
	if len(idx) != 1 {
		return fmt.Errorf("verify: no payload column in %s", rec.Schema())
	}
	col, ok := rec.Column(idx[0]).(*array.Binary)
	if !ok {
		return fmt.Errorf("verify: payload column is %s, want binary", rec.Column(idx[0]).DataType())
	}
	for i := 0; i < col.Len(); i++ {
		id, err := PayloadID(col.Value(i))
		if err != nil {
			return err
		}
		t.Add(PayloadPartition, id)
	}
	return nil
}

// PayloadID decodes the "id" of a JSON payload.
func PayloadID(payload []byte) (uint64, error) {
	var v struct {
		ID *uint64 `json:"id"`
	}
	if err := json.Unmarshal(payload, &v); err != nil || v.ID == nil {
		return 0, fmt.Errorf("verify: payload %q has no id (%v)", payload, err)
	}
	return *v.ID, nil
}
