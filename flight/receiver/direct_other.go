//go:build !linux

package receiver

import (
	"errors"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// openDirect is Linux only: elsewhere every write goes through the page
// cache.
func openDirect(string) (directFile, error) {
	return nil, errors.ErrUnsupported
}

// dropCached: without direct writes no cached page goes stale.
func dropCached(vfs.File, int64, int64) bool { return false }
