package iceberg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/internal/errlog"
	"github.com/thalweg/thalweg/observability"
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
	// DefaultMaintenanceTimeout bounds each step of a maintenance run: one
	// commit round of the committer (an expiry, a manifest rewrite, a
	// compaction's swap), or the background job (the orphan cleanup and
	// the compaction's rewrite).
	DefaultMaintenanceTimeout = 30 * time.Second
)

// maxPlans bounds the times one run plans an expiry or a compaction, each
// on the table as another writer's commit left it.
const maxPlans = 3

// MaintenanceOptions configure what a Sink does between its commits to
// keep its table small, with iceberg-go's own: snapshot expiry
// (Transaction.ExpireSnapshots), manifest rewriting
// (Transaction.RewriteManifests), compaction (the compaction planner,
// table.ExecuteCompactionGroup, Transaction.NewRewrite) and orphan file
// cleanup (Table.DeleteOrphanFiles). Of the workers on one table, only the
// holder of its maintenance lease (PropMaintenanceLease) maintains it.
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
	// LeaseTTL is how long the maintenance lease (PropMaintenanceLease)
	// lasts from when a commit takes or renews it. It must exceed twice
	// CommitInterval (the holder renews it on its commits once half of it
	// passed). A killed holder's lease passes at most LeaseTTL after its
	// last commit. Default three Intervals, at least DefaultMinLeaseTTL.
	LeaseTTL time.Duration
	// Holder names this worker in the lease; it must be unique per
	// process. Default DefaultHolder().
	Holder string
}

func (m *MaintenanceOptions) validate(commitInterval, commitTimeout time.Duration) []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Interval", m.Interval}, {"SnapshotMaxAge", m.SnapshotMaxAge}, {"OrphanAge", m.OrphanAge},
		{"OrphanInterval", m.OrphanInterval}, {"Timeout", m.Timeout}, {"LeaseTTL", m.LeaseTTL}} {
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
	if m.LeaseTTL > 0 && m.LeaseTTL <= 2*ci {
		errs = append(errs, fmt.Errorf("Options.Maintenance.LeaseTTL %v must exceed twice the commit interval %v", m.LeaseTTL, ci))
	}
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
	m.LeaseTTL = orDefault(m.LeaseTTL, max(3*m.Interval, DefaultMinLeaseTTL, 3*commitInterval))
	if m.Holder == "" {
		m.Holder = DefaultHolder()
	}
	if m.MinSnapshots == 0 {
		m.MinSnapshots = DefaultMinSnapshots
	}
	if m.CompactMinFiles == 0 {
		m.CompactMinFiles = DefaultCompactMinFiles
	}
}

// maintStep is the next step of a maintenance run under way.
type maintStep int

const (
	stepNone       maintStep = iota // no run under way
	stepExpire                      // expire snapshots (one commit round)
	stepManifests                   // rewrite manifests (one commit round)
	stepBackground                  // start the orphan cleanup and the compaction's rewrite off the committer
)

// errNotHolder stops a maintenance run: the table's lease names another
// worker, or has run out. It is not a failure.
var errNotHolder = errors.New("the maintenance lease is not this worker's")

// errReplacedGone abandons a compaction: a file it replaces is no longer
// in the table (another writer compacted or overwrote it).
var errReplacedGone = errors.New("a file the compaction replaces is no longer in the table")

// maxSwapRounds bounds the commit rounds a written compaction is tried
// in before its files are abandoned.
const maxSwapRounds = 5

// maintainer is the maintenance state of a Sink (committer goroutine
// only, but results, which the background job sends on, and jobs).
type maintainer struct {
	nextRun     time.Time // one Interval after the start, then after each run
	nextOrphans time.Time // zero: due one OrphanInterval after the first run
	fails       int       // failed runs in a row
	throttle    errlog.Throttle
	step        maintStep
	appended    bool            // an append committed since the last run was due
	busy        bool            // the background job runs
	jobs        sync.WaitGroup  // the background job
	results     chan background // capacity 1: the background job's outcome
	staged      *compacted      // a written compaction its commit awaits
	// What the run under way did so far, for its log line.
	runExpired, runCompacted int64
}

// background is what a background job did: orphan cleanup (when due)
// and a compaction's rewrite, written and not committed.
type background struct {
	orphansDone bool
	compaction  *compacted // nil: nothing to compact
	err         error
}

// compacted is a compaction group rewritten off the committer: the files
// it replaces and the files it wrote, which a commit round swaps in.
type compacted struct {
	gr     table.CompactionGroupResult
	id     string // the rewrite snapshot's PropCommitID
	base   *int64 // the snapshot it was planned on
	rounds int    // commit rounds tried
}

