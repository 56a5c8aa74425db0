package offsetstore

import (
	"io"
	"os"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// lockHolder returns the pid holding Pebble's fcntl lock on path (Pebble
// locks with F_SETLK, so F_GETLK names the holder), or 0 if unknown.
func lockHolder(fsys vfs.FS, path string) int {
	if fsys != vfs.Default {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}
