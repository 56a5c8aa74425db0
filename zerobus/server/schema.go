package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/thalweg/thalweg/internal/durable"
	"github.com/thalweg/thalweg/internal/schemaevo"
)

// schemaExt is the suffix of a table's schema file (see tableSchemas).
const schemaExt = ".schema.json"

// tableSchemas is what a table remembers of the schemas its streams
// brought, one merged schema per record kind (internal/schemaevo): the
// descriptors of PROTO streams, the Arrow schemas of Flight streams, and
// the JSON kinds of the top-level fields of JSON records. A stream whose
// schema, or a JSON record whose fields, are incompatible with them is
// refused with InvalidArgument naming the field. They are kept in
// <Dir>/<table>.schema.json, rewritten (atomically, synced) when they grow,
// so the rules hold across restarts.
type tableSchemas struct {
	path string
	mu   struct {
		sync.Mutex
		loaded bool
		doc    schemaDoc
	}
}

type schemaDoc struct {
	Version int               `json:"version"`
	Proto   []schemaevo.Field `json:"proto,omitempty"`
	Arrow   []schemaevo.Field `json:"arrow,omitempty"`
	JSON    []schemaevo.Field `json:"json,omitempty"`
}

func newTableSchemas(dir, table string) *tableSchemas {
	return &tableSchemas{path: filepath.Join(dir, table+schemaExt)}
}

// refusal is the status of an incompatible change on table (logged once
// per refused stream, as the client may not show it), or of a failure to
// read or write the table's schema file.
func refusal(log *slog.Logger, table, field string, err error) error {
	if errors.Is(err, schemaevo.ErrIncompatible) {
		log.Warn("zerobus server: stream refused: incompatible schema change", "table", table, "err", err)
		if field != "" {
			return status.Errorf(codes.InvalidArgument, "%s: table %q: %v", field, table, err)
		}
		return status.Errorf(codes.InvalidArgument, "table %q: %v", table, err)
	}
	return status.Errorf(codes.Internal, "table %q schema: %v", table, err)
}

// merge applies schemaevo.Merge to the merged schema pick selects, and
// stores the result when it changed.
func (ts *tableSchemas) merge(pick func(*schemaDoc) *[]schemaevo.Field, next []schemaevo.Field) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.loadLocked(); err != nil {
		return err
	}
	cur := pick(&ts.mu.doc)
	merged, err := schemaevo.Merge(*cur, next)
	if err != nil {
		return err
	}
	if fieldsEqual(*cur, merged) {
		return nil
	}
	old := *cur
	*cur = merged
	if err := ts.saveLocked(); err != nil {
		*cur = old
		return err
	}
	return nil
}

func (ts *tableSchemas) loadLocked() error {
	if ts.mu.loaded {
		return nil
	}
	raw, err := os.ReadFile(ts.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(raw, &ts.mu.doc); err != nil {
			return fmt.Errorf("%s is damaged (%v); move it aside to let the table take the next stream's schema afresh", ts.path, err)
		}
	}
	ts.mu.loaded = true
	return nil
}

func (ts *tableSchemas) saveLocked() error {
	ts.mu.doc.Version = 1
	body, err := json.Marshal(&ts.mu.doc)
	if err != nil {
		return err
	}
	return durable.WriteFile(vfs.Default, filepath.Dir(ts.path), filepath.Base(ts.path), body)
}

func fieldsEqual(a, b []schemaevo.Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type || a[i].Nullable != b[i].Nullable || !fieldsEqual(a[i].Children, b[i].Children) {
			return false
		}
	}
	return true
}

func (ts *tableSchemas) mergeProto(md protoreflect.MessageDescriptor) error {
	return ts.merge(func(d *schemaDoc) *[]schemaevo.Field { return &d.Proto }, schemaevo.FromProto(md))
}

func (ts *tableSchemas) mergeArrow(sc *arrow.Schema) error {
	return ts.merge(func(d *schemaDoc) *[]schemaevo.Field { return &d.Arrow }, schemaevo.FromArrow(sc))
}

