package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pclient "github.com/apache/pulsar-client-go/pulsar"

	"github.com/thalweg/thalweg/internal/audit"
	"github.com/thalweg/thalweg/internal/testkit/icebergpeer"
)

// Row is one row the raw anchor stored, reduced to what the identity check
// needs: the identity columns of the raw schema (topic, partition, seq,
// message_id) and what the producer wrote into the payload (its id and the
// partition it routed the record to).
type Row struct {
	Topic     string
	Partition int32
	Seq       uint64
	MessageID []byte
	// ID and PayloadPartition are the payload's "id" and "p".
	ID               uint64
	PayloadPartition int32
}

// TallyRows counts rows by the producer's id, as audit.PayloadPartition of a
// audit.Tally (what ReadTally counts, from rows already read).
func TallyRows(rows []Row) *audit.Tally {
	t := audit.NewTally()
	for _, r := range rows {
		t.Add(audit.PayloadPartition, r.ID)
	}
	return t
}

// Key is a row's identity key (topic, partition, seq).
type Key struct {
	Topic     string
	Partition int32
	Seq       uint64
}

func (k Key) String() string { return fmt.Sprintf("%s/%d/%d", k.Topic, k.Partition, k.Seq) }

// Key returns the row's identity key.
func (r Row) Key() Key { return Key{r.Topic, r.Partition, r.Seq} }

// ReadRows reads every durable batch of the dataset at path from the Flight
// server at addr (flight.ReadAll, duplicates included) and returns its rows.
// The batches must have the raw schema's identity columns; a store written
// without them is an error naming the schema found. Arrow memory comes
// from a checked allocator and must all be released again.
func ReadRows(addr string, path []string) ([]Row, error) {
	var rows []Row
	err := readStored(addr, path, func(rec arrow.RecordBatch) (err error) {
		rows, err = appendRows(rows, rec)
		return err
	})
	return rows, err
}

// column returns rec's column name as T, or an error naming the schema.
func column[T arrow.Array](rec arrow.RecordBatch, name string) (T, error) {
	var zero T
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return zero, fmt.Errorf("harness: stored batch has no %q column (raw schema v2: topic, partition, seq, message_id, ...); schema %s", name, rec.Schema())
	}
	c, ok := rec.Column(idx[0]).(T)
	if !ok {
		return zero, fmt.Errorf("harness: stored column %q is %s, want %T", name, rec.Column(idx[0]).DataType(), zero)
	}
	return c, nil
}

