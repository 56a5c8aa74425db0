package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/internal/errlog"
)

// Defaults of MaintenanceOptions.
const (
	// DefaultMaintenanceInterval is the least time between two snapshot
	// expiries of a Sink.
	DefaultMaintenanceInterval = time.Minute
	// DefaultSnapshotMaxAge is the age past which a snapshot is expired
	// (unless it is one of the DefaultMinSnapshots newest): readers that
	// planned a scan on an older snapshot and read its files later fail,
	// and time travel reaches this far back. A longer age makes every
	// metadata.json larger (about 1 KB per snapshot; 600 snapshots at one
	// commit a second) and every expiry read more manifest lists.
	DefaultSnapshotMaxAge = 10 * time.Minute
	// DefaultMinSnapshots is how many of the newest snapshots an expiry
	// keeps whatever their age.
	DefaultMinSnapshots = 10
	// DefaultOrphanAge is the age past which a file under the table's
	// location that no snapshot and no metadata file references is
	// deleted. It must exceed the longest a data file can wait for its
	// commit (a worker cut off from the catalog keeps retrying with the
	// files it wrote): a file deleted before its commit lands makes the
	// snapshot reference a missing file.
	DefaultOrphanAge = 24 * time.Hour
	// DefaultOrphanInterval is the least time between two orphan cleanups
	// of a Sink; each lists every file under the table's location.
	DefaultOrphanInterval = time.Hour
	// DefaultMaintenanceTimeout bounds one maintenance run, during which
	// the Sink commits nothing (batches keep being written).
	DefaultMaintenanceTimeout = 30 * time.Second
)

// maxPlans bounds the times one run plans an expiry or a compaction, each
// on the table as another writer's commit left it.
const maxPlans = 3

// MaintenanceOptions configure what a Sink does between its commits to
// keep its table small: snapshot expiry and orphan file cleanup with
// iceberg-go's own (Transaction.ExpireSnapshots, Table.DeleteOrphanFiles).
type MaintenanceOptions struct {
	// Disabled turns maintenance off: the table keeps every snapshot and
	// every orphan file unless another engine removes them.
	Disabled bool
	// Interval is the least time between two snapshot expiries. Default
	// DefaultMaintenanceInterval.
	Interval time.Duration
	// SnapshotMaxAge is the age past which a snapshot is expired. It must
	// exceed CommitInterval. Default DefaultSnapshotMaxAge, or ten commit
	// intervals when that is longer.
	SnapshotMaxAge time.Duration
	// MinSnapshots is how many of the newest snapshots are kept whatever
	// their age. Default DefaultMinSnapshots.
	MinSnapshots int
	// OrphanAge is the age past which an unreferenced file is deleted. It
	// must exceed CommitTimeout and SnapshotMaxAge. Default
	// DefaultOrphanAge, or twice SnapshotMaxAge when that is longer.
	OrphanAge time.Duration
	// OrphanInterval is the least time between two orphan cleanups.
	// Default DefaultOrphanInterval.
	OrphanInterval time.Duration
	// Timeout bounds one maintenance run. Default
	// DefaultMaintenanceTimeout.
	Timeout time.Duration
	// CompactMinFiles is the least number of small data files (below 3/4
	// of Options.TargetFileSize) one compaction rewrites together; each
	// run compacts at most one group of about TargetFileSize. Default
	// DefaultCompactMinFiles; negative turns compaction off.
	CompactMinFiles int
}

func (m *MaintenanceOptions) validate(commitInterval, commitTimeout time.Duration) []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Interval", m.Interval}, {"SnapshotMaxAge", m.SnapshotMaxAge}, {"OrphanAge", m.OrphanAge},
		{"OrphanInterval", m.OrphanInterval}, {"Timeout", m.Timeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("Options.Maintenance.%s must be >= 0, got %v", d.name, d.v))
		}
	}
	if m.MinSnapshots < 0 {
		errs = append(errs, fmt.Errorf("Options.Maintenance.MinSnapshots must be >= 1, got %d", m.MinSnapshots))
	}
	if m.Disabled {
		return errs
	}
	ci := orDefault(commitInterval, DefaultCommitInterval)
	if m.SnapshotMaxAge > 0 && m.SnapshotMaxAge <= ci {
		errs = append(errs, fmt.Errorf("Options.Maintenance.SnapshotMaxAge %v must exceed the commit interval %v", m.SnapshotMaxAge, ci))
	}
	if m.OrphanAge > 0 {
		ct := orDefault(commitTimeout, DefaultCommitTimeout)
		age := m.snapshotMaxAge(ci)
		if m.OrphanAge <= ct || m.OrphanAge <= age {
			errs = append(errs, fmt.Errorf("Options.Maintenance.OrphanAge %v must exceed the commit timeout %v and the snapshot max age %v", m.OrphanAge, ct, age))
		}
	}
	return errs
}