// jsonKinds returns the JSON kinds the table knows, by field name.
func (ts *tableSchemas) jsonKinds() (map[string]string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.loadLocked(); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ts.mu.doc.JSON))
	for _, f := range ts.mu.doc.JSON {
		out[f.Name] = f.Type
	}
	return out, nil
}

// jsonChecker checks the top-level fields of one JSON stream's records
// against the table's JSON kinds. A record's field keeps the JSON kind
// (string, number, bool, object, array) the table first saw for it; null,
// and the strings "NaN", "Infinity" and "-Infinity" (how a float that JSON
// cannot spell is written), fit any kind; a new field is an addition
// (nullable: JSON cannot say otherwise) and is remembered. Nested objects
// are not compared. It is used by one receive goroutine.
type jsonChecker struct {
	ts    *tableSchemas
	log   *slog.Logger
	table string
	known map[string]string // the table's kinds as this stream last saw them
}

func (ts *tableSchemas) newJSONChecker(log *slog.Logger, table string) (*jsonChecker, error) {
	k, err := ts.jsonKinds()
	if err != nil {
		return nil, refusal(log, table, "", err)
	}
	return &jsonChecker{ts: ts, log: log, table: table, known: k}, nil
}

// check checks one record (a valid JSON object).
func (c *jsonChecker) check(rec []byte, field string) error {
	var added []schemaevo.Field
	err := topLevel(rec, func(name []byte, kind string) error {
		if kind == "" {
			return nil
		}
		switch k, ok := c.known[string(name)]; {
		case !ok:
			added = append(added, schemaevo.Field{Name: string(name), Type: kind, Nullable: true})
		case k != kind:
			return &schemaevo.Error{Field: string(name), Change: fmt.Sprintf("type %s -> %s", k, kind)}
		}
		return nil
	})
	if err == nil && len(added) > 0 {
		// Merge the additions with every known field (all nullable), so
		// that a field another stream added meanwhile is compared too.
		next := make([]schemaevo.Field, 0, len(c.known)+len(added))
		for n, k := range c.known {
			next = append(next, schemaevo.Field{Name: n, Type: k, Nullable: true})
		}
		next = append(next, added...)
		if err = c.ts.merge(func(d *schemaDoc) *[]schemaevo.Field { return &d.JSON }, next); err == nil {
			c.known, err = c.ts.jsonKinds()
		}
	}
	if err != nil {
		return refusal(c.log, c.table, field, err)
	}
	return nil
}

// topLevel calls f with the name and JSON kind of every top-level field of
// the JSON object rec (valid JSON), kind "" for null and for the strings
// that stand for non-finite floats.
func topLevel(rec []byte, f func(name []byte, kind string) error) error {
	i := skipWS(rec, 0)
	if i >= len(rec) || rec[i] != '{' {
		return nil
	}
	i = skipWS(rec, i+1)
	for i < len(rec) && rec[i] == '"' {
		end := skipString(rec, i)
		name := rec[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(rec[i:end], &s) // valid JSON: an escaped key
			name = []byte(s)
		}
		i = skipWS(rec, end)
		i = skipWS(rec, i+1) // ':'
		if i >= len(rec) {
			return nil
		}
		vend := skipValue(rec, i)
		var kind string
		switch c := rec[i]; {
		case c == '"':
			switch string(rec[i:vend]) {
			case `"NaN"`, `"Infinity"`, `"-Infinity"`:
			default:
				kind = "string"
			}
		case c == '{':
			kind = "object"
		case c == '[':
			kind = "array"
		case c == 't' || c == 'f':
			kind = "bool"
		case c == 'n':
		default:
			kind = "number"
		}
		if err := f(name, kind); err != nil {
			return err
		}
		i = skipWS(rec, vend)
		if i < len(rec) && rec[i] == ',' {
			i = skipWS(rec, i+1)
		}
	}
	return nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		return j
	}
}
