package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/flightwire"
	"github.com/thalweg/thalweg/internal/idempotent"
)

// positions is the highest seq stored per partition name of a dataset. A
// partition without an entry has nothing stored (seq 0 means "nothing", see
// package batch), which is distinct from a stored seq 0.
type positions map[string]uint64

// spanPartition is the partition name a stored span names.
func spanPartition(s *flightwire.Span) string { return s.Partition }

// add raises p to the Last of every span.
func (p positions) add(spans []flightwire.Span) {
	for i := range spans {
		k := spanPartition(&spans[i])
		if v, ok := p[k]; !ok || spans[i].Last > v {
			p[k] = spans[i].Last
		}
	}
}

// at returns the stored position of partition k and whether there is one.
func (p positions) at(k string) (uint64, bool) {
	v, ok := p[k]
	return v, ok
}

// positionsOf derives the positions of recovered entries: exactly the spans
// of the batches recovery kept. A damaged position whose metadata came from
// its index counts (it was stored and acknowledged, then damaged: a resend
// must not store it a second time after an operator restores it); spans
// recovery only inferred from the neighbours (see inferSpans) do not, they
// bound a read, not what was stored.
func positionsOf(entries []entry) positions {
	p := positions{}
	for i := range entries {
		e := &entries[i]
		if e.bad != nil && metadataSource(e) != "from the index" {
			continue
		}
		p.add(e.spans)
	}
	return p
}

// Stats are a Server's counters of idempotent append, since New.
type Stats struct {
	// DroppedRows counts rows of ordered batches that were not stored
	// because their seq was at or below the stored position of their
	// partition (they were stored before: a replay, or a dead worker's
	// stream and its successor's sending the same rows).
	DroppedRows int64
	// DroppedBatches counts ordered batches (a split batch counts once)
	// of which no row was stored; they were acknowledged all the same.
	DroppedBatches int64
	// FilteredBatches counts ordered batches that were stored with only
	// their new rows (some were dropped), filtered by the identity columns.
	FilteredBatches int64
	// UncheckedBatches counts ordered batches that could not be checked and
	// were stored whole: batches overlapping the stored position, or
	// without spans, that have no identity columns to filter by.
	UncheckedBatches int64
}

// order is what an ordered stream's append needs for idempotent append.
type order struct {
	schemaMsg []byte           // the stream's schema message, to decode a batch to filter
	mem       memory.Allocator // decodes and filters it
}

// appendResult is what an append did with a batch (all parts of a split
// batch).
type appendResult struct {
	// last is the index of the entry the batch's acknowledgement waits
	// for: its last stored entry, or, for a batch not stored (its rows
	// were stored before), the last entry appended so far, which holds or
	// follows those rows; -1 when there is none.
	last      int
	dropped   int64 // rows not stored
	stored    bool  // any part stored
	filtered  bool
	unchecked bool
}

type verdict int

const (
	keepAll   = verdict(idempotent.KeepAll)
	dropAll   = verdict(idempotent.DropAll)
	mixed     = verdict(idempotent.Mixed)
	unchecked = mixed + 1 // ordered, but without spans: decided row by row
)

// judge decides an ordered batch from its spans against p.
func judge(spans []flightwire.Span, p positions) verdict {
	if len(spans) == 0 {
		return unchecked
	}
	return verdict(idempotent.Judge(p, len(spans), func(i int) (string, uint64, uint64) {
		return spanPartition(&spans[i]), spans[i].First, spans[i].Last
	}))
}

