package receiver

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/thalweg/thalweg/internal/atomicfile"
)

// datasetVersion is the format version written to new DATASET files.
// Version 1 datasets name partitions by ids local to one worker's offset
// store and have no positions; version 2 datasets name them as Pulsar does
// (see package batch), which positions and idempotent append rely on.
const datasetVersion = 2

// MigrateCommand is the command that moves version 1 datasets aside.
const MigrateCommand = "thalweg receiver migrate --dir"

// ErrV1Dataset is wrapped by the error New returns for a directory that
// holds a dataset written before record identity (DATASET version 1).
var ErrV1Dataset = errors.New("receiver: dataset written before record identity (version 1)")

// V1Error is New's error for a version 1 dataset: its partition ids were
// local to one worker's offset store, so its spans cannot be compared with
// anything written now, and it has no positions. It is refused rather than
// mixed with new rows; Migrate moves such datasets aside.
type V1Error struct {
	Dir  string // the dataset's directory
	Root string // Options.Dir
}

func (e *V1Error) Error() string {
	return fmt.Sprintf("dataset %s was written before record identity (DATASET version 1: partition ids local to one offset store, no positions) "+
		"and cannot be appended to or deduplicated; move it aside with `%s %s` (its segment files stay readable Arrow IPC streams) and start again",
		e.Dir, MigrateCommand, e.Root)
}

func (e *V1Error) Unwrap() error { return ErrV1Dataset }

// looksV1 reports whether a dataset directory whose DATASET file is missing
// or unreadable holds version 1 spans: an index frame whose spans name
// their partition by number. A dataset without any span cannot tell, and
// reads the same either way.
func looksV1(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	if err != nil {
		return false
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasSuffix(n, idxExt) {
			continue
		}
		raw, err := readFile(fs, fs.PathJoin(dir, n))
		if err != nil {
			continue
		}
		for off := 0; off+idxHdrLen <= len(raw); {
			l := int(binary.LittleEndian.Uint32(raw[off:]))
			if l > len(raw)-off-idxHdrLen {
				break
			}
			payload := raw[off+idxHdrLen : off+idxHdrLen+l]
			off += idxHdrLen + l
			if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(raw[off-l-4:]) {
				break
			}
			var r struct {
				S []struct {
					P json.RawMessage `json:"partition"`
				} `json:"s"`
			}
			if json.Unmarshal(payload, &r) != nil || len(r.S) == 0 || len(r.S[0].P) == 0 {
				continue
			}
			return r.S[0].P[0] != '"'
		}
	}
	return false
}

// Migrate moves every version 1 dataset of the receiver directory dir
// aside, into dir/v1~<UTC time>/<name>, so that a receiver starts on dir
// again; version 2 datasets stay where they are. The moved files are
// unchanged: every segment is a plain Arrow IPC stream any Arrow reader
// opens (see the package documentation, Storage layout). It takes dir's
// lock, so no receiver may be running on dir. It returns the directory the
// datasets went to ("" when there was none) and their paths, '/'-joined.
//
// A version 1 dataset cannot be converted: its partition ids were numbered
// by one worker's offset store and map to no Pulsar partition. After
// migrating, workers take their positions from the anchor (nothing for
// those partitions) and deliver from their own restored or reset offset
// stores.
func Migrate(dir string) (aside string, moved []string, err error) {
	return migrate(vfs.Default, dir, time.Now())
}

func migrate(fs vfs.FS, dir string, now time.Time) (string, []string, error) {
	lock, err := fs.Lock(fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return "", nil, fmt.Errorf("receiver migrate: locking %s (is a receiver running on it?): %w", dir, err)
	}
	defer lock.Close()
	names, err := fs.List(dir)
	if err != nil {
		return "", nil, fmt.Errorf("receiver migrate: %w", err)
	}
	sort.Strings(names)
	// '~' is outside what dirName produces: the directory can never be
	// taken for a dataset, nor collide with one.
	aside := "v1~" + now.UTC().Format("20060102T150405Z")
	asideDir := fs.PathJoin(dir, aside)
	var moved []string
	for _, name := range names {
		if !isDatasetDir(fs, dir, name) {
			continue
		}
		ddir := fs.PathJoin(dir, name)
		path, version, rerr := readDatasetFile(fs, ddir)
		if rerr == nil && version >= datasetVersion || rerr != nil && !looksV1(fs, ddir) {
			continue
		}
		if len(moved) == 0 {
			if err := atomicfile.MkdirAll(fs, asideDir); err != nil {
				return "", nil, fmt.Errorf("receiver migrate: %w", err)
			}
		}
		if err := fs.Rename(ddir, fs.PathJoin(asideDir, name)); err != nil {
			return "", nil, fmt.Errorf("receiver migrate: moving %s: %w", ddir, err)
		}
		if path == nil {
			path, _ = parseDirName(name)
		}
		moved = append(moved, strings.Join(path, "/"))
	}
	if len(moved) == 0 {
		return "", nil, nil
	}
	for _, d := range []string{asideDir, dir} {
		if err := atomicfile.SyncDir(fs, d); err != nil {
			return "", nil, fmt.Errorf("receiver migrate: %w", err)
		}
	}
	return asideDir, moved, nil
}
