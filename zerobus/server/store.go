package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/thalweg/thalweg/internal/atomicfile"
	"github.com/thalweg/thalweg/internal/diskstatus"
)

// tableNameRE is the three-part Unity Catalog name the service accepts:
// catalog.schema.table, each part a plain identifier. It is also what makes
// the name safe to use as a file name.
var tableNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

// tableExt is the suffix of a table's file: one JSON object per line.
const tableExt = ".jsonl"

func validTableName(name string) bool { return tableNameRE.MatchString(name) }

// TablePath is the file that holds the records of table under dir.
func TablePath(dir, table string) string { return filepath.Join(dir, table+tableExt) }

// ReadTable returns the stored records of table, one JSON object each, in
// the order they were written. Only records that were written completely
// are returned: a torn last line (a crash mid-write) is ignored. A table
// that was never written returns no records and no error.
func ReadTable(dir, table string) ([][]byte, error) {
	if !validTableName(table) {
		return nil, fmt.Errorf("zerobus server: invalid table name %q", table)
	}
	data, err := os.ReadFile(TablePath(dir, table))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // torn tail
		}
		out = append(out, data[:i:i])
		data = data[i+1:]
	}
	return out, nil
}

// Tables lists the tables that have a file under dir, sorted.
func Tables(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), tableExt); ok && validTableName(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// store owns the open table files. Records are appended through a buffered
// writer; the sync loop flushes and fsyncs every dirty table and only then
// publishes the new synced sequence number that acknowledgements wait for.
type store struct {
	dir string
	mu  struct {
		sync.Mutex
		tables map[string]*table
	}
}

// newStore opens dir and repairs every table file that ends in a torn
// line (see repairTornTail) before anything is appended to it.
func newStore(dir string, log *slog.Logger) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("zerobus server: data dir: %w", err)
	}
	tables, err := Tables(dir)
	if err != nil {
		return nil, fmt.Errorf("zerobus server: data dir: %w", err)
	}
	for _, name := range tables {
		if err := repairTornTail(dir, name, log); err != nil {
			return nil, fmt.Errorf("zerobus server: table %s: %w", name, err)
		}
	}
	s := &store{dir: dir}
	s.mu.tables = make(map[string]*table)
	return s, nil
}

// QuarantineDir is where, under the data directory, the server keeps the
// torn last lines it moved out of table files.
const QuarantineDir = "quarantine"

