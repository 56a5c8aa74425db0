//go:build !linux

package offsetstore

import "github.com/cockroachdb/pebble/v2/vfs"

func lockHolder(vfs.FS, string) int { return 0 }
