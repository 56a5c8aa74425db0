package observability

// OpenTelemetry instrument names. The Prometheus names are in [Instruments].
const (
	// Per lane, attribute destination.
	LaneCoalesceRatio   = "thalweg.lane.coalesce_ratio"
	LaneRetries         = "thalweg.lane.retries"
	LanePoisoned        = "thalweg.lane.poisoned" // also attribute cause
	LanePending         = "thalweg.lane.pending"
	LaneSaturation      = "thalweg.lane.saturation"
	LaneDeliveryLatency = "thalweg.lane.delivery_latency"
	LaneSubmittedOffset = "thalweg.lane.submitted_offset"
	LaneDeliveredOffset = "thalweg.lane.delivered_offset"
	LaneDrainTimeouts   = "thalweg.lane.drain_timeouts"
	LaneIntakeBlocked   = "thalweg.lane.intake_blocked" // also attribute reason: lane_full, connecting, rebuilding

	// Per secondary destination (coverage lanes), attribute destination.
	LaneCoverageLag    = "thalweg.lane.coverage_lag"
	LaneRebuiltRecords = "thalweg.lane.rebuilt_records"
	LaneLiveDropped    = "thalweg.lane.live_dropped"
	LaneDetached       = "thalweg.lane.detached"

	// Pipeline-wide.
	BatchFlushes    = "thalweg.batch.flushes" // attribute reason
	BatchRows       = "thalweg.batch.rows"
	BatchBytes      = "thalweg.batch.bytes"
	SourceRecords   = "thalweg.source.records"
	SourceAcked     = "thalweg.source.acked"
	SourceAckErrors = "thalweg.source.ack_errors"
	DLQRecords      = "thalweg.dlq.records" // attribute reason

	// The source held by max_unacked, attribute bound (BoundPipeline, BoundPulsar).
	SourceUnackedWait = "thalweg.source.unacked_wait"

	// What the Pulsar client dropped and the seq gaps in a partition.
	SourceDiscarded  = "thalweg.source.discarded"   // attribute reason: the client's validation error
	SourceGapRecords = "thalweg.source.gap_records" // attribute cause (GapClient, GapBroker)

	// Process-wide: always 1, the build is in the attributes.
	BuildInfo = "thalweg.build_info" // attributes version, go_version, revision

	// Defined and recorded by package offsetstore (which imports nothing of
	// thalweg but batch); listed here so that the catalogue is complete.
	OffsetStoreCommitLatency        = "thalweg.offsetstore.commit_latency"
	OffsetStoreSyncs                = "thalweg.offsetstore.syncs"
	OffsetStoreCommitFailures       = "thalweg.offsetstore.commit_failures"
	OffsetStoreConfirmationsPerSync = "thalweg.offsetstore.confirmations_per_sync"

	// Defined and recorded by package iceberg, per Iceberg destination,
	// attributes destination and table.
	IcebergCommitLatency       = "thalweg.iceberg.commit_latency"
	IcebergCommitFiles         = "thalweg.iceberg.commit_files"
	IcebergCommitBytes         = "thalweg.iceberg.commit_bytes"
	IcebergCommitConflicts     = "thalweg.iceberg.commit_conflicts"
	IcebergCommitFailures      = "thalweg.iceberg.commit_failures"
	IcebergDataFiles           = "thalweg.iceberg.data_files"
	IcebergDroppedRows         = "thalweg.iceberg.dropped_rows"
	IcebergSnapshotsExpired    = "thalweg.iceberg.snapshots_expired"
	IcebergOrphansRemoved      = "thalweg.iceberg.orphan_files_removed"
	IcebergMaintenanceFailures = "thalweg.iceberg.maintenance_failures"
	IcebergCompactedFiles      = "thalweg.iceberg.compacted_files"
	IcebergCompactedBytes      = "thalweg.iceberg.compacted_bytes"
	IcebergSnapshots           = "thalweg.iceberg.snapshots"
	IcebergTableFiles          = "thalweg.iceberg.table_data_files"
	IcebergManifests           = "thalweg.iceberg.manifests"
	IcebergMetadataBytes       = "thalweg.iceberg.metadata_bytes"
	IcebergMetadataDirBytes    = "thalweg.iceberg.metadata_dir_bytes"
	IcebergMaintenanceRuns     = "thalweg.iceberg.maintenance_runs" // also attribute kind
	IcebergFreshness           = "thalweg.iceberg.freshness"
)