// repairTornTail makes a table file end with a complete record. A file
// that does not end in '\n' ends in a record whose write was interrupted (a
// kill, a crash, a full disk): it was never synced, so never acknowledged,
// and appending after it would merge the next record into it. Complete
// lines just before it that are not JSON (the zeros a power loss leaves in
// unsynced blocks) go with it. These bytes are copied durably to
// QuarantineDir/<table>.jsonl.<from>-<to>.torn, then cut from the file, and
// the repair is logged.
func repairTornTail(dir, table string, log *slog.Logger) error {
	path := TablePath(dir, table)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	end, err := lastLineEnd(f, size)
	if err != nil {
		return err
	}
	cut, invalid, err := trailingInvalidLines(f, end)
	if err != nil || cut == size {
		return err
	}
	torn := make([]byte, size-cut)
	if _, err := f.ReadAt(torn, cut); err != nil {
		return err
	}
	qdir := filepath.Join(dir, QuarantineDir)
	name := fmt.Sprintf("%s%s.%d-%d.torn", table, tableExt, cut, size)
	q := filepath.Join(qdir, name)
	err = atomicfile.MkdirAll(vfs.Default, qdir)
	if err == nil {
		err = atomicfile.WriteFile(vfs.Default, qdir, name, torn)
	}
	if err != nil {
		return fmt.Errorf("setting the torn last line aside: %w", err)
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	log.Warn("zerobus server: table file ended in a torn line (an interrupted write, never acknowledged); moved it aside before appending",
		"table", table, "file", path, "from", cut, "bytes", size-cut, "torn_bytes", size-end, "invalid_lines", invalid, "quarantine", q)
	return nil
}

// tailWindow bounds how far back from the end trailingInvalidLines looks.
const tailWindow = 16 << 20

// trailingInvalidLines returns where the run of complete lines just before
// end that are not JSON (a power loss can leave unsynced blocks as zeros,
// ending in a later line's newline) begins, and how many there are. Only
// the last tailWindow bytes are read; a valid line ends the run, so no
// record is ever moved.
func trailingInvalidLines(f *os.File, end int64) (int64, int, error) {
	from := max(0, end-tailWindow)
	buf := make([]byte, end-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		return 0, 0, err
	}
	cut, n := end, 0
	for len(buf) > 0 {
		i := bytes.LastIndexByte(buf[:len(buf)-1], '\n') + 1
		if i == 0 && from > 0 {
			break // the line may start before the window
		}
		line := buf[i : len(buf)-1]
		if json.Valid(line) {
			break
		}
		cut, n = from+int64(i), n+1
		buf = buf[:i]
	}
	return cut, n, nil
}

// lastLineEnd returns the offset just after the file's last '\n' (0 when
// it has none), reading backwards from size.
func lastLineEnd(f *os.File, size int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(0, end-chunk)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

func (s *store) table(name string) (*table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.mu.tables[name]; ok {
		return t, nil
	}
	f, err := os.OpenFile(TablePath(s.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	t := &table{f: f, schemas: newTableSchemas(s.dir, name)}
	t.mu.w = bufio.NewWriterSize(f, 1<<20)
	t.mu.synced = make(chan struct{})
	s.mu.tables[name] = t
	return t, nil
}

// syncAll makes every table durable up to what was appended before the call.
func (s *store) syncAll() error {
	s.mu.Lock()
	tables := slices.Collect(maps.Values(s.mu.tables))
	s.mu.Unlock()
	var errs []error
	for _, t := range tables {
		errs = append(errs, t.sync())
	}
	return errors.Join(errs...)
}

// close syncs and closes every table. The store must not be used afterwards.
func (s *store) close() error {
	err := s.syncAll()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, t := range s.mu.tables {
		err = errors.Join(err, t.f.Close())
		delete(s.mu.tables, name)
	}
	return err
}

// table is one append-only JSON-lines file.
//
// Sequence numbers: every append gets the next seq; syncedSeq is the
// highest seq known to be on stable storage. synced is closed (and
// replaced) every time syncedSeq moves, so waiters need no polling.
type table struct {
	f       *os.File
	schemas *tableSchemas
	mu      struct {
		sync.Mutex
		w         *bufio.Writer
		seq       uint64
		syncedSeq uint64
		synced    chan struct{}
		err       error // sticky write/sync error: the table is unusable
		reported  bool  // sync returned err once already
	}
}

// failLocked makes err the table's sticky failure and wakes the waiters.
// A failed write may have left part of a record in the file; nothing is
// appended after it (that would merge records): the table takes no more
// records until a restart repairs its file.
func (t *table) failLocked(err error) error {
	if t.mu.err == nil {
		t.mu.err = fmt.Errorf("zerobus server: table file %s: %w; the table takes no more records until the server is restarted (the restart moves a torn last line aside)",
			t.f.Name(), err)
		close(t.mu.synced)
		t.mu.synced = make(chan struct{})
	}
	return t.mu.err
}

// append writes lines (each one JSON object without newline) and returns
// the seq that must be synced before they may be acknowledged.
func (t *table) append(lines [][]byte) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.err != nil {
		return 0, t.mu.err
	}
	for _, l := range lines {
		if _, err := t.mu.w.Write(l); err != nil {
			return 0, t.failLocked(err)
		}
		if err := t.mu.w.WriteByte('\n'); err != nil {
			return 0, t.failLocked(err)
		}
	}
	t.mu.seq++
	return t.mu.seq, nil
}

// failed returns the status a new stream on a table whose write or sync
// failed ends with at once (nil while the table works), so that a client
// reconnecting in a loop is refused without a session or a log line per
// attempt: the failure itself was logged once by the sync loop.
func (t *table) failed() error {
	if _, _, err := t.state(); err != nil {
		return diskstatus.Error("table storage", err)
	}
	return nil
}

// state returns the synced seq and a channel closed when it next moves.
func (t *table) state() (uint64, <-chan struct{}, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.syncedSeq, t.mu.synced, t.mu.err
}

// sync flushes and fsyncs what was appended and publishes it. A sticky
// failure is returned by the first sync after it only, so that the sync
// loop reports it once rather than on every tick.
func (t *table) sync() error {
	t.mu.Lock()
	if t.mu.err != nil {
		err := t.mu.err
		if t.mu.reported {
			err = nil
		}
		t.mu.reported = true
		t.mu.Unlock()
		return err
	}
	if t.mu.seq == t.mu.syncedSeq {
		t.mu.Unlock()
		return nil
	}
	seq := t.mu.seq
	err := t.mu.w.Flush()
	t.mu.Unlock()
	if err == nil {
		// Appends that race with the fsync land in the buffer or after the
		// flushed prefix; either way seq is covered.
		err = t.f.Sync()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.mu.reported = true
		return t.failLocked(fmt.Errorf("sync: %w", err))
	}
	t.mu.syncedSeq = seq
	close(t.mu.synced)
	t.mu.synced = make(chan struct{})
	return nil
}
