// Package rowjson turns the rows of an Arrow record batch into JSON objects,
// one per row, in the conventions Zerobus JSON streams use for Databricks
// column types:
//
//   - integers and floats as JSON numbers (NaN and ±Inf as the strings
//     "NaN", "Infinity", "-Infinity", which JSON cannot spell as numbers);
//   - TIMESTAMP as integer microseconds since the Unix epoch, DATE as integer
//     days since the epoch;
//   - BINARY as base64 strings; strings with invalid UTF-8 have the bad bytes
//     replaced by U+FFFD;
//   - lists as arrays, maps as objects (keys rendered as strings), structs as
//     objects; a null value as JSON null.
//
// Other types (decimals, intervals, ...) fall back to arrow's own JSON
// rendering of the value; decimals become exact decimal strings.
//
// It is shared by the sink (encoding outgoing records) and the test server
// (storing Flight rows as JSON lines) so both sides agree on one rendering.
package rowjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// appendFn appends the JSON value of element i of one array.
type appendFn func(dst []byte, i int) []byte

// Rows renders the rows of one record batch. It holds the batch's columns
// without retaining them: use it only while the caller keeps the batch alive.
// A Rows is not safe for concurrent use.
type Rows struct {
	keys [][]byte // `"name":` per column, pre-escaped; the first without a comma
	cols []appendFn
	n    int
}

// New prepares rec for rendering. It fails, naming the column, only for
// types it cannot render at all.
func New(rec arrow.RecordBatch) (*Rows, error) {
	sc := rec.Schema()
	r := &Rows{n: int(rec.NumRows())}
	for i, f := range sc.Fields() {
		fn, err := compile(rec.Column(i))
		if err != nil {
			return nil, fmt.Errorf("rowjson: column %q: %w", f.Name, err)
		}
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = AppendString(k, f.Name)
		k = append(k, ':')
		r.keys = append(r.keys, k)
		r.cols = append(r.cols, fn)
	}
	return r, nil
}

// NumRows is the number of rows of the batch.
func (r *Rows) NumRows() int { return r.n }

// AppendRow appends row i as one JSON object (no trailing newline).
func (r *Rows) AppendRow(dst []byte, i int) []byte {
	dst = append(dst, '{')
	for c, fn := range r.cols {
		dst = append(dst, r.keys[c]...)
		dst = fn(dst, i)
	}
	return append(dst, '}')
}

func withNulls(arr arrow.Array, fn appendFn) appendFn {
	if arr.NullN() == 0 {
		return fn
	}
	return func(dst []byte, i int) []byte {
		if arr.IsNull(i) {
			return append(dst, "null"...)
		}
		return fn(dst, i)
	}
}