// dedupeLocked applies idempotent append to the batch bs (its parts)
// against the positions of everything appended so far: it returns what to
// store (bs itself, nothing, or bs with only its new rows) and the counts.
// Only a batch that overlaps the stored position, or that has no spans, is
// decoded; one without spans is filtered by its identity columns and
// stored with the spans of the rows it keeps.
func (d *dataset) dedupeLocked(bs []pendingBatch, o *order) ([]pendingBatch, appendResult, error) {
	res := appendResult{last: len(d.mu.entries) - 1}
	if o == nil {
		return bs, res, nil
	}
	var rows int64
	for i := range bs {
		rows += bs[i].rows
	}
	var derived *spanSet
	switch judge(bs[0].spans, d.mu.appended) {
	case keepAll:
		return bs, res, nil
	case dropAll:
		res.dropped = rows
		return nil, res, nil
	case unchecked:
		derived = &spanSet{}
	}
	out := make([]pendingBatch, 0, len(bs))
	var kept int64
	for i := range bs {
		nb, ok, err := filterBatch(&bs[i], o, d.mu.appended, derived)
		if err != nil {
			return nil, res, err
		}
		if !ok {
			// No identity columns to filter by: store it whole.
			res.unchecked = true
			return bs, res, nil
		}
		kept += nb.rows
		out = append(out, nb)
	}
	res.dropped = rows - kept
	if kept == 0 {
		return nil, res, nil
	}
	res.filtered = kept < rows
	spans := trimSpans(bs[0].spans, d.mu.appended)
	if derived != nil {
		spans = derived.spans
	}
	for i := range out {
		out[i].spans = spans
	}
	return out, res, nil
}

// spanSet collects the spans of rows, one per partition in order of first
// appearance.
type spanSet struct {
	at    map[string]int
	spans []flightwire.Span
}

func (s *spanSet) add(name string, seq uint64) {
	if i, ok := s.at[name]; ok {
		s.spans[i].First, s.spans[i].Last = min(s.spans[i].First, seq), max(s.spans[i].Last, seq)
		return
	}
	if s.at == nil {
		s.at = map[string]int{}
	}
	s.at[name] = len(s.spans)
	s.spans = append(s.spans, flightwire.Span{Partition: name, First: seq, Last: seq})
}

// trimSpans returns spans without what p already holds: a span at or below
// its partition's position is left out, one across it starts after it.
func trimSpans(spans []flightwire.Span, p positions) []flightwire.Span {
	var out []flightwire.Span
	for _, s := range spans {
		pos, ok := p.at(spanPartition(&s))
		switch {
		case !ok || s.First > pos:
		case s.Last <= pos:
			continue
		default:
			s.First = pos + 1
		}
		out = append(out, s)
	}
	return out
}

// msgList is an ipc.MessageReader over messages in memory.
type msgList struct {
	msgs []*ipc.Message
	next int
}

func (m *msgList) Message() (*ipc.Message, error) {
	if m.next >= len(m.msgs) {
		return nil, io.EOF
	}
	m.next++
	return m.msgs[m.next-1], nil
}
func (m *msgList) Retain()  {}
func (m *msgList) Release() {}

// errFilter wraps the failures of filtering an ordered batch that
// overlaps the stored position (it decoded once already: such a failure is
// the server's).
var errFilter = errors.New("idempotent append: filtering a batch that overlaps the stored position")

