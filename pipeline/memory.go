package pipeline

import "github.com/thalweg/thalweg/lanes"

// DefaultQueueFactor makes the defaults of Destination.Queue and
// QueueBytes: that many times the secondary lane's capacity and max bytes.
const DefaultQueueFactor = 2

// QueueMemory bounds the memory of a secondary's queue of live batches
// when Destination.Queue and QueueBytes are left at their defaults, given
// its lane's capacity and max bytes (defaults applied) and one batch's
// memory. Like a lane, the queue takes one larger batch alone.
func QueueMemory(laneCapacity int, laneMaxBytes, batchMemory int64) int64 {
	return lanes.HeldMemory(DefaultQueueFactor*laneCapacity, DefaultQueueFactor*laneMaxBytes, batchMemory)
}

// CatchUpMemory bounds what a secondary's catch-up holds of the batches it
// reads back from the raw anchor: one batch at a time.
func CatchUpMemory(batchMemory int64) int64 { return batchMemory }
