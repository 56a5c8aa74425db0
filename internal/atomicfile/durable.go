// Package atomicfile writes the small files of the thalweg servers (the
// Flight receiver's DATASET files, rebuilt indexes and quarantined bytes;
// the Zerobus server's table schemas and quarantined torn lines) so that a
// crash at any point leaves either the old content or the new one under
// the file's name, never a mix, and a completed write survives the crash.
//
// Every function takes the file system as a Pebble vfs.FS, so that tests
// inject faults (errorfs, a crashable in-memory FS) into the same code the
// servers run on vfs.Default. The functions are safe for concurrent use on
// distinct files; two concurrent writes of the same name race on its
// temporary file, and callers serialize them.
//
// It stays thalweg's own: the atomic-write libraries (renameio and the
// like) write through package os, not a vfs.FS, so the servers' crash and
// fault tests could not reach them.
package atomicfile

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TmpExt is the suffix of the temporary file WriteFile writes before it
// renames it over the target. A file with this suffix left in a directory
// is an interrupted write: its target still holds the old content, and the
// file may be removed.
const TmpExt = ".tmp"

// WriteFile replaces dir/name with data: it writes dir/name+TmpExt, syncs
// it, renames it over dir/name and syncs dir, so that the new content and
// the name both survive a crash once WriteFile returns nil. dir must exist
// (see MkdirAll). A failed write leaves the old content in place. The
// error names the file and wraps the file system's cause.
func WriteFile(fs vfs.FS, dir, name string, data []byte) error {
	path := fs.PathJoin(dir, name)
	if err := writeFile(fs, dir, path, data); err != nil {
		return fmt.Errorf("writing %s durably: %w", path, err)
	}
	return nil
}

func writeFile(fs vfs.FS, dir, path string, data []byte) error {
	tmp := path + TmpExt
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fs.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(fs, dir)
}

// MkdirAll creates dir and any missing parents, then syncs the parent of
// every directory it created, so that their entries survive a crash
// before the files written into them.
func MkdirAll(fs vfs.FS, dir string) error {
	var created []string
	for d := dir; ; d = fs.PathDir(d) {
		if _, err := fs.Stat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		created = append(created, d)
		if fs.PathDir(d) == d {
			break
		}
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := SyncDir(fs, fs.PathDir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

// SyncDir syncs the directory dir, making the creations, renames and
// removals of its entries durable.
func SyncDir(fs vfs.FS, dir string) error {
	f, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
