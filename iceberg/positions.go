package iceberg

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
)

// The properties thalweg writes. The snapshot summary of every commit
// carries PropPositions, PropCommitID and PropFormat; the table's
// properties carry PropPositions too (a snapshot another engine commits —
// a compaction — has none of thalweg's, and snapshot expiry may remove
// thalweg's last one) and PropArrowSchema.
const (
	// PropPositions is, as a JSON object, the highest seq the table holds
	// per partition (the topic-partition name, as batch.OffsetSpan names
	// it): {"persistent://public/default/orders-partition-0": 1234, ...}.
	// A commit merges its batches' spans into what the table carried, so
	// the newest value names every partition the table ever held.
	PropPositions = "thalweg.positions"
	// PropCommitID is a commit's unique id (a UUID): a commit whose
	// outcome is unknown (a timeout, a lost connection) is looked up by it
	// in the snapshots after its base before it is tried again.
	PropCommitID = "thalweg.commit-id"
	// PropFormat is the version of these properties' encoding ("1").
	PropFormat = "thalweg.format"
	// PropArrowSchema is the table property holding the Arrow schema of
	// the batches last written (Arrow IPC, base64): Rebuild returns rows in
	// it, with the types Iceberg lacks (unsigned integers) restored.
	PropArrowSchema = "thalweg.arrow-schema"

	propFormatVersion = "1"
)

// positions is the highest seq per partition: what PropPositions encodes.
type positions map[string]uint64

// raise sets p[part] to seq when that is higher.
func (p positions) raise(part string, seq uint64) {
	if seq > p[part] {
		p[part] = seq
	}
}

// merge raises p by every position of q.
func (p positions) merge(q positions) {
	for k, v := range q {
		p.raise(k, v)
	}
}

// addSpans raises p by the last seq of every span.
func (p positions) addSpans(spans []batch.OffsetSpan) {
	for _, s := range spans {
		p.raise(s.Partition, s.Last)
	}
}

// covers reports whether q raises nothing of p.
func (p positions) covers(q positions) bool {
	for k, v := range q {
		if v > p[k] {
			return false
		}
	}
	return true
}

func (p positions) clone() positions { return maps.Clone(p) }

// encode is p as a JSON object with sorted keys (stable across commits,
// so that equal positions are equal strings).
func (p positions) encode() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(p)) {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		fmt.Fprintf(&b, ":%d", p[k])
	}
	b.WriteByte('}')
	return b.String()
}

func decodePositions(s string) (positions, error) {
	var m map[string]uint64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object of partition to seq: %w", PropPositions, err)
	}
	return positions(m), nil
}

// tablePositions are the positions t holds: those of the newest snapshot
// of the current branch that carries them (a snapshot another engine
// committed carries none), merged with the table property (which survives
// the expiry of that snapshot). A table with neither holds nothing of
// thalweg's.
func tablePositions(t *table.Table) (positions, error) {
	p := positions{}
	if v, ok := t.Properties()[PropPositions]; ok {
		q, err := decodePositions(v)
		if err != nil {
			return nil, fmt.Errorf("table property %w", err)
		}
		p.merge(q)
	}
	meta := t.Metadata()
	for s := meta.CurrentSnapshot(); s != nil; s = parent(meta, s) {
		if s.Summary == nil {
			continue
		}
		if v, ok := s.Summary.Properties[PropPositions]; ok {
			q, err := decodePositions(v)
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", s.SnapshotID, err)
			}
			p.merge(q)
			break
		}
	}
	return p, nil
}

// hasCommit reports whether a snapshot of the current branch newer than
// the snapshot base (nil: the table had none) carries commit id.
func hasCommit(t *table.Table, base *int64, id string) bool {
	meta := t.Metadata()
	for s := meta.CurrentSnapshot(); s != nil; s = parent(meta, s) {
		if base != nil && s.SnapshotID == *base {
			return false
		}
		if s.Summary != nil && s.Summary.Properties[PropCommitID] == id {
			return true
		}
	}
	return false
}

func parent(meta table.Metadata, s *table.Snapshot) *table.Snapshot {
	if s.ParentSnapshotID == nil {
		return nil
	}
	return meta.SnapshotByID(*s.ParentSnapshotID)
}

// snapshotID is t's current snapshot id, nil when it has none.
func snapshotID(t *table.Table) *int64 {
	if s := t.CurrentSnapshot(); s != nil {
		id := s.SnapshotID
		return &id
	}
	return nil
}
