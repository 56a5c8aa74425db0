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
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/thalweg/thalweg/internal/atomicfile"
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
	return atomicfile.WriteFile(vfs.Default, filepath.Dir(ts.path), filepath.Base(ts.path), body)
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

	pairs []nameKind // scan's result, reused record after record
}

type nameKind struct {
	name []byte // aliases the record
	kind string
}

func (ts *tableSchemas) newJSONChecker(log *slog.Logger, table string) (*jsonChecker, error) {
	k, err := ts.jsonKinds()
	if err != nil {
		return nil, refusal(log, table, "", err)
	}
	return &jsonChecker{ts: ts, log: log, table: table, known: k}, nil
}

// line validates one record and checks its fields in one pass: what
// jsonLine followed by check accept and refuse, with the same errors, but
// the record is parsed once. A record the pass does not take (invalid,
// not an object, anything unusual) goes the two-pass way, which says why.
func (c *jsonChecker) line(rec []byte, field string) ([]byte, error) {
	if !utf8.Valid(rec) || !c.scan(rec) {
		l, err := jsonLine(rec, field)
		if err == nil {
			err = c.check(l, field)
		}
		return l, err
	}
	l := bytes.TrimSpace(rec)
	if bytes.ContainsAny(l, "\n\r") {
		var buf bytes.Buffer
		_ = json.Compact(&buf, l) // valid JSON: cannot fail
		l = buf.Bytes()
	}
	return l, c.merge(field, c.pairs)
}

// scan reports whether rec (valid UTF-8) is exactly one JSON object that
// json.Valid accepts, and leaves its top-level fields, named and kinded as
// topLevel does, in c.pairs. It may refuse what json.Valid accepts (very
// deep nesting, say): the caller then takes the two-pass way, so only its
// "true" must be exact.
func (c *jsonChecker) scan(rec []byte) bool {
	c.pairs = c.pairs[:0]
	i := skipWS(rec, 0)
	if i >= len(rec) || rec[i] != '{' {
		return false
	}
	i = skipWS(rec, i+1)
	if i < len(rec) && rec[i] == '}' {
		return skipWS(rec, i+1) == len(rec)
	}
	for {
		end, ok := scanString(rec, i)
		if !ok {
			return false
		}
		name := rec[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			if json.Unmarshal(rec[i:end], &s) != nil {
				return false
			}
			name = []byte(s)
		}
		i = skipWS(rec, end)
		if i >= len(rec) || rec[i] != ':' {
			return false
		}
		v := skipWS(rec, i+1)
		vend, ok := scanValue(rec, v, 1)
		if !ok {
			return false
		}
		c.pairs = append(c.pairs, nameKind{name: name, kind: valueKind(rec[v:vend])})
		i = skipWS(rec, vend)
		if i >= len(rec) {
			return false
		}
		switch rec[i] {
		case ',':
			i = skipWS(rec, i+1)
		case '}':
			return skipWS(rec, i+1) == len(rec)
		default:
			return false
		}
	}
}

// maxScanDepth bounds scanValue's recursion; deeper records take the
// two-pass way.
const maxScanDepth = 64

// scanValue returns the index after the JSON value at b[i] and whether it
// is valid (RFC 8259).
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxScanDepth {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				end, ok := scanString(b, i)
				if !ok {
					return i, false
				}
				i = skipWS(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipWS(b, i+1)
			}
			end, ok := scanValue(b, i, depth+1)
			if !ok {
				return i, false
			}
			i = skipWS(b, end)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return i + 4, bytes.HasPrefix(b[i:], []byte("true"))
	case c == 'f':
		return i + 5, bytes.HasPrefix(b[i:], []byte("false"))
	case c == 'n':
		return i + 4, bytes.HasPrefix(b[i:], []byte("null"))
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return i, false
}

// scanString returns the index after the JSON string at b[i] and whether
// it is valid: no control characters, only the escapes JSON defines.
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			j++
			if j >= len(b) {
				return j, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return j, false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return j, false
					}
				}
				j += 4
			default:
				return j, false
			}
		}
	}
	return len(b), false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanNumber returns the index after the JSON number at b[i] and whether
// it follows the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(b []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// valueKind is the JSON kind of the valid value v, "" for null and for the
// strings that stand for non-finite floats.
func valueKind(v []byte) string {
	switch v[0] {
	case '"':
		switch string(v) {
		case `"NaN"`, `"Infinity"`, `"-Infinity"`:
			return ""
		}
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return ""
	}
	return "number"
}

// check checks one record (a valid JSON object).
func (c *jsonChecker) check(rec []byte, field string) error {
	c.pairs = c.pairs[:0]
	_ = topLevel(rec, func(name []byte, kind string) error {
		c.pairs = append(c.pairs, nameKind{name: name, kind: kind})
		return nil
	})
	return c.merge(field, c.pairs)
}

// merge compares the fields in pairs with the table's kinds and remembers
// the additions.
func (c *jsonChecker) merge(field string, pairs []nameKind) error {
	var (
		added []schemaevo.Field
		err   error
	)
	for _, p := range pairs {
		if p.kind == "" {
			continue
		}
		if k, ok := c.known[string(p.name)]; !ok {
			added = append(added, schemaevo.Field{Name: string(p.name), Type: p.kind, Nullable: true})
		} else if k != p.kind {
			err = &schemaevo.Error{Field: string(p.name), Change: fmt.Sprintf("type %s -> %s", k, p.kind)}
			break
		}
	}
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
		if err := f(name, valueKind(rec[i:vend])); err != nil {
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
