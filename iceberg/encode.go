package iceberg

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/batch"
)

// MaxEncoders caps DefaultEncoders: past four encoders a table's rate is
// bound by the lane's one dispatch goroutine and the committer, not by
// encoding, and each encoder adds an open data file (and a file per
// commit).
const MaxEncoders = 4

// DefaultEncoders is the number of encoders of a Sink when
// Options.Encoders is 0: min(GOMAXPROCS, MaxEncoders). A Sink of a table
// template's table (OpenTables) has one: the tables encode in parallel
// already, and a goroutine per table and core would grow with the topics.
func DefaultEncoders() int { return min(runtime.GOMAXPROCS(0), MaxEncoders) }

// encoder converts and Parquet-encodes the batches the writer hands it
// into data files of its own, one batch at a time, in parallel with the
// Sink's other encoders. Each of its files holds batches of one commit
// cut (Sink.mu.cut): a batch of a later cut starts a new file, and the
// committer takes the files of its cut once every batch of it is written,
// so a commit's files hold exactly the batches it covers.
//
// An encoder's lock is never taken under Sink.mu, and an encoder takes
// Sink.mu only after it finished a batch, without its own lock (to fail
// the Sink): the committer waits for its batches holding neither.
type encoder struct {
	mu    sync.Mutex
	file  *fileWriter // the open data file, nil when none
	files []*dataFile // closed data files no commit took yet, each of one cut
	err   error       // a write failed: the files are broken, nothing more is written
}

// job is a batch the writer handed to an encoder.
type job struct {
	p   *pendingOne
	pl  *plan
	tbl *table.Table      // the table as the writer saw it: the files' table
	b   *batch.Batch      // retained; the encoder releases it
	rec arrow.RecordBatch // the rows of b to write (b.Rec, or what keep kept)
	cut uint64            // the commit cut of the batch (Sink.mu.cut)
}

// encode writes the jobs the writer hands out until Close or a permanent
// failure (both cancel s.ctx). Each job's batch is done (p.done closed,
// p.err set on a failure) once its rows are in the encoder's file or its
// split files are written; a failure is the Sink's permanent failure.
func (s *Sink) encode(e *encoder, jobs <-chan *job) {
	for {
		var j *job
		select {
		case j = <-jobs:
		case <-s.ctx.Done():
			return
		}
		err := e.write(s, j)
		j.b.Release()
		<-s.slots
		j.p.err = err
		close(j.p.done)
		if err != nil {
			s.mu.Lock()
			if s.ctx.Err() == nil {
				s.failLocked(newError("write", err, true))
			}
			s.mu.Unlock()
		}
	}
}

// write writes j's rows into e's open data file, starting one when there
// is none, its plan or its cut differs or it reached the target size; on
// a partitioned table into data files of their own (writePartitioned).
func (e *encoder) write(s *Sink, j *job) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if err := e.writeLocked(s, j); err != nil {
		e.err = err
		return err
	}
	j.p.newest = newestPublishTime(j.rec)
	return nil
}

func (e *encoder) writeLocked(s *Sink, j *job) error {
	ctx, p, pl := s.ctx, j.p, j.pl
	partitioned := !j.tbl.Spec().IsUnpartitioned()
	if f := e.file; f != nil && (partitioned || f.df.cut != j.cut || f.df.plan != pl || f.out.n >= s.opts.TargetFileSize) {
		if err := e.closeFileLocked(); err != nil {
			return err
		}
	}
	out, err := pl.convert(ctx, j.rec)
	if err != nil {
		return err
	}
	if partitioned {
		files, err := s.writePartitioned(ctx, j.tbl, pl, p, out)
		if err != nil {
			return err
		}
		for _, f := range files {
			f.cut = j.cut
		}
		e.files = append(e.files, files...)
		return nil
	}
	defer out.Release()
	if e.file == nil {
		if e.file, err = s.createFile(j.tbl, pl); err != nil {
			return err
		}
		e.file.df.cut = j.cut
	}
	f := e.file
	if err := f.w.Write(out); err != nil {
		return fmt.Errorf("write %s: %w", f.df.location, err)
	}
	f.df.rows += out.NumRows()
	f.df.batches = append(f.df.batches, p)
	return nil
}

// closeFileLocked finishes the open data file and keeps it for the next
// commit.
func (e *encoder) closeFileLocked() error {
	f := e.file
	e.file = nil
	if err := f.finish(); err != nil {
		return err
	}
	e.files = append(e.files, f.df)
	return nil
}

// cut takes e's data files of the commit cut c (and of earlier cuts, none
// once each commit took its own), closing the open one when it is of c.
// The committer cuts once every batch of c is written: nothing more of c
// comes, and nothing of a later cut is in these files.
func (e *encoder) cut(c uint64) ([]*dataFile, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	if e.file != nil && e.file.df.cut <= c {
		if err := e.closeFileLocked(); err != nil {
			e.err = err
			return nil, err
		}
	}
	var taken, later []*dataFile
	for _, f := range e.files {
		if f.cut <= c {
			taken = append(taken, f)
		} else {
			later = append(later, f)
		}
	}
	e.files = later
	return taken, nil
}

// abandon takes e's open data file (the Sink is closing and e's goroutine
// returned); the caller closes and removes it.
func (e *encoder) abandon() *fileWriter {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.file
	e.file, e.files = nil, nil
	return f
}