// maintain does one step of the table's maintenance, between two commits
// of the committer, when this worker holds the table's maintenance lease.
// A run, at most every Interval (an orphan cleanup at most every
// OrphanInterval), costs the committer one commit round per step: an
// expiry, a manifest rewrite, and the commit that swaps a compaction in;
// reading and writing the compacted files, and listing the orphans, run
// in a background job. A failing step is logged throttled and its run
// tried again after a growing backoff (at most Interval); it never fails
// the Sink.
func (s *Sink) maintain() {
	mo := &s.opts.Maintenance
	if mo.Disabled {
		return
	}
	now := time.Now()
	select {
	case r := <-s.mt.results:
		s.mt.busy = false
		s.backgroundDone(r, now)
	default:
	}
	s.mu.Lock()
	tbl := s.mu.tbl
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, mo.Timeout)
	defer cancel()
	if tbl == nil {
		// The table did not exist when the sink started and the sink
		// wrote nothing since: other workers may have created it, and a
		// sink nobody sends to maintains it all the same.
		if now.Before(s.mt.nextRun) {
			return
		}
		s.mt.nextRun = now.Add(mo.Interval) // the round timer does not spin
		latest, found, err := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
		if err != nil {
			s.maintenanceFailed(fmt.Errorf("load the table: %w", err), now)
			return
		}
		if !found {
			return
		}
		s.adopt(nil, latest)
		if tbl = s.table(); tbl == nil {
			return
		}
	}
	if s.mt.staged != nil {
		s.swapCompaction(ctx, tbl, now)
		return
	}
	if s.mt.step == stepNone {
		if s.mt.busy || now.Before(s.mt.nextRun) {
			return
		}
		// A sink that did not append since the last run was due has
		// neither the others' snapshots nor the lease's latest value: it
		// reloads the table.
		appended := s.mt.appended
		if !appended {
			var err error
			if tbl, err = s.reload(ctx, tbl); err != nil {
				s.maintenanceFailed(err, now)
				return
			}
		}
		s.mt.appended = false
		// Only a sink that did not append since the last run was due
		// takes the lease in a commit of its own: an appending sink takes
		// and renews it in its appends, which the snapshot fences, while
		// a property-only commit is fenced against no other property-only
		// commit. Right after an append nothing is pending either, so
		// idle alone would let every appending worker take it unfenced.
		if !appended && s.idle() && s.leaseValue(tbl, now) != "" {
			took, err := s.leaseOnly(ctx, tbl, now)
			if err != nil {
				s.maintenanceFailed(err, now)
				return
			}
			if took {
				// A property-only commit is not fenced against another
				// worker's (see the package documentation, "The
				// maintenance lease"): the run starts at the next round,
				// on the table as it is then, if the lease is still this
				// worker's.
				s.poke()
				return
			}
			tbl = s.table()
		}
		if !s.holdsLease(tbl, now) {
			// Another worker maintains the table; this one still
			// exports the table's gauges, at the same pace.
			s.mt.nextRun = now.Add(mo.Interval)
			s.recordTable(ctx)
			return
		}
		s.mt.step = stepExpire
		s.mt.runExpired, s.mt.runCompacted = 0, 0
		s.opts.Logger.Info("iceberg table maintenance run", "table", s.opts.Table, "holder", mo.Holder)
	}
	var err error
	switch s.mt.step {
	case stepExpire:
		err = s.expire(ctx, tbl)
		s.m.ran(observability.MaintenanceExpire, err)
		s.mt.step = stepManifests
	case stepManifests:
		err = s.rewriteManifests(ctx, tbl)
		s.m.ran(observability.MaintenanceManifests, err)
		s.mt.step = stepBackground
	case stepBackground:
		s.mt.step = stepNone
		s.mt.nextRun = now.Add(mo.Interval)
		if s.mt.nextOrphans.IsZero() {
			s.mt.nextOrphans = now.Add(mo.OrphanInterval)
		}
		s.startBackground(tbl, !now.Before(s.mt.nextOrphans))
	}
	if err != nil {
		s.maintenanceFailed(err, now)
		return
	}
	if s.mt.step != stepNone {
		// The run goes on at the next round, which an idle sink would
		// otherwise not have: its steps would wait for the next append.
		s.poke()
	}
}

// maintenanceDue is when the committer's next round is due for the
// maintenance alone, with nothing to append: a run, or the swap of a
// compaction whose commit failed; ok is false when none is (maintenance
// off, or the background job runs and wakes the committer itself).
func (s *Sink) maintenanceDue() (at time.Time, ok bool) {
	if s.opts.Maintenance.Disabled || s.mt.busy {
		return time.Time{}, false
	}
	return s.mt.nextRun, true
}