// snapshotMaxAge is SnapshotMaxAge, or its default for commitInterval:
// DefaultSnapshotMaxAge, or ten commit intervals when that is longer.
func (m *MaintenanceOptions) snapshotMaxAge(commitInterval time.Duration) time.Duration {
	return orDefault(m.SnapshotMaxAge, max(DefaultSnapshotMaxAge, 10*commitInterval))
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func (m *MaintenanceOptions) withDefaults(commitInterval time.Duration) {
	m.Interval = orDefault(m.Interval, DefaultMaintenanceInterval)
	m.SnapshotMaxAge = m.snapshotMaxAge(commitInterval)
	m.OrphanAge = orDefault(m.OrphanAge, max(DefaultOrphanAge, 2*m.SnapshotMaxAge))
	m.OrphanInterval = orDefault(m.OrphanInterval, DefaultOrphanInterval)
	m.Timeout = orDefault(m.Timeout, DefaultMaintenanceTimeout)
	if m.MinSnapshots == 0 {
		m.MinSnapshots = DefaultMinSnapshots
	}
	if m.CompactMinFiles == 0 {
		m.CompactMinFiles = DefaultCompactMinFiles
	}
}

// maintainer is the maintenance state of a Sink (committer goroutine only).
type maintainer struct {
	nextExpiry  time.Time // one Interval after the start, then after each run
	nextOrphans time.Time // zero: due one OrphanInterval after the first run
	fails       int       // failed runs in a row
	throttle    errlog.Throttle
}

// maintain runs what maintenance is due, between two commits of the
// committer: a snapshot expiry and a compaction at most every Interval, an orphan cleanup at
// most every OrphanInterval, both bounded by Timeout. A run that fails is
// logged throttled and tried again after a growing backoff (at most
// Interval); it never fails the Sink.
func (s *Sink) maintain() {
	mo := &s.opts.Maintenance
	now := time.Now()
	if mo.Disabled || now.Before(s.mt.nextExpiry) {
		return
	}
	s.mu.Lock()
	tbl := s.mu.tbl
	s.mu.Unlock()
	if tbl == nil {
		return
	}
	if s.mt.nextOrphans.IsZero() {
		s.mt.nextOrphans = now.Add(mo.OrphanInterval)
	}
	ctx, cancel := context.WithTimeout(s.ctx, mo.Timeout)
	defer cancel()
	err := s.expire(ctx, tbl)
	if err == nil && mo.CompactMinFiles > 0 {
		s.mu.Lock()
		tbl = s.mu.tbl
		s.mu.Unlock()
		err = s.compact(ctx, tbl)
	}
	if err == nil && !now.Before(s.mt.nextOrphans) {
		if err = s.removeOrphans(ctx); err == nil {
			s.mt.nextOrphans = now.Add(mo.OrphanInterval)
		}
	}
	if err != nil {
		if s.ctx.Err() != nil {
			return // closing
		}
		s.mt.fails++
		s.m.maintenanceFailures.Add(1)
		s.mt.throttle.Fail(err, "table", s.opts.Table, "attempt", s.mt.fails)
		s.mt.nextExpiry = now.Add(min(s.backoff(s.mt.fails), mo.Interval))
		return
	}
	s.mt.fails = 0
	s.mt.throttle.Clear("table", s.opts.Table)
	s.mt.nextExpiry = now.Add(mo.Interval)
	s.recordTableState(ctx)
}

// recordTableState records the gauges of the table as the sink last saw
// it: its snapshots, and its current snapshot's data files (the summary's
// total-data-files) and manifests (one read of the manifest list).
func (s *Sink) recordTableState(ctx context.Context) {
	s.mu.Lock()
	tbl := s.mu.tbl
	s.mu.Unlock()
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return
	}
	var files int64
	if cur.Summary != nil {
		files, _ = strconv.ParseInt(cur.Summary.Properties["total-data-files"], 10, 64)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	ms, err := cur.Manifests(fs)
	if err != nil {
		return
	}
	s.m.tableState(int64(len(tbl.Metadata().Snapshots())), files, int64(len(ms)))
}

// expire expires the snapshots older than SnapshotMaxAge but the
// MinSnapshots newest, deleting the files only they referenced. The table
// property PropPositions carries the positions of expired snapshots.
func (s *Sink) expire(ctx context.Context, tbl *table.Table) error {
	mo := &s.opts.Maintenance
	return s.commitPlanned(ctx, tbl, "expire snapshots", func(tx *table.Transaction, tbl *table.Table) (func(*table.Table), error) {
		before := len(tbl.Metadata().Snapshots())
		if err := tx.ExpireSnapshots(table.WithOlderThan(mo.SnapshotMaxAge), table.WithRetainLast(mo.MinSnapshots)); err != nil {
			return nil, err
		}
		return func(next *table.Table) {
			s.m.snapshotsExpired.Add(int64(max(0, before-len(next.Metadata().Snapshots()))))
		}, nil
	})
}

// commitPlanned commits what plan stages in a transaction on tbl; a nil
// done from plan means nothing to commit, else done is called with the
// committed table. The commit goes through noReplay: when it fails and
// the table moved (another writer committed first, or this commit landed
// and its answer was lost), it is planned again on the table as it is then
// (at most maxPlans times), never replayed. The committed table becomes the
// base of the sink's next commit when the sink had not moved on.
func (s *Sink) commitPlanned(ctx context.Context, tbl *table.Table, what string,
	plan func(tx *table.Transaction, tbl *table.Table) (done func(*table.Table), err error)) error {
	for n := 1; ; n++ {
		// Bound to noReplay only where iceberg-go would replay a refused
		// commit: each table.New(…, tbl.FS, …) keeps tbl alive in the
		// tables committed on top of it.
		base := tbl
		if retriesConfigured(tbl) {
			base = table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, noReplay{s.cat})
		}
		tx := base.NewTransaction()
		done, err := plan(tx, tbl)
		if err != nil {
			return fmt.Errorf("%s: plan: %w", what, err)
		}
		if done == nil {
			return nil
		}
		next, err := tx.Commit(ctx)
		if err == nil {
			if base != tbl {
				next = bind(next, s.cat, s.opts.hooks)
			}
			done(next)
			s.mu.Lock()
			if s.mu.tbl == tbl {
				s.mu.tbl = next
			}
			s.mu.Unlock()
			return nil
		}
		if n >= maxPlans || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		// Refused (catalogs say so differently) or of unknown outcome:
		// the table says whether another writer, or this commit, moved it.
		latest, found, lerr := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
		if lerr != nil {
			return errors.Join(fmt.Errorf("%s: %w", what, err), lerr)
		}
		if !found {
			return fmt.Errorf("%s: table %s no longer exists", what, s.opts.Table)
		}
		if latest.MetadataLocation() == tbl.MetadataLocation() {
			return fmt.Errorf("%s: %w", what, err) // the table did not move: a failure, not a conflict
		}
		tbl = latest
	}
}

// removeOrphans deletes the files under the table's location that no
// metadata references and that are older than OrphanAge.
func (s *Sink) removeOrphans(ctx context.Context) error {
	tbl, found, err := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
	if err != nil {
		return fmt.Errorf("remove orphan files: load the table: %w", err)
	}
	if !found {
		return fmt.Errorf("remove orphan files: table %s no longer exists", s.opts.Table)
	}
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(s.opts.Maintenance.OrphanAge))
	if err != nil {
		return fmt.Errorf("remove orphan files: %w", err)
	}
	s.m.orphansRemoved.Add(int64(len(res.DeletedFiles)))
	return nil
}