func appendRows(rows []Row, rec arrow.RecordBatch) ([]Row, error) {
	topics, err := column[*array.String](rec, "topic")
	if err != nil {
		return rows, err
	}
	parts, err := column[*array.Int32](rec, "partition")
	if err != nil {
		return rows, err
	}
	seqs, err := column[*array.Uint64](rec, "seq")
	if err != nil {
		return rows, err
	}
	mids, err := column[*array.Binary](rec, "message_id")
	if err != nil {
		return rows, err
	}
	payloads, err := column[*array.Binary](rec, "payload")
	if err != nil {
		return rows, err
	}
	for i := range int(rec.NumRows()) {
		r, err := newRow(topics.Value(i), parts.Value(i), seqs.Value(i), slices.Clone(mids.Value(i)), payloads.Value(i))
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// newRow is the Row of a stored record, with the producer's id and
// partition parsed from its payload.
func newRow(topic string, partition int32, seq uint64, messageID, payload []byte) (Row, error) {
	var pl struct {
		ID *uint64 `json:"id"`
		P  *int32  `json:"p"`
	}
	if err := json.Unmarshal(payload, &pl); err != nil || pl.ID == nil || pl.P == nil {
		return Row{}, fmt.Errorf("harness: stored payload %q has no id and partition (%v)", payload, err)
	}
	return Row{Topic: topic, Partition: partition, Seq: seq, MessageID: messageID, ID: *pl.ID, PayloadPartition: *pl.P}, nil
}

// ReadIcebergRows reads every row of the raw Iceberg table through the
// catalog props describes with pyiceberg (icebergpeer), duplicates
// included: what any engine would read, independent of thalweg's reader;
// and the table's partition spec as pyiceberg prints it.
func ReadIcebergRows(t testing.TB, ctx context.Context, props map[string]string, table string) (rows []Row, spec string) {
	t.Helper()
	v := icebergpeer.ReadRows(t, ctx, props, table)
	rows = make([]Row, 0, len(v.RawRows))
	for _, r := range v.RawRows {
		row, err := newRow(r.Topic, r.Partition, r.Seq, r.MessageID, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows, v.Spec
}

// IdentityReport is what CheckIdentity found. Counts of records are by the
// producer's ids; of keys by (topic, partition, seq).
type IdentityReport struct {
	Rows       int    // rows stored
	Expected   uint64 // records the broker accepted
	Present    uint64 // of those, stored at least once
	Missing    uint64 // accepted, never stored
	Duplicates uint64 // extra rows of a record stored more than once
	Unexpected uint64 // rows of records the producer never got accepted
	// DuplicatedRecords is how many records have more than one row.
	DuplicatedRecords uint64
	// KeyCollisions counts keys stored for two or more different records.
	KeyCollisions uint64
	// SplitRecords counts records stored under two or more different keys
	// (a redelivery given another seq).
	SplitRecords uint64
	// Rows whose column disagrees with the producer: topic not the base
	// topic; partition not the one the producer routed to (and the broker
	// confirmed, which is also the payload's "p"); message_id not the
	// broker's id of the record; seq not the record's broker index + 1
	// (its rank in the partition in broker order, the topic being new).
	WrongTopic, WrongPartition, WrongMessageID, WrongSeq uint64
	// PerPartition is the number of distinct records stored per partition.
	PerPartition map[int32]uint64
	// Examples holds up to 12 findings, for the log.
	Examples []string
}

// Violations lists the broken guarantees as sentences: the counts by
// producer id (duplicates only when noDuplicates, for ordered
// subscriptions), then IdentityViolations.
func (r IdentityReport) Violations(noDuplicates bool) []string {
	var v findings
	v.add(r.Missing, "records missing")
	v.add(r.Unexpected, "rows of records never produced")
	if noDuplicates {
		v.add(r.Duplicates, "duplicate rows (ordered subscription: want 0)")
	}
	return append(v, r.IdentityViolations()...)
}

// findings collects violations as sentences.
type findings []string

// add notes "n what" when n > 0.
func (f *findings) add(n uint64, what string) {
	if n > 0 {
		*f = append(*f, fmt.Sprintf("%d %s", n, what))
	}
}

// IdentityViolations lists what is wrong with the stored identities,
// whatever the counts: keys shared or split, columns that disagree with
// the broker.
func (r IdentityReport) IdentityViolations() []string {
	var v findings
	v.add(r.KeyCollisions, "identity keys (topic, partition, seq) shared by different records")
	v.add(r.SplitRecords, "records stored under more than one key")
	v.add(r.WrongTopic, "rows with a topic other than the base topic")
	v.add(r.WrongPartition, "rows whose partition column is not the producer's partition")
	v.add(r.WrongMessageID, "rows whose message_id is not the broker's id of the record")
	v.add(r.WrongSeq, "rows whose seq is not the broker index + 1")
	return v
}

func (r IdentityReport) String() string {
	s := fmt.Sprintf("rows %d: expected %d, present %d, missing %d, duplicates %d (of %d records), unexpected %d; "+
		"key collisions %d, split records %d; wrong topic %d, partition %d, message_id %d, seq %d; per partition %v",
		r.Rows, r.Expected, r.Present, r.Missing, r.Duplicates, r.DuplicatedRecords, r.Unexpected,
		r.KeyCollisions, r.SplitRecords, r.WrongTopic, r.WrongPartition, r.WrongMessageID, r.WrongSeq, r.PerPartition)
	if len(r.Examples) > 0 {
		s += "; e.g. " + strings.Join(r.Examples, "; ")
	}
	return s
}

// CheckIdentity checks the stored rows against what prod got the broker to
// accept on topic (records 1..prod.Last(), every one confirmed: call it
// after Flush and a check of Failed). Beyond counting records by the
// producer's id, it checks each row's identity columns against the
// broker's own view of the record, so a wrong or reused identity shows
// even when every record is present exactly once.
func CheckIdentity(rows []Row, prod *Producer, topic string) IdentityReport {
	r := IdentityReport{Rows: len(rows), Expected: prod.Last(), PerPartition: map[int32]uint64{}}
	example := func(format string, args ...any) {
		if len(r.Examples) < 12 {
			r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
		}
	}

	// The broker's order per partition: record id -> broker index + 1.
	type placed struct {
		id  uint64
		mid pclient.MessageID
	}
	byPart := map[int32][]placed{}
	for id := uint64(1); id <= prod.Last(); id++ {
		if mid, ok := prod.MessageID(id); ok {
			byPart[mid.PartitionIdx()] = append(byPart[mid.PartitionIdx()], placed{id, mid})
		}
	}
	wantSeq := make(map[uint64]uint64, prod.Last())
	for _, ps := range byPart {
		slices.SortFunc(ps, func(a, b placed) int {
			return cmp.Or(cmp.Compare(a.mid.LedgerID(), b.mid.LedgerID()),
				cmp.Compare(a.mid.EntryID(), b.mid.EntryID()),
				cmp.Compare(a.mid.BatchIdx(), b.mid.BatchIdx()))
		})
		for i, p := range ps {
			wantSeq[p.id] = uint64(i) + 1
		}
	}

	count := make(map[uint64]uint32, prod.Last())
	keyOf := make(map[uint64]Key, prod.Last())
	recordOf := make(map[Key]uint64, len(rows))
	collided := map[Key]bool{}
	split := map[uint64]bool{}
	for _, row := range rows {
		k := row.Key()
		if other, ok := recordOf[k]; !ok {
			recordOf[k] = row.ID
		} else if other != row.ID && !collided[k] {
			collided[k] = true
			r.KeyCollisions++
			example("key %s holds records %d and %d", k, other, row.ID)
		}
		mid, known := prod.MessageID(row.ID)
		if row.ID == 0 || row.ID > prod.Last() || !known {
			r.Unexpected++
			example("row %s holds record %d, never accepted by the broker", k, row.ID)
			continue
		}
		count[row.ID]++
		if first, ok := keyOf[row.ID]; !ok {
			keyOf[row.ID] = k
		} else if first != k && !split[row.ID] {
			split[row.ID] = true
			r.SplitRecords++
			example("record %d stored under %s and %s", row.ID, first, k)
		}
		if row.Topic != topic {
			r.WrongTopic++
			example("record %d: topic %q, want %q", row.ID, row.Topic, topic)
		}
		if row.Partition != prod.PartitionOf(row.ID) || row.PayloadPartition != prod.PartitionOf(row.ID) {
			r.WrongPartition++
			example("record %d: stored partition %d, payload partition %d, broker partition %d",
				row.ID, row.Partition, row.PayloadPartition, mid.PartitionIdx())
		}
		if got, err := pclient.DeserializeMessageID(row.MessageID); err != nil ||
			got.LedgerID() != mid.LedgerID() || got.EntryID() != mid.EntryID() ||
			got.BatchIdx() != mid.BatchIdx() || got.PartitionIdx() != mid.PartitionIdx() {
			r.WrongMessageID++
			example("record %d: message_id %x (%v, err %v), broker's %v", row.ID, row.MessageID, got, err, mid)
		}
		if row.Seq != wantSeq[row.ID] {
			r.WrongSeq++
			example("record %d: seq %d, want %d (broker index + 1 in partition %d)", row.ID, row.Seq, wantSeq[row.ID], mid.PartitionIdx())
		}
	}
	for id := uint64(1); id <= prod.Last(); id++ {
		n := count[id]
		switch {
		case n == 0:
			r.Missing++
			example("record %d missing (%s)", id, prod.Where(id))
		default:
			r.Present++
			r.PerPartition[prod.PartitionOf(id)]++
			if n > 1 {
				r.DuplicatedRecords++
				r.Duplicates += uint64(n - 1)
			}
		}
	}
	return r
}