// poke wakes the committer for a round.
func (s *Sink) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// idle reports whether no batch waits for a commit.
func (s *Sink) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.pending) == 0
}

// table is the table as the sink last saw it.
func (s *Sink) table() *table.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.tbl
}

// reload loads the table as it is, which becomes the sink's when the sink
// did not move on since tbl.
func (s *Sink) reload(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	latest, found, err := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
	if err != nil {
		return nil, fmt.Errorf("load the table: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("table %s no longer exists", s.opts.Table)
	}
	s.adopt(tbl, latest)
	return latest, nil
}

// adopt makes next the sink's table when the sink's is still orig (the
// committer's commits and Send's table creation or schema evolution may
// have moved it on).
func (s *Sink) adopt(orig, next *table.Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.tbl == orig {
		s.setTableLocked(next)
	}
}

// setTableLocked makes tbl the sink's table, and what it holds part of the
// sink's positions. The first table the sink has gives the file system of
// the tables made from committed ones (rebind).
func (s *Sink) setTableLocked(tbl *table.Table) {
	if s.mu.fs == nil {
		s.mu.fs = tbl.FS
	}
	s.mu.tbl = tbl
	if p, err := tablePositions(tbl); err == nil {
		s.mu.pos.merge(p)
	}
}

// maintenanceFailed ends the run under way: a lost lease quietly, a
// failure with a throttled log line and a growing backoff.
func (s *Sink) maintenanceFailed(err error, now time.Time) {
	s.mt.step = stepNone
	if errors.Is(err, errNotHolder) || s.ctx.Err() != nil {
		return
	}
	mo := &s.opts.Maintenance
	s.mt.fails++
	s.m.maintenanceFailures.Add(1)
	s.mt.throttle.Fail(err, "table", s.opts.Table, "attempt", s.mt.fails)
	s.mt.nextRun = now.Add(min(s.backoff(s.mt.fails), mo.Interval))
}

// maintenanceSucceeded records a run that completed.
func (s *Sink) maintenanceSucceeded(ctx context.Context) {
	s.mt.fails = 0
	s.mt.throttle.Clear("table", s.opts.Table)
	s.opts.Logger.Info("iceberg table maintained", "table", s.opts.Table,
		"snapshots_expired", s.mt.runExpired, "files_compacted", s.mt.runCompacted)
	s.recordTable(ctx)
}

// startBackground starts the background job on tbl: the orphan cleanup
// when orphans, then the rewrite of one compaction group. It ends with the
// Sink (Close cancels it and the committer waits for it) or within
// Timeout, and wakes the committer when done.
func (s *Sink) startBackground(tbl *table.Table, orphans bool) {
	s.mt.busy = true
	s.mt.jobs.Add(1)
	go func() {
		defer s.mt.jobs.Done()
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.Maintenance.Timeout)
		defer cancel()
		var r background
		if orphans {
			r.err = s.removeOrphans(ctx)
			s.m.ran(observability.MaintenanceOrphans, r.err)
			r.orphansDone = r.err == nil
		}
		if r.err == nil && s.opts.Maintenance.CompactMinFiles > 0 {
			r.compaction, r.err = s.rewriteGroup(ctx, tbl)
			if r.err == nil && r.compaction == nil {
				s.m.ran(observability.MaintenanceCompact, nil) // nothing to compact
			}
		}
		s.mt.results <- r
		s.poke()
	}()
}

// backgroundDone takes the background job's outcome: a compaction to
// swap in at the next round, or a failure.
func (s *Sink) backgroundDone(r background, now time.Time) {
	if r.orphansDone {
		s.mt.nextOrphans = now.Add(s.opts.Maintenance.OrphanInterval)
	}
	if r.err != nil {
		s.maintenanceFailed(r.err, now)
		return
	}
	if r.compaction != nil {
		s.mt.staged = r.compaction
		return
	}
	s.maintenanceSucceeded(s.ctx)
}

