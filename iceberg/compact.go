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

// rewriteGroup plans a compaction of tbl's current snapshot with
// iceberg-go's compaction planner and writes its first group (at most
// about TargetFileSize of input, bin-packed into files of TargetFileSize)
// with table.ExecuteCompactionGroup, without committing it. It runs in the
// background job, off the committer; nil: nothing to compact. A failed
// write deletes what it wrote.
func (s *Sink) rewriteGroup(ctx context.Context, tbl *table.Table) (*compacted, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = s.opts.TargetFileSize
	cfg.MinFileSizeBytes = s.opts.TargetFileSize * 3 / 4
	cfg.MaxFileSizeBytes = s.opts.TargetFileSize * 9 / 5
	cfg.MinInputFiles = uint(s.opts.Maintenance.CompactMinFiles)
	p, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil {
		return nil, fmt.Errorf("compact data files: plan: %w", err)
	}
	if len(p.Groups) == 0 {
		return nil, nil
	}
	g := p.Groups[0]
	gr, err := table.ExecuteCompactionGroup(ctx, tbl, table.CompactionTaskGroup{
		PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes,
	}, table.WithCompactionTargetFileSize(s.opts.TargetFileSize))
	if err != nil {
		c := &compacted{gr: gr}
		s.removeCompacted(ctx, tbl, c)
		return nil, fmt.Errorf("compact data files: rewrite %d data files: %w", len(g.Tasks), err)
	}
	if len(gr.OldDataFiles) == 0 || len(gr.NewDataFiles) == 0 {
		return nil, nil
	}
	return &compacted{gr: gr, id: uuid.NewString(), base: snapshotID(tbl)}, nil
}

// commitCompaction swaps c's files in on tbl, the sink's latest table, in
// a rewrite snapshot staged with iceberg-go's RewriteFiles
// (Transaction.NewRewrite, RewriteFiles.ApplyResult) and committed by the
// committer between two of its appends. The snapshot carries the table's
// positions, c's commit id and the format in its summary, like every
// snapshot the Sink commits. When another writer committed first, the
// rewrite is staged again on the table as it is then, as long as every
// file it replaces is still there (only appends intervened); when one is
// gone, it returns errReplacedGone. A table that holds c's commit id
// already (its answer was lost) is the commit's outcome.
func (s *Sink) commitCompaction(ctx context.Context, tbl *table.Table, c *compacted) error {
	return s.commitPlanned(ctx, tbl, "compact data files", func(tx *table.Transaction, tbl *table.Table) (func(*table.Table), error) {
		if hasCommit(tbl, c.base, c.id) {
			return nil, nil
		}
		live, err := liveFiles(ctx, tbl)
		if err != nil {
			return nil, err
		}
		for _, df := range c.gr.OldDataFiles {
			if !live[df.FilePath()] {
				return nil, errReplacedGone
			}
		}
		pos, err := tablePositions(tbl)
		if err != nil {
			return nil, err
		}
		summary := iceberg.Properties{PropCommitID: c.id, PropFormat: propFormatVersion}
		if len(pos) > 0 {
			summary[PropPositions] = pos.encode()
		}
		if err := tx.NewRewrite(summary).ApplyResult(c.gr).Commit(ctx); err != nil {
			return nil, fmt.Errorf("rewrite %d data files: %w", len(c.gr.OldDataFiles), err)
		}
		return func(*table.Table) {
			s.m.compacted(len(c.gr.OldDataFiles), c.gr.BytesBefore)
			s.mt.runCompacted += int64(len(c.gr.OldDataFiles))
		}, nil
	})
}

// liveFiles is the set of data file paths of tbl's current snapshot.
func liveFiles(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the data files: %w", err)
	}
	out := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		out[t.File.FilePath()] = true
	}
	return out, nil
}