func compile(arr arrow.Array) (appendFn, error) {
	var fn appendFn
	switch a := arr.(type) {
	case *array.Null:
		return func(dst []byte, _ int) []byte { return append(dst, "null"...) }, nil
	case *array.Boolean:
		fn = func(dst []byte, i int) []byte { return strconv.AppendBool(dst, a.Value(i)) }
	case *array.Int8:
		fn = func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }
	case *array.Int16:
		fn = func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }
	case *array.Int32:
		fn = func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }
	case *array.Int64:
		fn = func(dst []byte, i int) []byte { return strconv.AppendInt(dst, a.Value(i), 10) }
	case *array.Uint8:
		fn = func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(a.Value(i)), 10) }
	case *array.Uint16:
		fn = func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(a.Value(i)), 10) }
	case *array.Uint32:
		fn = func(dst []byte, i int) []byte { return strconv.AppendUint(dst, uint64(a.Value(i)), 10) }
	case *array.Uint64:
		fn = func(dst []byte, i int) []byte { return strconv.AppendUint(dst, a.Value(i), 10) }
	case *array.Float32:
		fn = func(dst []byte, i int) []byte { return AppendFloat(dst, float64(a.Value(i)), 32) }
	case *array.Float64:
		fn = func(dst []byte, i int) []byte { return AppendFloat(dst, a.Value(i), 64) }
	case *array.String:
		fn = func(dst []byte, i int) []byte { return AppendString(dst, a.Value(i)) }
	case *array.LargeString:
		fn = func(dst []byte, i int) []byte { return AppendString(dst, a.Value(i)) }
	case *array.StringView:
		fn = func(dst []byte, i int) []byte { return AppendString(dst, a.Value(i)) }
	case *array.Binary:
		fn = func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.LargeBinary:
		fn = func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.BinaryView:
		fn = func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.FixedSizeBinary:
		fn = func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }
	case *array.Timestamp:
		div, mul := microsScale(a.DataType().(*arrow.TimestampType).Unit)
		fn = func(dst []byte, i int) []byte {
			return strconv.AppendInt(dst, int64(a.Value(i))*mul/div, 10)
		}
	case *array.Date32:
		fn = func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }
	case *array.Date64:
		fn = func(dst []byte, i int) []byte {
			return strconv.AppendInt(dst, int64(a.Value(i))/86_400_000, 10)
		}
	case *array.Map:
		kf, err := compile(a.Keys())
		if err != nil {
			return nil, fmt.Errorf("map keys: %w", err)
		}
		vf, err := compile(a.Items())
		if err != nil {
			return nil, fmt.Errorf("map items: %w", err)
		}
		_, keyIsString := a.Keys().(*array.String)
		fn = func(dst []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			dst = append(dst, '{')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ',')
				}
				if keyIsString {
					dst = kf(dst, int(j))
				} else {
					// JSON object keys are strings: quote the rendered key.
					dst = AppendString(dst, string(kf(nil, int(j))))
				}
				dst = append(dst, ':')
				dst = vf(dst, int(j))
			}
			return append(dst, '}')
		}
	case array.ListLike:
		ef, err := compile(a.ListValues())
		if err != nil {
			return nil, fmt.Errorf("list values: %w", err)
		}
		fn = func(dst []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			dst = append(dst, '[')
			for j := start; j < end; j++ {
				if j > start {
					dst = append(dst, ',')
				}
				dst = ef(dst, int(j))
			}
			return append(dst, ']')
		}
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		keys := make([][]byte, a.NumField())
		fns := make([]appendFn, a.NumField())
		for f := range fns {
			var err error
			if fns[f], err = compile(a.Field(f)); err != nil {
				return nil, fmt.Errorf("struct field %q: %w", st.Field(f).Name, err)
			}
			if f > 0 {
				keys[f] = append(keys[f], ',')
			}
			keys[f] = append(AppendString(keys[f], st.Field(f).Name), ':')
		}
		fn = func(dst []byte, i int) []byte {
			dst = append(dst, '{')
			for f, ff := range fns {
				dst = append(dst, keys[f]...)
				dst = ff(dst, i)
			}
			return append(dst, '}')
		}
	default:
		fn = func(dst []byte, i int) []byte {
			b, err := json.Marshal(arr.GetOneForMarshal(i))
			if err != nil {
				return append(dst, "null"...)
			}
			return append(dst, b...)
		}
	}
	return withNulls(arr, fn), nil
}

// microsScale returns div and mul such that v*mul/div converts a value of
// unit u to microseconds.
func microsScale(u arrow.TimeUnit) (div, mul int64) {
	switch u {
	case arrow.Second:
		return 1, 1_000_000
	case arrow.Millisecond:
		return 1, 1_000
	case arrow.Nanosecond:
		return 1_000, 1
	default:
		return 1, 1
	}
}

// AppendFloat appends f as a JSON number of the given bit size; NaN and
// the infinities, which JSON cannot express, become the strings "NaN",
// "Infinity" and "-Infinity".
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// safe[c] is true for ASCII bytes that need no escaping inside a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string literal.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
