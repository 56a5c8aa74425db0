package pulsar

import (
	"fmt"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

// Position is the durable delivered watermark of one partition: Seq is the
// highest sequence number delivered, ID the serialized Pulsar message id of
// the record at Seq (nil when unknown).
type Position struct {
	Seq uint64
	ID  []byte
}

// PositionStore is what the Source needs from the offset store. Its method
// may be called from any goroutine.
type PositionStore interface {
	// Delivered returns the durable delivered watermark per topic-partition
	// name (as Message.Topic reports it, e.g.
	// "persistent://public/default/t-partition-3") of the destination that
	// gates upstream acknowledgements (the raw anchor). Only durable state:
	// never a position still being committed.
	Delivered() (map[string]Position, error)
}

// PositionFuncs adapts a function to PositionStore (StorePositions is the
// adapter for thalweg's offset store).
type PositionFuncs struct {
	DeliveredFunc func() (map[string]Position, error)
}

// Delivered calls DeliveredFunc.
func (f PositionFuncs) Delivered() (map[string]Position, error) { return f.DeliveredFunc() }

// memPositions stands in for a nil Options.Positions: no durable watermark.
type memPositions struct{}

func newMemPositions() memPositions { return memPositions{} }

func (memPositions) Delivered() (map[string]Position, error) { return nil, nil }

// msgPos is the order of messages within one topic-partition: ledger, entry,
// then index inside a batch entry (-1 for a message that is not batched).
type msgPos struct {
	ledger, entry int64
	batch         int32
}

func posOf(id pclient.MessageID) msgPos {
	return msgPos{ledger: id.LedgerID(), entry: id.EntryID(), batch: id.BatchIdx()}
}

func (a msgPos) less(b msgPos) bool {
	if a.ledger != b.ledger {
		return a.ledger < b.ledger
	}
	if a.entry != b.entry {
		return a.entry < b.entry
	}
	return a.batch < b.batch
}

func (a msgPos) lessEq(b msgPos) bool { return !b.less(a) }

func (a msgPos) String() string { return fmt.Sprintf("%d:%d:%d", a.ledger, a.entry, a.batch) }

// decodePos reads the position of a serialized message id. Deserializing is
// fine for comparing; such an id is never used to acknowledge (it lacks the
// consumer and batch tracking of the id the client handed out).
func decodePos(b []byte) (msgPos, error) {
	id, err := pclient.DeserializeMessageID(b)
	if err != nil {
		return msgPos{}, err
	}
	return posOf(id), nil
}
