package iceberg

import (
	"context"
	"errors"
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
	for plan := 1; ; plan++ {
		if tbl.CurrentSnapshot() == nil {
			return nil
		}
		p, err := compaction.Analyze(ctx, tbl, cfg)
		if err != nil {
			return fmt.Errorf("plan the compaction: %w", err)
		}
		if len(p.Groups) == 0 {
			return nil
		}
		g := p.Groups[0]
		pos, err := tablePositions(tbl)
		if err != nil {
			return err
		}
		summary := iceberg.Properties{PropCommitID: uuid.NewString(), PropFormat: propFormatVersion}
		if len(pos) > 0 {
			summary[PropPositions] = pos.encode()
		}
		base := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, noReplay{s.cat})
		tx := base.NewTransaction()
		res, err := tx.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{
			PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes,
		}}, table.RewriteDataFilesOptions{SnapshotProps: summary})
		if err != nil {
			return fmt.Errorf("compact %d data files: %w", len(g.Tasks), err)
		}
		next, err := tx.Commit(ctx)
		if err == nil {
			s.m.compacted(res.RemovedDataFiles, res.BytesBefore)
			next = bind(next, s.cat, s.opts.hooks)
			s.mu.Lock()
			if s.mu.tbl == tbl {
				s.mu.tbl = next
			}
			s.mu.Unlock()
			return nil
		}
		if !errors.Is(err, errRefused) || plan >= maxExpiryPlans {
			return fmt.Errorf("commit the compaction of %d data files: %w", len(g.Tasks), err)
		}
		latest, found, lerr := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
		if lerr != nil {
			return errors.Join(fmt.Errorf("commit the compaction: %w", err), lerr)
		}
		if !found {
			return fmt.Errorf("compaction: table %s no longer exists", s.opts.Table)
		}
		tbl = latest
	}
}
