package pulsar

// Position is the durable delivered watermark of one partition: Seq is the
// highest sequence number delivered (the broker entry index + 1 of that
// record, see the package documentation), ID the serialized Pulsar message
// id of the record at Seq (nil when unknown; the Source compares only Seq).
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

func (memPositions) Delivered() (map[string]Position, error) { return nil, nil }