// filterBatch decodes b and returns it with only the rows whose seq is
// above the position of their partition in p: b itself when that is every
// row, otherwise encoded again (without compression). With spans set, it
// adds the kept rows to it. ok is false when b has no identity columns.
// Everything it allocates from o.mem is released before it returns.
func filterBatch(b *pendingBatch, o *order, p positions, spans *spanSet) (_ pendingBatch, ok bool, err error) {
	ml := &msgList{msgs: []*ipc.Message{
		ipc.NewMessage(memory.NewBufferBytes(o.schemaMsg), memory.NewBufferBytes(nil)),
		ipc.NewMessage(memory.NewBufferBytes(b.meta), memory.NewBufferBytes(b.body)),
	}}
	rdr, err := ipc.NewReaderFromMessageReader(ml, ipc.WithAllocator(o.mem))
	if err != nil {
		return pendingBatch{}, false, fmt.Errorf("%w: decoding: %w", errFilter, err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		return pendingBatch{}, false, fmt.Errorf("%w: decoding: %w", errFilter, errors.Join(rdr.Err(), errors.New("no batch")))
	}
	rec := rdr.RecordBatch()
	id, ok := batch.IdentityOf(rec.Schema())
	if !ok {
		return pendingBatch{}, false, nil
	}
	// runs of kept rows, [from, to) each
	var runs [][2]int64
	var pos uint64
	var name string
	var has bool
	id.Each(rec, func(part string, seq uint64, r int) {
		if r == 0 || part != name {
			name = part
			pos, has = p.at(name)
		}
		if has && seq <= pos {
			return
		}
		if spans != nil {
			spans.add(name, seq)
		}
		if n := len(runs); n > 0 && runs[n-1][1] == int64(r) {
			runs[n-1][1]++
		} else {
			runs = append(runs, [2]int64{int64(r), int64(r) + 1})
		}
	})
	if len(runs) == 1 && runs[0] == [2]int64{0, rec.NumRows()} {
		return *b, true, nil // every row is new: stored as sent
	}
	out, err := takeRuns(rec, runs, o.mem)
	if err != nil {
		return pendingBatch{}, true, fmt.Errorf("%w: %w", errFilter, err)
	}
	defer out.Release()
	payload, err := ipc.GetRecordBatchPayload(out, ipc.WithAllocator(o.mem))
	if err != nil {
		return pendingBatch{}, true, fmt.Errorf("%w: encoding: %w", errFilter, err)
	}
	defer payload.Release()
	m := payload.Meta()
	defer m.Release()
	var body bytes.Buffer
	if err := payload.SerializeBody(&body); err != nil {
		return pendingBatch{}, true, fmt.Errorf("%w: encoding: %w", errFilter, err)
	}
	nb := *b
	nb.meta, nb.body, nb.rows, nb.ref = slices.Clone(m.Bytes()), body.Bytes(), out.NumRows(), nil
	return nb, true, nil
}

// takeRuns returns the rows of rec in runs, in order: a slice of rec for
// one run (none: zero rows), the runs' slices concatenated otherwise. The
// caller releases the result.
func takeRuns(rec arrow.RecordBatch, runs [][2]int64, mem memory.Allocator) (arrow.RecordBatch, error) {
	switch len(runs) {
	case 0:
		return rec.NewSlice(0, 0), nil
	case 1:
		return rec.NewSlice(runs[0][0], runs[0][1]), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, r := range runs {
		rows += r[1] - r[0]
	}
	pieces := make([]arrow.Array, len(runs))
	for c := range cols {
		for k, r := range runs {
			pieces[k] = array.NewSlice(rec.Column(c), r[0], r[1])
		}
		col, err := array.Concatenate(pieces, mem)
		for _, pc := range pieces {
			pc.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("filtering column %q: %w", rec.Schema().Field(c).Name, err)
		}
		cols[c] = col
	}
	return array.NewRecordBatch(rec.Schema(), cols, rows), nil
}

// ActionPositions is the DoAction type that returns a dataset's positions
// (see package flight, which documents the call).
const ActionPositions = "positions"

type positionsRequest struct {
	Path []string `json:"path"`
}

// PartitionPosition is one element of the positions action's result.
type PartitionPosition struct {
	Partition string `json:"partition"`
	Seq       uint64 `json:"seq"`
}

// parsePositionsRequest decodes the action body {"path":[...]}: one JSON
// object, unknown fields refused (a typo must not read as another
// dataset).
func parsePositionsRequest(b []byte) ([]string, error) {
	var req positionsRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf(`positions action: the body is not the JSON object {"path":[...]}: %w`, err)
	}
	if dec.More() {
		return nil, errors.New("positions action: trailing data after the JSON object")
	}
	if _, err := dirName(req.Path); err != nil {
		return nil, fmt.Errorf("positions action: path: %w", err)
	}
	return req.Path, nil
}

// encodePositions is the action's result body, partitions in name order.
func encodePositions(p positions) []byte {
	list := make([]PartitionPosition, 0, len(p))
	for k, v := range p {
		list = append(list, PartitionPosition{Partition: k, Seq: v})
	}
	slices.SortFunc(list, func(a, b PartitionPosition) int { return strings.Compare(a.Partition, b.Partition) })
	body, _ := json.Marshal(struct {
		Positions []PartitionPosition `json:"positions"`
	}{list})
	return body
}
