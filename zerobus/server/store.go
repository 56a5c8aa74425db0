package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
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

func newStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("zerobus server: data dir: %w", err)
	}
	s := &store{dir: dir}
	s.mu.tables = make(map[string]*table)
	return s, nil
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
	t := &table{f: f}
	t.mu.w = bufio.NewWriterSize(f, 1<<20)
	t.mu.synced = make(chan struct{})
	s.mu.tables[name] = t
	return t, nil
}

// syncAll makes every table durable up to what was appended before the call.
func (s *store) syncAll() error {
	s.mu.Lock()
	tables := make([]*table, 0, len(s.mu.tables))
	for _, t := range s.mu.tables {
		tables = append(tables, t)
	}
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
	f  *os.File
	mu struct {
		sync.Mutex
		w         *bufio.Writer
		seq       uint64
		syncedSeq uint64
		synced    chan struct{}
		err       error // sticky write/sync error: the table is unusable
	}
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
			t.mu.err = err
			return 0, err
		}
		if err := t.mu.w.WriteByte('\n'); err != nil {
			t.mu.err = err
			return 0, err
		}
	}
	t.mu.seq++
	return t.mu.seq, nil
}

// state returns the synced seq and a channel closed when it next moves.
func (t *table) state() (uint64, <-chan struct{}, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.syncedSeq, t.mu.synced, t.mu.err
}

func (t *table) sync() error {
	t.mu.Lock()
	if t.mu.err != nil || t.mu.seq == t.mu.syncedSeq {
		err := t.mu.err
		t.mu.Unlock()
		return err
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
		t.mu.err = fmt.Errorf("zerobus server: sync: %w", err)
		close(t.mu.synced)
		t.mu.synced = make(chan struct{})
		return t.mu.err
	}
	t.mu.syncedSeq = seq
	close(t.mu.synced)
	t.mu.synced = make(chan struct{})
	return nil
}
