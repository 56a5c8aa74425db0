package pulsar

import "sync"

// Position is the durable delivered watermark of one partition: Seq is the
// highest sequence number delivered (the broker entry index + 1 of that
// record, see the package documentation), ID the serialized Pulsar message
// id of the record at Seq (nil when unknown; the Source compares only Seq).
type Position struct {
	Seq uint64
	ID  []byte
}

// PositionStore is what the Source needs from the offset store. Both
// methods may be called from any goroutine.
type PositionStore interface {
	// PartitionID maps a topic-partition name (as Message.Topic reports it,
	// e.g. "persistent://public/default/t-partition-3") to a stable int32,
	// durably: the same name yields the same id after a restart.
	PartitionID(name string) (int32, error)
	// Delivered returns the durable delivered watermark per partition id of
	// the destination that gates upstream acknowledgements (the raw anchor).
	// Only durable state: never a position still being committed.
	Delivered() (map[int32]Position, error)
}

// PositionFuncs adapts two functions to PositionStore (StorePositions is the
// adapter for thalweg's offset store).
type PositionFuncs struct {
	PartitionIDFunc func(name string) (int32, error)
	DeliveredFunc   func() (map[int32]Position, error)
}

// PartitionID calls PartitionIDFunc.
func (f PositionFuncs) PartitionID(name string) (int32, error) { return f.PartitionIDFunc(name) }

// Delivered calls DeliveredFunc.
func (f PositionFuncs) Delivered() (map[int32]Position, error) { return f.DeliveredFunc() }

// memPositions stands in for a nil Options.Positions: ids in order of first
// appearance, no durable watermark.
type memPositions struct {
	mu struct {
		sync.Mutex
		ids map[string]int32
	}
}

func newMemPositions() *memPositions {
	m := &memPositions{}
	m.mu.ids = map[string]int32{}
	return m
}

func (m *memPositions) PartitionID(name string) (int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.mu.ids[name]
	if !ok {
		id = int32(len(m.mu.ids))
		m.mu.ids[name] = id
	}
	return id, nil
}

func (m *memPositions) Delivered() (map[int32]Position, error) { return nil, nil }
