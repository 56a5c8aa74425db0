package receiver

import (
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/sys/unix"
)

// openDirect opens an existing file for direct writes.
func openDirect(path string) (directFile, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT|syscall.O_CLOEXEC, 0)
}

// dropCached evicts f's cached pages over [off, off+n) (n 0: to the end
// of the file), so that the next read comes from the disk, and reports
// whether it could. A direct write that rewrites a block while a reader
// holds its cached page can leave that page stale (the kernel warns and
// keeps it, past the process's life); dropping the clean page makes the
// next read see what was written.
func dropCached(f vfs.File, off, n int64) bool {
	fd := f.Fd()
	if fd == vfs.InvalidFd {
		return false
	}
	return unix.Fadvise(int(fd), off, n, unix.FADV_DONTNEED) == nil
}