// Owners of instruments: the package that creates them. OwnerObservability
// stands for thalweg's own packages, which create the instruments of this
// catalogue through internal/instruments (and this package, build_info).
const (
	OwnerObservability = "observability"
	OwnerOffsetStore   = "offsetstore"
	OwnerIceberg       = "iceberg"
	OwnerPulsar        = "source/pulsar" // created through internal/instruments, only by a Pulsar source
)

// Attribute keys.
const (
	AttrDestination = "destination"
	AttrCause       = "cause"
	AttrReason      = "reason"
	AttrVersion     = "version"
	AttrGoVersion   = "go_version"
	AttrRevision    = "revision"
	AttrBound       = "bound"
	AttrTable       = "table" // an Iceberg table's identifier, "namespace.table"
	AttrKind        = "kind"
)

// Kinds of thalweg.iceberg.maintenance_runs: the step of a table's
// maintenance that completed. MaintenanceKinds lists them all.
const (
	MaintenanceExpire    = "expire"    // snapshot expiry
	MaintenanceCompact   = "compact"   // data file compaction
	MaintenanceOrphans   = "orphans"   // orphan file cleanup
	MaintenanceManifests = "manifests" // manifest rewriting
)

// MaintenanceKinds returns every kind of thalweg.iceberg.maintenance_runs,
// in a stable order.
func MaintenanceKinds() []string {
	return []string{MaintenanceExpire, MaintenanceCompact, MaintenanceOrphans, MaintenanceManifests}
}

// Causes of thalweg.lane.poisoned: the step that failed (a dial, a send or
// the replay on a new stream, a durable wait) and the failure's class. The
// runbook branches on these: a retryable cause is a sink that is
// unreachable, restarting, overloaded or slow, and heals by itself; a
// permanent cause is a sink that will not accept the stream as it is (bad
// credentials, a refused schema, a missing table, malformed acks) and ends
// the lane after its permanent budget. Causes lists them all.
const (
	CauseDialRetryable = "dial_retryable"
	CauseDialPermanent = "dial_permanent"
	CauseSendRetryable = "send_retryable"
	CauseSendPermanent = "send_permanent"
	CauseAckRetryable  = "ack_retryable"
	CauseAckPermanent  = "ack_permanent"
)

// Bounds of thalweg.source.unacked_wait: which max_unacked bound held the
// source. The pipeline checks its own (pipeline.Options.MaxUnacked) before
// asking the source for a record, the Pulsar source its own inside Next; the
// two never wait at the same time (one goroutine does both).
const (
	BoundPipeline = "pipeline"
	BoundPulsar   = "pulsar"
)

// Causes of thalweg.source.gap_records: who made a gap in a partition's
// seqs. GapClient: the Pulsar client discarded messages in it (it logged
// them), so records the broker holds were never stored. GapBroker: no
// discard explains it, and the broker sent past it again when asked — it
// has no messages there (trimmed, expired, skipped, or a reset moved the
// cursor past them).
const (
	GapClient = "client"
	GapBroker = "broker"
)

// Causes returns every cause of thalweg.lane.poisoned, in a stable order.
func Causes() []string {
	return []string{CauseDialRetryable, CauseDialPermanent, CauseSendRetryable, CauseSendPermanent,
		CauseAckRetryable, CauseAckPermanent}
}

// Kind is the OpenTelemetry instrument kind.
type Kind string

const (
	KindCounter   Kind = "counter"
	KindHistogram Kind = "histogram"
	KindGauge     Kind = "gauge"
)