// swapCompaction commits the staged compaction on tbl (one commit round):
// see commitCompaction. A compaction whose replaced files are gone is
// abandoned and its files deleted; one whose lease was lost, or that
// failed maxSwapRounds rounds, is abandoned too, its files left to the
// orphan cleanup. The next run plans again.
func (s *Sink) swapCompaction(ctx context.Context, tbl *table.Table, now time.Time) {
	c := s.mt.staged
	c.rounds++
	err := s.commitCompaction(ctx, tbl, c)
	if err == nil {
		s.m.ran(observability.MaintenanceCompact, nil)
		s.mt.staged = nil
		s.maintenanceSucceeded(ctx)
		return
	}
	if s.ctx.Err() != nil {
		return // closing: abandon deletes the files
	}
	switch {
	case errors.Is(err, errReplacedGone):
		// The table, read after this compaction's commit id was looked
		// for in it, holds neither the replaced files nor the new ones.
		s.mt.staged = nil
		s.removeCompacted(ctx, tbl, c)
		return
	case errors.Is(err, errNotHolder) || c.rounds >= maxSwapRounds:
		// Its commit may have landed unseen: the files are left to
		// the orphan cleanup, which deletes only unreferenced ones.
		s.mt.staged = nil
	}
	s.maintenanceFailed(err, now)
}

// removeCompacted deletes the files c wrote, which no snapshot references.
func (s *Sink) removeCompacted(ctx context.Context, tbl *table.Table, c *compacted) {
	for _, df := range c.gr.NewDataFiles {
		removeFile(ctx, tbl, df.FilePath())
	}
}

// expireShare is the least share of the snapshots an expiry keeps that it
// must expire to be committed: 1/expireShare. Whatever it expires, an
// expiry's commit reads the manifest list of every snapshot it keeps and
// every manifest those reference (iceberg-go deletes the files that only
// expired snapshots referenced), so expiring a few snapshots out of many
// costs as much as expiring many; waiting for a quarter keeps at most a
// quarter more snapshots (RetainedSnapshots counts them).
const expireShare = 4

// worthExpiring reports whether an expiry that expires expired snapshots
// and keeps kept is committed (see expireShare).
func worthExpiring(expired, kept int) bool {
	return expired > 0 && expired*expireShare >= kept
}

// expire expires the snapshots older than SnapshotMaxAge but the
// MinSnapshots newest, deleting the files only they referenced, once
// they are worth it (worthExpiring, judged on the expiry iceberg-go
// stages). The table property PropPositions carries the positions of
// expired snapshots.
func (s *Sink) expire(ctx context.Context, tbl *table.Table) error {
	mo := &s.opts.Maintenance
	return s.commitPlanned(ctx, tbl, "expire snapshots", func(tx *table.Transaction, tbl *table.Table) (func(*table.Table), error) {
		before := len(tbl.Metadata().Snapshots())
		if err := tx.ExpireSnapshots(table.WithOlderThan(mo.SnapshotMaxAge), table.WithRetainLast(mo.MinSnapshots)); err != nil {
			return nil, err
		}
		staged, err := tx.StagedTable()
		if err != nil {
			return nil, err
		}
		if kept := len(staged.Metadata().Snapshots()); !worthExpiring(before-kept, kept) {
			return nil, nil
		}
		return func(next *table.Table) {
			n := int64(max(0, before-len(next.Metadata().Snapshots())))
			s.m.snapshotsExpired.Add(n)
			s.mt.runExpired += n
		}, nil
	})
}

// rewriteManifests merges the current snapshot's small manifests into
// manifests of the table's commit.manifest.target-size-bytes with
// iceberg-go's Transaction.RewriteManifests, in a snapshot of operation
// replace. Merging on append (commit.manifest-merge.enabled) leaves up to
// commit.manifest.min-count-to-merge manifests; this keeps the count at
// what the data's size needs. The rewrite changes no data, and the table
// property PropPositions carries the positions (iceberg-go's
// RewriteManifests takes no summary properties).
func (s *Sink) rewriteManifests(ctx context.Context, tbl *table.Table) error {
	return s.commitPlanned(ctx, tbl, "rewrite manifests", func(tx *table.Transaction, tbl *table.Table) (func(*table.Table), error) {
		res, err := tx.RewriteManifests(ctx)
		if err != nil || res.IsNoOp() {
			return nil, err
		}
		return func(*table.Table) {}, nil
	})
}

// commitPlanned commits what plan stages in a transaction on tbl while
// this worker holds the lease, renewing it (leaseValue) in the same
// commit; a nil done from plan means nothing to commit, else done is
// called with the committed table. See commitOn.
func (s *Sink) commitPlanned(ctx context.Context, tbl *table.Table, what string,
	plan func(tx *table.Transaction, tbl *table.Table) (done func(*table.Table), err error)) error {
	_, err := s.commitOn(ctx, tbl, what, func(tx *table.Transaction, tbl *table.Table, now time.Time) (func(*table.Table), error) {
		if !s.holdsLease(tbl, now) {
			return nil, errNotHolder
		}
		done, err := plan(tx, tbl)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		if done == nil {
			return nil, nil
		}
		if v := s.leaseValue(tbl, now); v != "" {
			if err := tx.SetProperties(iceberg.Properties{PropMaintenanceLease: v}); err != nil {
				return nil, fmt.Errorf("renew the lease: %w", err)
			}
		}
		return done, nil
	})
	return err
}

