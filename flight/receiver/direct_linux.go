package receiver

import (
	"os"
	"syscall"
)

// openDirect opens an existing file for direct writes.
func openDirect(path string) (directFile, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT|syscall.O_CLOEXEC, 0)
}
