package iceberg

// WriteMemory bounds what Send holds beside the lane's batches, given one
// batch's memory: the batch converted to the table's types and its encoded
// Parquet pages, one batch at a time.
func WriteMemory(batchMemory int64) int64 { return 2 * batchMemory }

// RetainedMemory bounds the rows a Sink keeps for a later commit, given
// Options.Ordered and the memory its lane holds (lanes.HeldMemory): an
// ordered Sink keeps the rows of every batch until the commit that covers
// it, to write them again without what another worker committed first (a
// batch leaves the lane at that same commit, so it keeps at most what the
// lane holds); an unordered one keeps nothing (0).
func RetainedMemory(ordered bool, laneMemory int64) int64 {
	if !ordered {
		return 0
	}
	return laneMemory
}
