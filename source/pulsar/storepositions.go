package pulsar

import "github.com/thalweg/thalweg/offsetstore"

// StorePositions is the PositionStore of a Source whose records a pipeline
// delivers with store as its offset store and anchor as its raw-anchor
// destination: the restart watermark of each topic-partition (by name) is
// anchor's durable delivered position (Store.Delivered), from which a
// restarted Source recognises redelivered messages. It is what `thalweg
// run` passes as Options.Positions.
func StorePositions(store *offsetstore.Store, anchor string) PositionStore {
	return PositionFuncs{
		DeliveredFunc: func() (map[string]Position, error) {
			d, err := store.Delivered(anchor)
			if err != nil {
				return nil, err
			}
			out := make(map[string]Position, len(d))
			for p, pos := range d {
				out[p] = Position{Seq: pos.Seq, ID: pos.ID}
			}
			return out, nil
		},
	}
}
