package receiver

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// RecoveredPos is one stored position as a restarting server sees it.
type RecoveredPos struct {
	OffsetID   uint64
	Err        error  // the read's error (a DataLoss one for a damaged position)
	Meta, Body []byte // what DoGet would serve
	Segment    string // file name without extension
	From, To   int64  // the position's bytes in its segment
}

// Recover runs the recovery of the dataset at path under dir on fs, as New
// would, reads every position and closes the dataset again.
func Recover(fs vfs.FS, dir string, path []string, log *slog.Logger) ([]RecoveredPos, error) {
	opts := Options{Dir: dir, FS: fs, Logger: log}
	opts.withDefaults()
	name, err := dirName(path)
	if err != nil {
		return nil, err
	}
	d, err := openDataset(fs, dir, name, &opts)
	if err != nil {
		return nil, err
	}
	defer d.close()
	entries, segs, _ := d.snapshot()
	out := make([]RecoveredPos, len(entries))
	for i := range entries {
		e := &entries[i]
		meta, body, _, err := d.readEntry(segs[e.seg], e, nil)
		out[i] = RecoveredPos{OffsetID: e.offset, Err: err, Meta: meta, Body: body,
			Segment: segs[e.seg].name, From: e.pos, To: e.pos + e.frameLen()}
	}
	return out, nil
}

// DirectBytes is how many segment bytes the server's datasets wrote with
// direct writes.
func DirectBytes(s *Server) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, d := range s.mu.datasets {
		n += d.directBytes.Load()
	}
	return n
}

// DirectIOSupported reports whether dir's file system takes direct writes
// (an aligned block written with O_DIRECT), so that a test knows which of
// the segment's two write paths it exercises.
func DirectIOSupported(dir string) bool {
	path := filepath.Join(dir, "direct-probe")
	defer os.Remove(path)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return false
	}
	df, err := openDirect(path)
	if err != nil {
		return false
	}
	defer df.Close()
	block := (*chunks.Get().(*[]byte))[:directAlign]
	defer chunks.Put(&block)
	_, err = df.WriteAt(block, 0)
	return err == nil
}