// leaseOnly takes or renews the lease on tbl (leaseValue) in a commit
// that sets the property alone, and makes no snapshot; took reports a
// lease taken, not this worker's live one renewed.
func (s *Sink) leaseOnly(ctx context.Context, tbl *table.Table, now time.Time) (took bool, err error) {
	took = !s.holdsLease(tbl, now)
	next, err := s.commitLease(ctx, tbl, "take the maintenance lease", s.leaseValue)
	return took && next != nil, err
}

// releaseLease gives the table's maintenance lease up when this sink holds
// it, in a commit that sets its Until to now, so that another worker takes
// it at its next commit round instead of once it passed. It runs when the
// committer has returned (Close), bounded by ctx and by half of
// CloseTimeout, so that a catalog that does not answer leaves Close its
// own bound; a failure is logged and leaves the lease to pass.
func (s *Sink) releaseLease(ctx context.Context) {
	mo := &s.opts.Maintenance
	tbl := s.table()
	if tbl == nil || !s.holdsLease(tbl, time.Now()) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, CloseTimeout/2)
	defer cancel()
	held, _ := tableLease(tbl)
	_, err := s.commitLease(ctx, tbl, "release the maintenance lease", func(tbl *table.Table, now time.Time) string {
		if !s.holdsLease(tbl, now) {
			return ""
		}
		return Lease{Holder: mo.Holder, Until: now}.String()
	})
	if err != nil {
		s.opts.Logger.Warn("iceberg maintenance lease not released; it passes at its until", "table", s.opts.Table,
			"holder", mo.Holder, "until", held.Until, "err", err)
		return
	}
	s.opts.Logger.Info("iceberg maintenance lease released", "table", s.opts.Table, "holder", mo.Holder)
}

// commitLease commits value(tbl, now) as the table's lease in a commit
// that sets the property alone ("": nothing to commit) and returns the
// committed table, nil when nothing was committed. See commitOn.
func (s *Sink) commitLease(ctx context.Context, tbl *table.Table, what string,
	value func(tbl *table.Table, now time.Time) string) (*table.Table, error) {
	return s.commitOn(ctx, tbl, what, func(tx *table.Transaction, tbl *table.Table, now time.Time) (func(*table.Table), error) {
		v := value(tbl, now)
		if v == "" {
			return nil, nil
		}
		if err := tx.SetProperties(iceberg.Properties{PropMaintenanceLease: v}); err != nil {
			return nil, err
		}
		return func(*table.Table) {}, nil
	})
}

// commitOn commits what stage stages in a transaction on tbl; a nil done
// from stage means nothing to commit, else done is called with the
// committed table, which commitOn returns (nil when nothing was
// committed). The commit goes through noReplay: when it fails and the
// table moved (another writer committed first, or this commit landed and
// its answer was lost), it is staged again on the table as it is then (at
// most maxPlans times), never replayed. The committed table becomes the
// base of the sink's next commit when the sink had not moved on.
func (s *Sink) commitOn(ctx context.Context, tbl *table.Table, what string,
	stage func(tx *table.Transaction, tbl *table.Table, now time.Time) (done func(*table.Table), err error)) (*table.Table, error) {
	orig := tbl
	for n := 1; ; n++ {
		fs := s.fsys()
		tx := rebind(tbl, fs, noReplay{s.cat}).NewTransaction()
		done, err := stage(tx, tbl, time.Now())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if done == nil {
			return nil, nil
		}
		next, err := tx.Commit(ctx)
		if err == nil {
			next = rebind(next, fs, s.cat)
			done(next)
			s.adopt(orig, next)
			return next, nil
		}
		if n >= maxPlans || ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		// Refused (catalogs say so differently) or of unknown outcome:
		// the table says whether another writer, or this commit, moved it.
		latest, found, lerr := loadTable(ctx, s.cat, s.t.ident, s.opts.hooks)
		if lerr != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", what, err), lerr)
		}
		if !found {
			return nil, fmt.Errorf("%s: table %s no longer exists", what, s.opts.Table)
		}
		if latest.MetadataLocation() == tbl.MetadataLocation() {
			return nil, fmt.Errorf("%s: %w", what, err) // the table did not move: a failure, not a conflict
		}
		tbl = latest
	}
}

// removeOrphans deletes the files under the table's location that no
// metadata references and that are older than OrphanAge.
// It runs in the background job.
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
