package iceberg

import (
	"context"
	"fmt"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"
)

// DefaultCompactMinFiles is the least number of small data files a
// compaction rewrites at once (iceberg-go's compaction planner's own
// default).
const DefaultCompactMinFiles = 5

// compact bin-packs the small data files of the current snapshot into
// files of Options.TargetFileSize with iceberg-go's compaction planner and
// Transaction.RewriteDataFiles: one group (at most about TargetFileSize of
// input) per run, so that a run stays within MaintenanceOptions.Timeout.
// The rewrite snapshot carries the table's positions, a commit id and the
// format in its summary, like every snapshot the Sink commits. Its commit
// asserts the table unchanged (noReplay): when another writer committed
// first, it is planned again on the table as it is then, never replayed.
func (s *Sink) compact(ctx context.Context, tbl *table.Table) error {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = s.opts.TargetFileSize
	cfg.MinFileSizeBytes = s.opts.TargetFileSize * 3 / 4
	cfg.MaxFileSizeBytes = s.opts.TargetFileSize * 9 / 5
	cfg.MinInputFiles = uint(s.opts.Maintenance.CompactMinFiles)
	return s.commitPlanned(ctx, tbl, "compact data files", func(tx *table.Transaction, tbl *table.Table) (func(*table.Table), error) {
		if tbl.CurrentSnapshot() == nil {
			return nil, nil
		}
		p, err := compaction.Analyze(ctx, tbl, cfg)
		if err != nil || len(p.Groups) == 0 {
			return nil, err
		}
		g := p.Groups[0]
		pos, err := tablePositions(tbl)
		if err != nil {
			return nil, err
		}
		summary := iceberg.Properties{PropCommitID: uuid.NewString(), PropFormat: propFormatVersion}
		if len(pos) > 0 {
			summary[PropPositions] = pos.encode()
		}
		res, err := tx.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{
			PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes,
		}}, table.RewriteDataFilesOptions{SnapshotProps: summary})
		if err != nil {
			return nil, fmt.Errorf("rewrite %d data files: %w", len(g.Tasks), err)
		}
		return func(*table.Table) { s.m.compacted(res.RemovedDataFiles, res.BytesBefore) }, nil
	})
}
