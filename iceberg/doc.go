// Package iceberg writes thalweg's batches into an Apache Iceberg table
// (github.com/apache/iceberg-go: its catalogs, its metadata writer and its
// file systems; arrow-go's Parquet writer for the data files) and reads
// them back. A Table names one table in one catalog; its Sink is a
// lanes.Transport, so the table can be the worker's raw anchor or a
// secondary. Tables are the tables of a template, one per topic, written
// through a Router (see A table per topic).
//
// # Catalogs and warehouses
//
// The SQL catalog on a SQLite file (CatalogSQL, the default) needs no
// server: its tables are those of the JDBC catalog and of pyiceberg's
// SqlCatalog, so either opens the same file. Several workers (processes)
// may share it: the database runs in WAL mode with a busy timeout, and
// every commit is a compare-and-swap of the table's metadata location.
// CatalogREST talks to an Iceberg REST catalog server. Warehouses are
// local paths (file://) or S3-compatible object storage (s3://).
//
// # The write path
//
// Send plans a batch's schema (the first batch of a schema may create the
// table or evolve its schema, and a schema the table refuses fails there)
// and queues the batch, retained, for the Sink's writer goroutine; it
// waits only while QueueDepth batches wait beside the ones being written,
// never for a commit. The writer is the one ordered stage: in offset
// order it drops the rows the table holds (an ordered Sink, against the
// positions), appends the batch to the pending batches of the next commit
// and hands it to the first idle of the Sink's encoders
// (Options.Encoders, DefaultEncoders: min(GOMAXPROCS, MaxEncoders)), off
// the lane's dispatch goroutine: the lane assembles and dispatches the
// next batches while they encode. Each encoder converts its batch to the
// table's schema and appends it to an open Parquet data file of its own
// (of an unpartitioned table; see Partitioning; zstd, dictionaries for
// strings only, field ids from the table schema), so a table's batches
// encode on several cores at once (TestWriterQueuesInOrder). A write
// failure in any encoder is the Sink's permanent failure, returned by the
// next Send or WaitDurable (TestWriterFailureSurfaces,
// TestEncoderFailureSurfaces).
//
// The commit cut: the committer takes the pending batches and, in the
// same step, starts the next cut; the writer stamps every batch with the
// cut it joins, and an encoder starts a new data file for a batch of a
// later cut, so each file holds the batches of one cut. The committer
// waits until every batch it took is written (encoders never need the
// Sink's lock to finish one), then takes each encoder's files of its cut,
// closing the open one; the writer hands out later batches meanwhile. A
// commit's files hold exactly its batches, and WaitDurable never returns
// before a batch's rows are in a committed data file
// (TestEncodersExactlyOnce). A data file is closed when it reaches
// Options.TargetFileSize, when the batch schema changes, and by every
// commit: a commit adds up to a file per encoder.
//
// # Partitioning
//
// Options.PartitionBy is the partition spec of the table a Sink creates
// (ParsePartitionTerm: identity, year, month, day, hour, bucket, truncate,
// void of a named column, checked against the first batch's columns). A
// table that exists is written with the spec it has; a Sink logs once
// when that is not the one asked for. On a partitioned table Send writes
// each batch with iceberg-go's clustered writer (table.WriteRecords,
// WithClusteredWrite): the batch regrouped by partition value, one data
// file per value carrying its partition record, one file open at a time;
// a null source value is the null partition. iceberg-go records a data
// file's location with its partition values URL-escaped, and other
// engines open it as written, so the tables of a local warehouse store
// their files under the location as written (literalFS; S3 takes a key as
// written). A batch holding a partition value other engines would miss
// (an empty string, which iceberg-go summarises as "only nulls"; a
// directory S3 stores under another key) fails the Sink
// (checkPartitionValue). An ordered Sink's conflict writes a batch's
// files again without the rows another worker stored (dedupeSplit).
//
// # Commits
//
// One committer goroutine per Sink commits, at most once every
// Options.CommitInterval, every batch sent since the last commit: one
// append of the closed data files whose snapshot summary carries
// PropPositions (the highest seq stored per partition, merged into what
// the table held), PropCommitID (a UUID) and PropFormat. The same
// positions are set as a table property in the same commit. A successful
// commit is the durable acknowledgement of every batch it covers
// (WaitDurable returns); only one commit is in flight at a time.
//
// A commit that fails has an unknown outcome until the table says
// otherwise. The committer reloads the table and:
//
//   - finds its commit id in a snapshot after its base: it succeeded (the
//     answer was lost);
//   - finds the table moved on (another worker committed first): a
//     conflict. The positions are merged again on top of the new
//     snapshot; an ordered Sink first drops the rows the new snapshot
//     already holds (rewriting the affected data files) and retries at
//     once, three times, then after a jittered wait of up to twice
//     Options.CommitInterval (at least 100 ms, at most Options.MaxBackoff)
//     that does not grow: a conflict is another writer's progress, and a
//     growing wait let the writers that commit most often starve the
//     others (their partitions stood still for tens of seconds);
//   - otherwise retries with growing, jittered backoff up to
//     Options.MaxBackoff when the failure heals (the catalog or the
//     object store unreachable or failing), or fails the Sink for good
//     when it will not (credentials refused, a table that is gone, a
//     schema the table refuses). Retries are logged throttled.
//
// # Bounded metadata
//
// A table the Sink creates gets the properties of boundedMetadataProps,
// which iceberg-go honours on the commit path: every commit deletes the
// metadata.json files that fall out of the metadata log
// (DefaultMetadataVersionsMax of them are kept), and appends are merge
// appends that merge the current snapshot's small manifests once there
// are DefaultManifestMinMergeCount of them. On a table that lacks some of
// them, a Sink's first commit sets those in the same transaction and logs
// one line naming them; a value already on the table is never replaced
// (TestMetadataBoundsOnExistingTable).
//
// # A table per topic
//
// OpenTables opens the tables of a table template (Options.Table naming
// {topic}, {tenant} or {namespace}; ParseTemplate, TopicOf): every
// partition routes to the table the template gives for its topic, each
// placeholder's value sanitised (every character outside [A-Za-z0-9_]
// becomes '_'). Each table is a Table of its own, sharing the catalog
// connection of the set; Tables.Dial returns a Router, the lanes.Transport
// that dials each table's Sink on the table's first batch and splits every
// batch by table: a batch of one table passes whole, otherwise spans go by
// partition name and rows by their identity columns, copied per table
// (ErrUnsplittable without them). Router.WaitDurable(offset) waits, for
// each table that got a part of a batch at or below offset, for the lower
// of offset and the last offset that table got; a table that got nothing
// at or below offset is not waited for. Each table commits on its own: the
// acknowledgement waiting for all of them makes a multi-table transaction
// unneeded. Each table's Sink has its own writer and one encoder (unless
// Options.Encoders says otherwise), so the tables encode in parallel and
// the goroutines grow with the tables, not with tables times cores. A Sink's failure fails the Router, naming the table; a schema
// a table refuses for the rows of a topic other than those it holds names
// those topics (TestRouterCollisionRefused). Tables.Positions is the union
// over the tables the template can give (Tables.List), each keeping only
// the partitions that route to it; Tables.Rebuild reads a partition's
// table (TestRouterSplitsMixedBatches, TestRouterWaitsForEveryTable,
// TestRouterExactlyOnceAcrossRedial, TestRouterZeroRowBatch).
//
// # Invariants
//
//   - A batch is acknowledged only by a commit whose snapshot references
//     every data file holding its rows (TestCommitFailureAtEveryOperation).
//   - Positions only grow: every commit merges into what the table held,
//     so concurrent workers never lower each other's positions
//     (TestConcurrentSinks).
//   - With Options.Ordered (Exclusive and Failover subscriptions) no row
//     is stored twice: rows at or below the table's position for their
//     partition are dropped when sent and again against every snapshot a
//     commit lands on (TestConcurrentSinks, TestCommitFailureAtEveryOperation).
//   - A commit retried after an unknown outcome never appends twice: it is
//     looked up by its commit id first (TestCommitFailureAtEveryOperation).
//   - Sink.Close returns within CloseTimeout whatever the catalog and the
//     object store do, the encoders' calls included: their calls are
//     cancelled and every encoder's open data file is abandoned off the
//     sink's lock (TestCloseBoundedWhenStoreHangs, TestCloseWhileWriterBusy).
//
// Without Ordered (Shared and Key_Shared subscriptions) the table is
// at-least-once, like every thalweg anchor under those types: a record
// redelivered after a crash may be stored twice, and Rebuild returns each
// seq once.
//
// # Types
//
// Arrow types map to Iceberg as iceberg-go maps them, except that uint32
// becomes long (not int) so that every value survives, and time32 (Avro's
// time-millis) becomes time (microseconds); uint64 becomes long and a
// value above 2^63-1 is refused (ErrValueRange). Nanosecond timestamps
// need table format version 3, which the Sink does not write: a batch
// with one is refused for good, naming the field. docs/iceberg.md has the
// whole table (TestEveryAssemblerTypeReadsBack). The table property
// PropArrowSchema keeps the Arrow schema of the batches, so that Rebuild
// returns rows in it. A batch schema that adds fields or makes a required
// field optional evolves the table schema (a schema update commit); one
// that changes a field's type incompatibly fails the Sink with a
// permanent, InvalidArgument error naming the field.
//
// # Maintenance
//
// The committer runs the table's maintenance (maintain.go,
// MaintenanceOptions) between two of its commits, one step per commit
// round, when this worker holds the table's maintenance lease. A round is
// due when a batch is sent and also when maintenance is, so a Sink nobody
// sends to maintains too, on the table reloaded at the start of each run,
// including a table other workers created after it started
// (TestIdleSinkMaintains). A run, at
// most every Interval and first one Interval after the start, is a
// snapshot expiry (Transaction.ExpireSnapshots: older than SnapshotMaxAge,
// the MinSnapshots newest kept, the files only expired snapshots
// referenced deleted; committed only once it expires at least a quarter
// as many snapshots as it keeps, since it reads every kept snapshot's
// manifest list whatever it expires: TestExpiryWhenWorthIt), a manifest rewrite (Transaction.RewriteManifests),
// and a background job: an orphan cleanup at most every OrphanInterval
// (Table.DeleteOrphanFiles: unreferenced files older than OrphanAge) and
// the rewrite of one compaction group (compact.go: iceberg-go's compaction
// planner and table.ExecuteCompactionGroup write TargetFileSize files off
// the committer). The job ends with the Sink (Close cancels it; the
// committer waits for it). The committer swaps the written files in at
// its next round with Transaction.NewRewrite and RewriteFiles.ApplyResult,
// in a rewrite snapshot whose summary carries the table's positions, a
// commit id and the format. Each step is bounded by Timeout and costs the
// committer one commit round. Maintenance commits go through noReplay: an
// expiry or a manifest rewrite refused because another writer committed
// is planned again on the table as it is then; a compaction is staged
// again on it while every file it replaces is still there (only appends
// came between), and abandoned (its files deleted) when one is gone; a
// table holding its commit id already is its outcome. A failing step is
// retried after a growing backoff and never fails the Sink
// (TestSnapshotExpiry, TestOrphanCleanup, TestCompaction,
// TestCompactionReplannedAfterConflict, TestManifestRewriting).
//
// # The maintenance lease
//
// PropMaintenanceLease names the one worker that maintains the table and
// until when (lease.go). A Sink with maintenance on sets it in its append
// commits (attempt) when the table has none or it passed, and renews its
// own there once half of LeaseTTL passed; its maintenance commits renew it
// too and check it on the table they commit on. Every such commit asserts
// the table's current snapshot, so the lease is taken and renewed by the
// catalog's compare-and-swap: an append never takes a live lease. A holder
// killed at k is replaced within LeaseTTL + CommitInterval + Interval of
// k, plus commit latency (TestMaintenanceLease, TestMaintenanceLeaseREST).
//
// A Sink that appended nothing since the last run was due, and has no
// batch waiting, takes or renews the lease in a commit that sets the property alone (leaseOnly) and makes no
// snapshot. Its snapshot assertion fences it against appends, not against
// another worker's lease-only commit, which changes no snapshot: two idle
// workers taking a passed lease at once may both commit, the later one
// winning. So a worker that took the lease that way starts its run one
// round later, on the table reloaded then, and only if the lease is still
// its own; the two may both maintain for a run only when the other's
// commit lands more than that round after it was planned. Maintenance
// commits are planned again on the table as it is when refused, so two
// maintainers cost work, not data.
//
// Sink.Close gives the lease up when the Sink holds it (releaseLease): a
// lease-only commit setting Until to now, after the committer returned,
// within half of CloseTimeout. Another worker takes it at its next append
// or due run instead of once it passed
// (TestMaintenanceLeaseReleasedOnClose,
// TestMaintenanceLeaseReleasedOnCloseREST). A release that fails is
// logged and leaves the lease to pass, as a killed holder's does.
//
// # What is left behind
//
// Data files of batches no commit took (a Sink closed or crashed before
// its commit; a file rewritten by a conflict), and the files of a
// compaction written and never committed (a crash between its write and
// its commit, a commit whose outcome stayed unknown, a lease lost) are
// referenced by no snapshot: orphan files, which the orphan cleanup
// deletes once they are older than MaintenanceOptions.OrphanAge. A
// compaction abandoned because a file it replaces is gone, or closed
// before its commit was tried, deletes its files itself.
package iceberg
