package iceberg

import "time"

// WriteMemory bounds what a Sink's encoders hold beside the lane's
// batches, given one batch's memory, whether the table is partitioned
// (Options.PartitionBy) and the Sink's encoders (Options.Encoders; at most
// MaxEncoders by default): each encoder converts and encodes one batch at
// a time, the batch converted to the table's types and its encoded Parquet
// pages (which its open data file buffers until its next batch or its
// close); on a partitioned table also the rows of the one partition value
// being written, which iceberg-go's clustered writer takes out of the
// batch (one data file is open at a time per encoder, whatever the number
// of partition values). The batches queued for the writer (QueueDepth) are
// the lane's own: they add nothing.
func WriteMemory(batchMemory int64, partitioned bool, encoders int) int64 {
	per := 2 * batchMemory
	if partitioned {
		per = 3 * batchMemory
	}
	return int64(encoders) * per
}

// RoutedWriteMemory bounds what the Sinks of a Router hold beside the
// lane's batches, given the memory its lane holds (lanes.HeldMemory): the
// Router copies each batch's rows into a part per table, and each table's
// one encoder (DefaultEncoders) converts and encodes its parts while the
// others do theirs. A part lives until its table's encoder wrote it,
// before its batch can leave the lane, so the parts alive are of batches
// the lane holds (at most its memory), and so are the parts being written
// at once (WriteMemory of it, one encoder).
func RoutedWriteMemory(laneMemory int64, partitioned bool) int64 {
	return WriteMemory(laneMemory, partitioned, 1) + laneMemory
}

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

// SnapshotMemory is what one snapshot of a table's metadata holds in a
// worker's memory, assumed: measured with iceberg-go v0.7.0, a parsed
// snapshot takes about the size of its JSON in the metadata.json plus
// 200 B — 0.9 KiB with a summary naming one partition's position, 1.7 KiB
// with 16 (a Pulsar partition name adds about 60 B) — so 2 KiB stands for
// a table of up to about 20 partitions.
const SnapshotMemory = 2 << 10

// MetadataCopies is how many copies of a table's metadata a Sink holds at
// most at once: the table as last committed, the copy a commit builds on it
// (iceberg-go clones the snapshot list for every commit), the metadata.json
// that commit encodes, and a table loaded after a conflict or by a
// maintenance run.
const MetadataCopies = 4

// metadataUnmaintained is the run length RetainedSnapshots counts when
// maintenance is off (the table then keeps every snapshot).
const metadataUnmaintained = 24 * time.Hour

// RetainedSnapshots bounds the snapshots of one writer a table keeps, given
// its commit interval and maintenance m (with its defaults applied): the
// commits of SnapshotMaxAge and a quarter more (an expiry is committed
// once it expires a quarter of what it keeps: expireShare), plus Interval
// and Timeout (an expiry runs at most every Interval and may take
// Timeout), plus one compaction per Interval over the same window; at
// least MinSnapshots. With maintenance off nothing is expired: it counts
// one day of commits, and the figure grows with the run.
func RetainedSnapshots(commitInterval time.Duration, m MaintenanceOptions) int64 {
	ceilDiv := func(a, b time.Duration) int64 { return int64((a + b - 1) / max(b, 1)) }
	if m.Disabled {
		return ceilDiv(metadataUnmaintained, commitInterval)
	}
	window := m.SnapshotMaxAge + m.SnapshotMaxAge/expireShare + m.Interval + m.Timeout
	return max(int64(m.MinSnapshots), ceilDiv(window, commitInterval)+ceilDiv(window, m.Interval))
}

// MetadataMemory bounds what a table's metadata holds in a worker's
// memory, given the snapshots the table retains: MetadataCopies copies of
// them at SnapshotMemory each.
func MetadataMemory(snapshots int64) int64 { return MetadataCopies * snapshots * SnapshotMemory }