// Instrument describes one thalweg instrument.
type Instrument struct {
	Name       string   // OpenTelemetry name
	Kind       Kind     // instrument kind
	Unit       string   // UCUM unit as given to the SDK
	Attributes []string // attribute keys the instrument records
	// Prometheus is the metric family name the Prometheus exporter serves,
	// without the _bucket/_sum/_count series suffixes of histograms.
	Prometheus string
	Help       string
	Owner      string // package that creates the instrument
}

var instruments = []Instrument{
	{LaneCoalesceRatio, KindHistogram, "{batch}", []string{AttrDestination}, "thalweg_lane_coalesce_ratio",
		"Batches confirmed by one durable wait (burst size); >> 1 means the lane is pipelining.", OwnerObservability},
	{LaneRetries, KindCounter, "{retry}", []string{AttrDestination}, "thalweg_lane_retries_total",
		"Transient transport errors retried with backoff.", OwnerObservability},
	{LanePoisoned, KindCounter, "{event}", []string{AttrDestination, AttrCause}, "thalweg_lane_poisoned_total",
		"Lane failures, by step and class (cause): a dial that failed, or a stream torn down and rebuilt.", OwnerObservability},
	{LanePending, KindGauge, "{batch}", []string{AttrDestination}, "thalweg_lane_pending",
		"Batches submitted but not yet confirmed durable (submitted - delivered).", OwnerObservability},
	{LaneSaturation, KindGauge, "1", []string{AttrDestination}, "thalweg_lane_saturation_ratio",
		"How full the lane is: pending batches over the lane capacity, or held bytes over lane.max_bytes, whichever is fuller.", OwnerObservability},
	{LaneDeliveryLatency, KindHistogram, "s", []string{AttrDestination}, "thalweg_lane_delivery_latency_seconds",
		"Time from submit to durable confirmation, per batch.", OwnerObservability},
	{LaneSubmittedOffset, KindGauge, "{offset}", []string{AttrDestination}, "thalweg_lane_submitted_offset",
		"Highest logical offset the transport accepted.", OwnerObservability},
	{LaneDeliveredOffset, KindGauge, "{offset}", []string{AttrDestination}, "thalweg_lane_delivered_offset",
		"Highest logical offset confirmed durable (the watermark).", OwnerObservability},
	{LaneDrainTimeouts, KindCounter, "{event}", []string{AttrDestination}, "thalweg_lane_drain_timeouts_total",
		"Graceful drains (Close, bounded by shutdown.drain_timeout) that ended with batches still unconfirmed.", OwnerObservability},
	{LaneIntakeBlocked, KindCounter, "s", []string{AttrDestination, AttrReason}, "thalweg_lane_intake_blocked_seconds_total",
		"Time Submit spent blocked on the lane, by reason: lane_full (the sink is slow to confirm), connecting or rebuilding (no open transport).", OwnerObservability},
	{LaneCoverageLag, KindGauge, "{record}", []string{AttrDestination}, "thalweg_lane_coverage_lag",
		"Records a secondary's coverage is behind the raw anchor's delivered watermark, summed over partitions.", OwnerObservability},
	{LaneRebuiltRecords, KindCounter, "{record}", []string{AttrDestination}, "thalweg_lane_rebuilt_records_total",
		"Records replayed to a secondary from the raw anchor to close a gap (catch-up progress).", OwnerObservability},
	{LaneLiveDropped, KindCounter, "{batch}", []string{AttrDestination}, "thalweg_lane_live_dropped_total",
		"Live batches a secondary's full queue let go; their records are rebuilt from the raw anchor.", OwnerObservability},
	{LaneDetached, KindGauge, "", []string{AttrDestination}, "thalweg_lane_detached",
		"1 while a secondary is detached for this run (its lane failed for good, or a hole it cannot fill): its coverage lag grows until a restart.", OwnerObservability},
	{BatchFlushes, KindCounter, "{batch}", []string{AttrReason}, "thalweg_batch_flushes_total",
		"Batches emitted by the assembler, by flush reason.", OwnerObservability},
	{BatchRows, KindHistogram, "{row}", nil, "thalweg_batch_rows",
		"Rows per emitted batch.", OwnerObservability},
	{BatchBytes, KindHistogram, "By", nil, "thalweg_batch_bytes",
		"Arrow buffer bytes per emitted batch.", OwnerObservability},
	{SourceRecords, KindCounter, "{record}", nil, "thalweg_source_records_total",
		"Records received from the source.", OwnerObservability},
	{SourceAcked, KindCounter, "{record}", nil, "thalweg_source_acked_total",
		"Records acknowledged upstream (after their delivered offset was durable).", OwnerObservability},
	{SourceAckErrors, KindCounter, "{request}", nil, "thalweg_source_ack_errors_total",
		"Upstream acknowledgements that failed; their records come back and are recognised as delivered.", OwnerObservability},
	{SourceUnackedWait, KindCounter, "s", []string{AttrBound}, "thalweg_source_unacked_wait_seconds_total",
		"Time the source loop spent blocked because max_unacked records awaited their upstream ack, by the bound that held it.", OwnerObservability},
	{SourceDiscarded, KindCounter, "{message}", []string{AttrReason}, "thalweg_source_discarded_total",
		"Messages (broker entries) the Pulsar client discarded and acknowledged without handing them to thalweg, by the client's validation error: never stored.", OwnerPulsar},
	{SourceGapRecords, KindCounter, "{record}", []string{AttrCause}, "thalweg_source_gap_records_total",
		"Seqs missing in a partition of an ordered subscription, by who made the gap: client (records lost) or broker (trimmed, expired, skipped or reset).", OwnerPulsar},
	{DLQRecords, KindCounter, "{record}", []string{AttrReason}, "thalweg_dlq_records_total",
		"Records sent to the dead-letter path, by reason.", OwnerObservability},
	{BuildInfo, KindGauge, "", []string{AttrVersion, AttrGoVersion, AttrRevision}, "thalweg_build_info",
		"Always 1; the running build is in the labels (join on it to see which version a series came from).", OwnerObservability},
	{OffsetStoreCommitLatency, KindHistogram, "s", nil, "thalweg_offsetstore_commit_latency_seconds",
		"Time from handing a group commit to Pebble until its WAL sync returned.", OwnerOffsetStore},
	{OffsetStoreSyncs, KindCounter, "{sync}", nil, "thalweg_offsetstore_syncs_total",
		"Synced group commits whose WAL sync returned, successful or not.", OwnerOffsetStore},
	{OffsetStoreCommitFailures, KindCounter, "{commit}", nil, "thalweg_offsetstore_commit_failures_total",
		"Group commits that failed; each one leaves the store failed until reopened.", OwnerOffsetStore},
	{OffsetStoreConfirmationsPerSync, KindHistogram, "{confirmation}", nil, "thalweg_offsetstore_confirmations_per_sync",
		"CommitDelivered/CommitCoverage calls made durable by one synced group commit.", OwnerOffsetStore},
	{IcebergCommitLatency, KindHistogram, "s", []string{AttrDestination, AttrTable}, "thalweg_iceberg_commit_latency_seconds",
		"Time from the start of a snapshot commit until the catalog accepted it, retries and conflicts included.", OwnerIceberg},
	{IcebergCommitFiles, KindHistogram, "{file}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_commit_files",
		"Data files one snapshot commit added.", OwnerIceberg},
	{IcebergCommitBytes, KindHistogram, "By", []string{AttrDestination, AttrTable}, "thalweg_iceberg_commit_bytes",
		"Bytes of data files one snapshot commit added.", OwnerIceberg},
	{IcebergCommitConflicts, KindCounter, "{conflict}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_commit_conflicts_total",
		"Commit attempts refused because another writer committed first; each is merged again and retried at once.", OwnerIceberg},
	{IcebergCommitFailures, KindCounter, "{attempt}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_commit_failures_total",
		"Commit attempts that failed for another reason (catalog or storage unreachable, refused); retried with backoff unless the failure is permanent.", OwnerIceberg},
	{IcebergDataFiles, KindCounter, "{file}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_data_files_total",
		"Parquet data files started (a rewrite after a conflict starts one too).", OwnerIceberg},
	{IcebergDroppedRows, KindCounter, "{row}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_dropped_rows_total",
		"Rows of an ordered subscription not written because the table holds them already (a redelivery, another worker's takeover).", OwnerIceberg},
	{IcebergSnapshotsExpired, KindCounter, "{snapshot}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_snapshots_expired_total",
		"Snapshots the worker's snapshot expiry removed from the table.", OwnerIceberg},
	{IcebergOrphansRemoved, KindCounter, "{file}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_orphan_files_removed_total",
		"Files no metadata referenced that the worker's orphan cleanup deleted.", OwnerIceberg},
	{IcebergMaintenanceFailures, KindCounter, "{run}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_maintenance_failures_total",
		"Table maintenance runs (snapshot expiry, compaction, orphan cleanup) that failed; each is tried again after a backoff.", OwnerIceberg},
	{IcebergCompactedFiles, KindCounter, "{file}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_compacted_files_total",
		"Small data files the worker's compaction replaced by larger ones.", OwnerIceberg},
	{IcebergCompactedBytes, KindCounter, "By", []string{AttrDestination, AttrTable}, "thalweg_iceberg_compacted_bytes_total",
		"Bytes of data files the worker's compaction read and rewrote.", OwnerIceberg},
	{IcebergSnapshots, KindGauge, "{snapshot}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_snapshots",
		"Snapshots the table retains, as the last maintenance run saw it.", OwnerIceberg},
	{IcebergTableFiles, KindGauge, "{file}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_table_data_files",
		"Data files in the table's current snapshot, as the last maintenance run saw it.", OwnerIceberg},
	{IcebergManifests, KindGauge, "{manifest}", []string{AttrDestination, AttrTable}, "thalweg_iceberg_manifests",
		"Manifests in the table's current snapshot, as the last maintenance run saw it.", OwnerIceberg},
	{IcebergMetadataBytes, KindGauge, "By", []string{AttrDestination, AttrTable}, "thalweg_iceberg_metadata_bytes",
		"Size of the table's current metadata.json, as the last maintenance run saw it.", OwnerIceberg},
	{IcebergMetadataDirBytes, KindGauge, "By", []string{AttrDestination, AttrTable}, "thalweg_iceberg_metadata_dir_bytes",
		"Bytes of every file in the directory of the table's current metadata.json (metadata files, manifest lists, manifests), as the last maintenance run saw it.", OwnerIceberg},
	{IcebergMaintenanceRuns, KindCounter, "{run}", []string{AttrDestination, AttrTable, AttrKind}, "thalweg_iceberg_maintenance_runs_total",
		"Table maintenance steps that completed, by kind (expire, compact, orphans, manifests), whether or not they found anything to do.", OwnerIceberg},
	{IcebergFreshness, KindHistogram, "s", []string{AttrDestination, AttrTable}, "thalweg_iceberg_freshness_seconds",
		"Per commit that adds rows with a publish_time: from the newest publish_time among them until the catalog accepted the commit.", OwnerIceberg},
}

// Instruments returns every instrument thalweg defines, in a stable order.
// The caller may modify the returned slice.
func Instruments() []Instrument {
	out := make([]Instrument, len(instruments))
	copy(out, instruments)
	return out
}

// InstrumentNames returns the OpenTelemetry names of all instruments.
func InstrumentNames() []string {
	out := make([]string, len(instruments))
	for i, in := range instruments {
		out[i] = in.Name
	}
	return out
}

func lookup(name string) Instrument {
	for _, in := range instruments {
		if in.Name == name {
			return in
		}
	}
	panic("observability: unknown instrument " + name) // programming error in this package
}
