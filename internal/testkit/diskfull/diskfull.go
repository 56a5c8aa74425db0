// Package diskfull is a test file system whose disk can be filled and
// emptied: while Full is set, every write to a file (write, write-at,
// preallocate) fails with ENOSPC, as on a real full volume; reads, creates,
// renames, removes and syncs still work. Tests hand FS to
// offsetstore.Options.FS.
//
// It stays: Pebble's vfs/errorfs does the injecting; this package is only
// the full-disk switch errorfs does not have, and its counters.
package diskfull

import (
	"os"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// Disk is the switch and the counters of one file system.
type Disk struct {
	full     atomic.Bool
	refused  atomic.Int64
	accepted atomic.Int64
}

// Wrap returns fs whose writes fail with ENOSPC while d is full.
func (d *Disk) Wrap(fs vfs.FS) vfs.FS {
	return errorfs.Wrap(fs, errorfs.InjectorFunc(d.maybeError))
}

// SetFull fills (true) or empties (false) the disk.
func (d *Disk) SetFull(full bool) { d.full.Store(full) }

// Refused is the number of writes that failed with ENOSPC so far.
func (d *Disk) Refused() int64 { return d.refused.Load() }

// Accepted is the number of writes that went through so far.
func (d *Disk) Accepted() int64 { return d.accepted.Load() }

func (d *Disk) maybeError(op errorfs.Op) error {
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFilePreallocate:
	default:
		return nil
	}
	if !d.full.Load() {
		d.accepted.Add(1)
		return nil
	}
	d.refused.Add(1)
	return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
}
