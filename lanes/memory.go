package lanes

// HeldMemory bounds the memory of the batches a lane holds unfinished,
// given its Options.Capacity and Options.MaxBytes (as the lane uses them,
// defaults applied) and one batch's memory: the lane takes batches while
// they fit in maxBytes, and one larger batch alone, so it holds at most
// max(maxBytes, batch), and never more than capacity batches.
func HeldMemory(capacity int, maxBytes, batchMemory int64) int64 {
	return min(int64(capacity)*batchMemory, max(maxBytes, batchMemory))
}
