package batch

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/thalweg/thalweg/internal/fieldpath"
)

// The JSON-typed path decodes a payload in two phases so that a rejected
// record can never leave half a row in the builders:
//
//  1. decode: one pass over the payload, directed by the schema, validates
//     every value and records it on a tape (a flat, reused []tapeEntry).
//     Strings point into the payload, or into a reused scratch buffer when
//     they had escapes or were base64. Nothing is appended to a builder.
//  2. replay: walks the schema in field order and appends the tape to the
//     builders. It cannot fail, so the row lands whole.
//
// JSON objects may list keys in any order, while Arrow wants children in
// schema order. A struct's tape entry therefore points at a frame: one int32
// per child holding the tape position where that child's subtree starts (-1
// when the key was absent → null). Subtrees are contiguous, and a struct
// entry records where its subtree ends, so replay of a list of structs can
// step from one element to the next.
//
// Steady state allocates nothing: tape, frames and scratch are reused, keys
// are matched without conversion, and errors allocate only when a record is
// rejected.

// maxDepth bounds nesting (schema-directed or skipped) so that hostile input
// cannot exhaust the stack.
const maxDepth = 512

type tapeEntry struct {
	u     uint64 // scalar bits; byte offset of a string; frame index of a struct
	n     uint32 // string length; list element count; end of a struct's subtree
	flags uint8
}

const (
	tNull    uint8 = 1 << iota // JSON null (or an absent nullable field)
	tScratch                   // string bytes live in scratch, not in the payload
)

type jsonDecoder struct {
	root    *jnode
	src     []byte
	pos     int
	depth   int
	tape    []tapeEntry
	frames  []int32
	scratch []byte
	// lone is set by str when it replaced an unpaired surrogate escape with
	// U+FFFD; a jBinaryText value clears it first and refuses the string
	// then, since the bytes it stood for have no UTF-8 encoding.
	lone bool
}

// decode runs phase 1 on payload. On success the tape holds one row.
func (d *jsonDecoder) decode(payload []byte) *RejectError {
	d.src, d.pos, d.depth = payload, 0, 0
	d.tape, d.frames, d.scratch = d.tape[:0], d.frames[:0], d.scratch[:0]
	d.skipWS()
	if d.pos >= len(d.src) {
		return d.errSyntax("empty payload")
	}
	if c := d.src[d.pos]; c != '{' {
		if err := d.skip(); err != nil {
			return err
		}
		return &RejectError{Kind: RejectType, Expected: "object", Detail: "found " + foundName(c)}
	}
	if err := d.object(d.root); err != nil {
		return err
	}
	d.skipWS()
	if d.pos != len(d.src) {
		return d.errSyntax("trailing data after the top-level object")
	}
	return nil
}

// release drops references to the caller's payload.
func (d *jsonDecoder) release() { d.src = nil }

func (d *jsonDecoder) errSyntax(detail string) *RejectError {
	return &RejectError{Kind: RejectSyntax, Offset: d.pos, Detail: detail}
}

func (d *jsonDecoder) errValue(kind RejectKind, n *jnode, detail string) *RejectError {
	return &RejectError{Kind: kind, Expected: n.expected, Offset: d.pos, Detail: detail}
}

// mismatch reports the JSON value starting with c where n wanted another type.
func (d *jsonDecoder) mismatch(n *jnode, c byte) *RejectError {
	name := foundName(c)
	if name == "" {
		return d.errSyntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
	return d.errValue(RejectType, n, "found "+name)
}

func foundName(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return ""
}

// prefix prepends a field name to e.Path.
func (e *RejectError) prefix(name string) *RejectError {
	e.Path = fieldpath.Field(name, e.Path)
	return e
}

// prefixIndex prepends a list index to e.Path.
func (e *RejectError) prefixIndex(i int) *RejectError {
	idx := "[" + strconv.Itoa(i) + "]"
	if e.Path == "" || e.Path[0] == '[' {
		e.Path = idx + e.Path
	} else {
		e.Path = idx + "." + e.Path
	}
	return e
}

func (d *jsonDecoder) skipWS() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it, or 0
// at the end of input. The common case, no whitespace, stays inlined.
func (d *jsonDecoder) next() byte {
	if d.pos < len(d.src) {
		if c := d.src[d.pos]; c > ' ' {
			return c
		}
	}
	return d.nextSlow()
}

func (d *jsonDecoder) nextSlow() byte {
	d.skipWS()
	if d.pos >= len(d.src) {
		return 0
	}
	return d.src[d.pos]
}

func (d *jsonDecoder) literal(lit string) *RejectError {
	if len(d.src)-d.pos < len(lit) || string(d.src[d.pos:d.pos+len(lit)]) != lit {
		return d.errSyntax("invalid literal, want " + lit)
	}
	d.pos += len(lit)
	return nil
}

func (d *jsonDecoder) enter() *RejectError {
	d.depth++
	if d.depth > maxDepth {
		return &RejectError{Kind: RejectTooDeep, Offset: d.pos, Detail: "nesting deeper than " + strconv.Itoa(maxDepth)}
	}
	return nil
}

// value decodes one value for n onto the tape.
func (d *jsonDecoder) value(n *jnode) *RejectError {
	c := d.next()
	if c == 0 {
		return d.errSyntax("unexpected end of input")
	}
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		if !n.nullable {
			return d.errValue(RejectNull, n, "null for a non-nullable field")
		}
		d.tape = append(d.tape, tapeEntry{flags: tNull})
		return nil
	}
	switch n.kind {
	case jBool:
		var v uint64
		switch c {
		case 't':
			if err := d.literal("true"); err != nil {
				return err
			}
			v = 1
		case 'f':
			if err := d.literal("false"); err != nil {
				return err
			}
		default:
			return d.mismatch(n, c)
		}
		d.tape = append(d.tape, tapeEntry{u: v})
	case jInt8, jInt16, jInt32, jInt64:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(n, c)
		}
		v, err := d.signed(n)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, tapeEntry{u: uint64(v)})
	case jUint8, jUint16, jUint32, jUint64:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(n, c)
		}
		v, err := d.unsigned(n)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, tapeEntry{u: v})
	case jFloat32, jFloat64:
		if c != '-' && (c < '0' || c > '9') {
			return d.mismatch(n, c)
		}
		start, end, _, err := d.number()
		if err != nil {
			return err
		}
		bits := 64
		if n.kind == jFloat32 {
			bits = 32
		}
		f, perr := strconv.ParseFloat(unsafeString(d.src[start:end]), bits)
		if perr != nil {
			d.pos = start
			return d.errValue(RejectRange, n, "number "+string(d.src[start:end])+" out of range")
		}
		d.tape = append(d.tape, tapeEntry{u: math.Float64bits(f)})
	case jString:
		if c != '"' {
			return d.mismatch(n, c)
		}
		if _, err := d.utf8Entry(n, "string is not valid UTF-8"); err != nil {
			return err
		}
	case jBinary:
		if c != '"' {
			return d.mismatch(n, c)
		}
		start := d.pos
		off, ln, inScratch, err := d.str()
		if err != nil {
			return err
		}
		// Decode after the escaped form (if any) in scratch; scratch may move,
		// so slice it again after append.
		enc := d.strBytes(off, ln, inScratch)
		dst := len(d.scratch)
		out, derr := base64.StdEncoding.AppendDecode(d.scratch, enc)
		if derr != nil {
			d.pos = start
			return d.errValue(RejectRange, n, "invalid base64: "+derr.Error())
		}
		d.scratch = out
		d.tape = append(d.tape, tapeEntry{u: uint64(dst), n: uint32(len(out) - dst), flags: tScratch})
	case jBinaryText:
		if c != '"' {
			return d.mismatch(n, c)
		}
		start := d.pos
		d.lone = false
		off, ln, inScratch, err := d.str()
		if err != nil {
			return err
		}
		if !utf8.Valid(d.strBytes(off, ln, inScratch)) {
			d.pos = start
			return d.errValue(RejectRange, n, "string is not valid UTF-8, so it holds no bytes")
		}
		if d.lone {
			d.pos = start
			return d.errValue(RejectRange, n, "\\u escape of an unpaired surrogate, which has no UTF-8 bytes")
		}
		e := tapeEntry{u: uint64(off), n: uint32(ln)}
		if inScratch {
			e.flags = tScratch
		}
		d.tape = append(d.tape, e)
	case jTimestamp:
		v, err := d.timestamp(n, c)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, tapeEntry{u: uint64(v)})
	case jDate32:
		v, err := d.date(n, c)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, tapeEntry{u: uint64(int64(v))})
	case jStruct:
		if c != '{' {
			return d.mismatch(n, c)
		}
		return d.object(n)
	case jList:
		if c != '[' {
			return d.mismatch(n, c)
		}
		return d.list(n)
	case jMap:
		if c != '{' {
			return d.mismatch(n, c)
		}
		return d.mapObject(n)
	}
	return nil
}

// utf8Entry reads the string at d.pos (which is '"'), checks that it is
// UTF-8 (else a RejectRange for n with detail), records it on the tape and
// returns its bytes.
func (d *jsonDecoder) utf8Entry(n *jnode, detail string) ([]byte, *RejectError) {
	start := d.pos
	off, ln, inScratch, err := d.str()
	if err != nil {
		return nil, err
	}
	b := d.strBytes(off, ln, inScratch)
	if !utf8.Valid(b) {
		d.pos = start
		return nil, d.errValue(RejectRange, n, detail)
	}
	e := tapeEntry{u: uint64(off), n: uint32(ln)}
	if inScratch {
		e.flags = tScratch
	}
	d.tape = append(d.tape, e)
	return b, nil
}

func (d *jsonDecoder) strBytes(off, n int, inScratch bool) []byte {
	if inScratch {
		return d.scratch[off : off+n]
	}
	return d.src[off : off+n]
}

// object decodes the JSON object at d.pos (which is '{') for struct node n.
func (d *jsonDecoder) object(n *jnode) *RejectError {
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++
	entry := len(d.tape)
	d.tape = append(d.tape, tapeEntry{})
	frame := len(d.frames)
	for range n.children {
		d.frames = append(d.frames, -1)
	}
	hint := 0
	if d.next() == '}' {
		d.pos++
	} else {
		for {
			if d.next() != '"' {
				return d.errSyntax("expected a string object key")
			}
			koff, klen, inScratch, err := d.str()
			if err != nil {
				return err
			}
			ci := lookupChild(n.children, d.strBytes(koff, klen, inScratch), &hint)
			if inScratch {
				d.scratch = d.scratch[:koff]
			}
			if err := d.colon(); err != nil {
				return err
			}
			if ci < 0 {
				err = d.skip()
			} else {
				child := n.children[ci]
				d.frames[frame+ci] = int32(len(d.tape))
				if err = d.value(child); err != nil {
					err = err.prefix(child.name)
				}
			}
			if err != nil {
				return err
			}
			done, err := d.more('}')
			if err != nil {
				return err
			}
			if done {
				break
			}
		}
	}
	for i, c := range n.children {
		if d.frames[frame+i] < 0 && !c.nullable {
			return (&RejectError{Kind: RejectMissing, Expected: c.expected, Offset: d.pos,
				Detail: "required field is missing"}).prefix(c.name)
		}
	}
	d.tape[entry] = tapeEntry{u: uint64(frame), n: uint32(len(d.tape))}
	d.depth--
	return nil
}

// lookupChild finds the child named key. Producers usually write keys in
// schema order, so the child after the previous match is tried first.
func lookupChild(children []*jnode, key []byte, hint *int) int {
	if h := *hint; h < len(children) && children[h].name == string(key) {
		*hint = h + 1
		return h
	}
	for i, c := range children {
		if c.name == string(key) {
			*hint = i + 1
			return i
		}
	}
	return -1
}

// list decodes the JSON array at d.pos (which is '[') for list node n.
func (d *jsonDecoder) list(n *jnode) *RejectError {
	elem := n.children[0]
	return d.counted(']', func(i int) *RejectError {
		if err := d.value(elem); err != nil {
			return err.prefixIndex(i)
		}
		return nil
	})
}

// mapObject decodes the JSON object at d.pos (which is '{') for map node n:
// a map entry holding the pair count, then per pair the key (a string
// entry) and the value's subtree.
func (d *jsonDecoder) mapObject(n *jnode) *RejectError {
	val := n.children[0]
	return d.counted('}', func(int) *RejectError {
		if d.next() != '"' {
			return d.errSyntax("expected a string object key")
		}
		key, err := d.utf8Entry(n, "map key is not valid UTF-8")
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		if err := d.value(val); err != nil {
			return err.prefixKey(string(key))
		}
		return nil
	})
}

// counted decodes the array or object at d.pos (which is its opening byte;
// closing is its closing byte) as an entry holding its item count, then
// each item as item writes it (i: the items before it).
func (d *jsonDecoder) counted(closing byte, item func(i int) *RejectError) *RejectError {
	entry := len(d.tape)
	d.tape = append(d.tape, tapeEntry{})
	count, err := d.items(closing, item)
	if err != nil {
		return err
	}
	d.tape[entry].n = uint32(count)
	return nil
}

// items steps over the array or object at d.pos (which is its opening
// byte; closing is its closing byte), each item read by item (i: the items
// before it), and returns how many items there were.
func (d *jsonDecoder) items(closing byte, item func(i int) *RejectError) (int, *RejectError) {
	if err := d.enter(); err != nil {
		return 0, err
	}
	d.pos++
	count := 0
	if d.next() == closing {
		d.pos++
	} else {
		for {
			if err := item(count); err != nil {
				return count, err
			}
			count++
			done, err := d.more(closing)
			if err != nil {
				return count, err
			}
			if done {
				break
			}
		}
	}
	d.depth--
	return count, nil
}

// prefixKey prepends a map key ("{key}") to e.Path.
func (e *RejectError) prefixKey(key string) *RejectError {
	e.Path = fieldpath.Segment("{"+key+"}", e.Path)
	return e
}

// colon steps over the ':' after an object key.
func (d *jsonDecoder) colon() *RejectError {
	if d.next() != ':' {
		return d.errSyntax("expected ':' after object key")
	}
	d.pos++
	return nil
}

// more steps over what follows an item of an object (closing '}') or an
// array (closing ']'): a ',' before the next item, or the closing byte,
// where it reports done.
func (d *jsonDecoder) more(closing byte) (done bool, err *RejectError) {
	c := d.next()
	d.pos++
	switch {
	case c == closing:
		return true, nil
	case c == ',':
		return false, nil
	}
	d.pos--
	if closing == '}' {
		return false, d.errSyntax("expected ',' or '}' in object")
	}
	return false, d.errSyntax("expected ',' or ']' in array")
}

// skip validates and steps over one JSON value of a field the schema does
// not have.
func (d *jsonDecoder) skip() *RejectError {
	switch c := d.next(); c {
	case 0:
		return d.errSyntax("unexpected end of input")
	case '"':
		return d.skipStr()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	case '{':
		_, err := d.items('}', func(int) *RejectError {
			if d.next() != '"' {
				return d.errSyntax("expected a string object key")
			}
			if err := d.skipStr(); err != nil {
				return err
			}
			if err := d.colon(); err != nil {
				return err
			}
			return d.skip()
		})
		return err
	case '[':
		_, err := d.items(']', func(int) *RejectError { return d.skip() })
		return err
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			_, _, _, err := d.number()
			return err
		}
		return d.errSyntax("invalid character " + strconv.QuoteRune(rune(c)) + " looking for a value")
	}
}

// str scans the string at d.pos (which is '"') and returns its unescaped
// content: a span of the payload when it had no escapes, else of scratch.
func (d *jsonDecoder) str() (off, n int, inScratch bool, err *RejectError) {
	src := d.src
	start := d.pos + 1
	i := start
	// Eight bytes at a time while none is '"', '\\' or a control character.
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		if hasZeroByte(w^(swarOnes*'"'))|hasZeroByte(w^(swarOnes*'\\'))|hasByteLess(w, 0x20) != 0 {
			break
		}
	}
	for ; i < len(src); i++ {
		c := src[i]
		if c == '"' {
			d.pos = i + 1
			return start, i - start, false, nil
		}
		if c == '\\' {
			return d.strEscaped(start, i)
		}
		if c < 0x20 {
			d.pos = i
			return 0, 0, false, d.errSyntax("control character in string")
		}
	}
	d.pos = len(src)
	return 0, 0, false, d.errSyntax("unterminated string")
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// hasZeroByte is non-zero iff some byte of x is 0.
func hasZeroByte(x uint64) uint64 { return (x - swarOnes) & ^x & swarHigh }

// hasByteLess is non-zero iff some byte of x is < n (n <= 128).
func hasByteLess(x uint64, n uint64) uint64 { return (x - swarOnes*n) & ^x & swarHigh }

func (d *jsonDecoder) strEscaped(start, i int) (off, n int, inScratch bool, err *RejectError) {
	src := d.src
	off = len(d.scratch)
	d.scratch = append(d.scratch, src[start:i]...)
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return off, len(d.scratch) - off, true, nil
		case c == '\\':
			if i+1 >= len(src) {
				d.pos = i
				return 0, 0, false, d.errSyntax("unterminated string")
			}
			e := src[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				d.scratch = append(d.scratch, e)
			case 'b':
				d.scratch = append(d.scratch, '\b')
			case 'f':
				d.scratch = append(d.scratch, '\f')
			case 'n':
				d.scratch = append(d.scratch, '\n')
			case 'r':
				d.scratch = append(d.scratch, '\r')
			case 't':
				d.scratch = append(d.scratch, '\t')
			case 'u':
				r, ok := hex4(src, i)
				if !ok {
					d.pos = i
					return 0, 0, false, d.errSyntax("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// A valid pair is two \u escapes; anything else decodes
					// to U+FFFD like encoding/json does.
					r2, ok2 := rune(0), false
					if i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' {
						r2, ok2 = hex4(src, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
						d.lone = true
					}
				}
				d.scratch = utf8.AppendRune(d.scratch, r)
			default:
				d.pos = i - 1
				return 0, 0, false, d.errSyntax("invalid escape character " + strconv.QuoteRune(rune(e)))
			}
		case c < 0x20:
			d.pos = i
			return 0, 0, false, d.errSyntax("control character in string")
		default:
			d.scratch = append(d.scratch, c)
			i++
		}
	}
	d.pos = len(src)
	return 0, 0, false, d.errSyntax("unterminated string")
}

// skipStr validates the string at d.pos without unescaping it.
func (d *jsonDecoder) skipStr() *RejectError {
	src := d.src
	for i := d.pos + 1; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c == '\\':
			if i+1 >= len(src) {
				break
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(src, i+2); !ok {
					d.pos = i
					return d.errSyntax("invalid \\u escape")
				}
				i += 5
			default:
				d.pos = i
				return d.errSyntax("invalid escape character")
			}
		case c < 0x20:
			d.pos = i
			return d.errSyntax("control character in string")
		}
	}
	d.pos = len(src)
	return d.errSyntax("unterminated string")
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number validates the JSON number at d.pos, consumes it, and reports
// whether it is written as an integer (no fraction, no exponent).
func (d *jsonDecoder) number() (start, end int, isInt bool, err *RejectError) {
	src := d.src
	start = d.pos
	i := start
	if i < len(src) && src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		for i++; i < len(src) && src[i] >= '0' && src[i] <= '9'; i++ {
		}
	default:
		d.pos = i
		return 0, 0, false, d.errSyntax("invalid number")
	}
	isInt = true
	if i < len(src) && src[i] == '.' {
		isInt = false
		i++
		j := i
		for ; i < len(src) && src[i] >= '0' && src[i] <= '9'; i++ {
		}
		if i == j {
			d.pos = i
			return 0, 0, false, d.errSyntax("invalid number: no digits after '.'")
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		isInt = false
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		j := i
		for ; i < len(src) && src[i] >= '0' && src[i] <= '9'; i++ {
		}
		if i == j {
			d.pos = i
			return 0, 0, false, d.errSyntax("invalid number: no digits in exponent")
		}
	}
	d.pos = i
	return start, i, isInt, nil
}

// integer parses an integer-literal number into magnitude and sign.
func (d *jsonDecoder) integer(n *jnode) (mag uint64, neg bool, err *RejectError) {
	start, end, isInt, err := d.number()
	if err != nil {
		return 0, false, err
	}
	digits := d.src[start:end]
	if !isInt {
		d.pos = start
		return 0, false, d.errValue(RejectType, n, "found non-integer number "+string(digits))
	}
	if digits[0] == '-' {
		neg, digits = true, digits[1:]
	}
	for _, c := range digits {
		dv := uint64(c - '0')
		if mag > (math.MaxUint64-dv)/10 {
			d.pos = start
			return 0, false, d.errValue(RejectRange, n, "number "+string(d.src[start:end])+" out of range")
		}
		mag = mag*10 + dv
	}
	return mag, neg, nil
}

var signedMax = [...]uint64{jInt8: math.MaxInt8, jInt16: math.MaxInt16, jInt32: math.MaxInt32, jInt64: math.MaxInt64}
var unsignedMax = [...]uint64{jUint8: math.MaxUint8, jUint16: math.MaxUint16, jUint32: math.MaxUint32, jUint64: math.MaxUint64}

func (d *jsonDecoder) signed(n *jnode) (int64, *RejectError) {
	start := d.pos
	mag, neg, err := d.integer(n)
	if err != nil {
		return 0, err
	}
	limit := signedMax[n.kind]
	if neg {
		limit++ // the negative side is one larger
	}
	if mag > limit {
		end := d.pos
		d.pos = start
		return 0, d.errValue(RejectRange, n, "number "+string(d.src[start:end])+" out of range")
	}
	if neg {
		return int64(^mag + 1), nil
	}
	return int64(mag), nil
}

func (d *jsonDecoder) unsigned(n *jnode) (uint64, *RejectError) {
	start := d.pos
	mag, neg, err := d.integer(n)
	if err != nil {
		return 0, err
	}
	if (neg && mag != 0) || mag > unsignedMax[n.kind] {
		end := d.pos
		d.pos = start
		return 0, d.errValue(RejectRange, n, "number "+string(d.src[start:end])+" out of range")
	}
	return mag, nil
}

// timestamp decodes an RFC 3339 string or an epoch-milliseconds integer into
// n's unit.
func (d *jsonDecoder) timestamp(n *jnode, c byte) (int64, *RejectError) {
	start := d.pos
	switch {
	case c == '"':
		off, ln, inScratch, err := d.str()
		if err != nil {
			return 0, err
		}
		sec, nsec, ok := parseRFC3339(d.strBytes(off, ln, inScratch))
		if !ok {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "string is not an RFC 3339 timestamp")
		}
		v, ok := secondsToUnit(sec, nsec, n.unit)
		if !ok {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "timestamp out of range for its unit")
		}
		return v, nil
	case c == '-' || (c >= '0' && c <= '9'):
		mag, neg, err := d.integer(n)
		if err != nil {
			return 0, err
		}
		if mag > math.MaxInt64 {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "epoch milliseconds out of range")
		}
		ms := int64(mag)
		if neg {
			ms = -ms
		}
		v, ok := millisToUnit(ms, n.unit)
		if !ok {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "timestamp out of range for its unit")
		}
		return v, nil
	}
	return 0, d.mismatch(n, c)
}

// date decodes "YYYY-MM-DD" or an integer number of days since the epoch.
func (d *jsonDecoder) date(n *jnode, c byte) (int32, *RejectError) {
	start := d.pos
	switch {
	case c == '"':
		off, ln, inScratch, err := d.str()
		if err != nil {
			return 0, err
		}
		b := d.strBytes(off, ln, inScratch)
		if len(b) != 10 || b[4] != '-' || b[7] != '-' {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "string is not a YYYY-MM-DD date")
		}
		y, ok1 := digits(b, 0, 4)
		m, ok2 := digits(b, 5, 2)
		dd, ok3 := digits(b, 8, 2)
		if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || dd < 1 || dd > daysIn(m, y) {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "string is not a valid YYYY-MM-DD date")
		}
		return int32(daysFromCivil(y, m, dd)), nil
	case c == '-' || (c >= '0' && c <= '9'):
		mag, neg, err := d.integer(n)
		if err != nil {
			return 0, err
		}
		if mag > math.MaxInt32 {
			d.pos = start
			return 0, d.errValue(RejectRange, n, "days out of range")
		}
		if neg {
			return -int32(mag), nil
		}
		return int32(mag), nil
	}
	return 0, d.mismatch(n, c)
}

func digits(b []byte, at, n int) (int64, bool) {
	var v int64
	for _, c := range b[at : at+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil converts a proleptic Gregorian date to days since
// 1970-01-01 (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseRFC3339 parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)". Fraction
// digits beyond nanoseconds are accepted and truncated.
func parseRFC3339(b []byte) (sec, nsec int64, ok bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[13] != ':' || b[16] != ':' {
		return 0, 0, false
	}
	if t := b[10]; t != 'T' && t != 't' && t != ' ' {
		return 0, 0, false
	}
	y, ok1 := digits(b, 0, 4)
	mo, ok2 := digits(b, 5, 2)
	dd, ok3 := digits(b, 8, 2)
	hh, ok4 := digits(b, 11, 2)
	mi, ok5 := digits(b, 14, 2)
	ss, ok6 := digits(b, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || dd < 1 || dd > daysIn(mo, y) ||
		hh > 23 || mi > 59 || ss > 59 {
		return 0, 0, false
	}
	i := 19
	if b[i] == '.' {
		i++
		j := i
		scale := int64(100_000_000)
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			nsec += int64(b[i]-'0') * scale
			scale /= 10
		}
		if i == j {
			return 0, 0, false
		}
	}
	if i >= len(b) {
		return 0, 0, false
	}
	var off int64
	switch b[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(b)-i != 6 || b[i+3] != ':' {
			return 0, 0, false
		}
		oh, okh := digits(b, i+1, 2)
		om, okm := digits(b, i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			return 0, 0, false
		}
		off = oh*3600 + om*60
		if b[i] == '-' {
			off = -off
		}
		i += 6
	default:
		return 0, 0, false
	}
	if i != len(b) {
		return 0, 0, false
	}
	sec = daysFromCivil(y, mo, dd)*86400 + hh*3600 + mi*60 + ss - off
	return sec, nsec, true
}

var unitsPerSecond = [...]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}

// secondsToUnit converts sec+nsec (0 <= nsec < 1e9) to unit, truncating
// sub-unit precision (which floors, as nsec is never negative).
func secondsToUnit(sec, nsec int64, unit arrow.TimeUnit) (int64, bool) {
	per := unitsPerSecond[unit]
	v, ok := mulOK(sec, per)
	if !ok {
		return 0, false
	}
	frac := nsec / (1e9 / per)
	if v > math.MaxInt64-frac {
		return 0, false
	}
	return v + frac, true
}

// millisToUnit converts epoch milliseconds to unit, flooring for seconds.
func millisToUnit(ms int64, unit arrow.TimeUnit) (int64, bool) {
	switch unit {
	case arrow.Second:
		s := ms / 1000
		if ms%1000 < 0 {
			s--
		}
		return s, true
	case arrow.Millisecond:
		return ms, true
	case arrow.Microsecond:
		return mulOK(ms, 1e3)
	default:
		return mulOK(ms, 1e6)
	}
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) {
		return 0, false
	}
	return c, true
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// replay runs phase 2: appends the decoded row to the builders and returns
// the estimated bytes it added. It cannot fail.
func (d *jsonDecoder) replay() int {
	root := d.tape[0]
	size := 0
	for i, c := range d.root.children {
		if p := d.frames[int(root.u)+i]; p < 0 {
			c.b.AppendNull()
			size += c.width
		} else {
			_, sz := d.replayNode(c, int(p))
			size += sz
		}
	}
	return size
}

// replayNode appends the subtree at tape[pos] and returns the position after
// it and the bytes added.
func (d *jsonDecoder) replayNode(n *jnode, pos int) (next, size int) {
	e := d.tape[pos]
	if e.flags&tNull != 0 {
		n.b.AppendNull()
		return pos + 1, n.width
	}
	switch n.kind {
	case jBool:
		n.b.(*array.BooleanBuilder).Append(e.u != 0)
	case jInt8:
		n.b.(*array.Int8Builder).Append(int8(e.u))
	case jInt16:
		n.b.(*array.Int16Builder).Append(int16(e.u))
	case jInt32:
		n.b.(*array.Int32Builder).Append(int32(e.u))
	case jInt64:
		n.b.(*array.Int64Builder).Append(int64(e.u))
	case jUint8:
		n.b.(*array.Uint8Builder).Append(uint8(e.u))
	case jUint16:
		n.b.(*array.Uint16Builder).Append(uint16(e.u))
	case jUint32:
		n.b.(*array.Uint32Builder).Append(uint32(e.u))
	case jUint64:
		n.b.(*array.Uint64Builder).Append(e.u)
	case jFloat32:
		n.b.(*array.Float32Builder).Append(float32(math.Float64frombits(e.u)))
	case jFloat64:
		n.b.(*array.Float64Builder).Append(math.Float64frombits(e.u))
	case jString:
		b := d.strBytes(int(e.u), int(e.n), e.flags&tScratch != 0)
		n.b.(*array.StringBuilder).BinaryBuilder.Append(b)
		size = len(b)
	case jBinary:
		b := d.strBytes(int(e.u), int(e.n), true)
		n.b.(*array.BinaryBuilder).Append(b)
		size = len(b)
	case jBinaryText:
		b := d.strBytes(int(e.u), int(e.n), e.flags&tScratch != 0)
		n.b.(*array.BinaryBuilder).Append(b)
		size = len(b)
	case jTimestamp:
		n.b.(*array.TimestampBuilder).Append(arrow.Timestamp(int64(e.u)))
	case jDate32:
		n.b.(*array.Date32Builder).Append(arrow.Date32(int32(e.u)))
	case jStruct:
		n.b.(*array.StructBuilder).Append(true)
		for i, c := range n.children {
			if p := d.frames[int(e.u)+i]; p < 0 {
				c.b.AppendNull()
				size += c.width
			} else {
				_, sz := d.replayNode(c, int(p))
				size += sz
			}
		}
		return int(e.n), size
	case jList:
		n.b.(*array.ListBuilder).Append(true)
		size = n.width
		p := pos + 1
		for range e.n {
			var sz int
			p, sz = d.replayNode(n.children[0], p)
			size += sz
		}
		return p, size
	case jMap:
		mb := n.b.(*array.MapBuilder)
		mb.Append(true)
		keys := mb.KeyBuilder().(*array.StringBuilder)
		size = n.width
		p := pos + 1
		for range e.n {
			k := d.tape[p]
			kb := d.strBytes(int(k.u), int(k.n), k.flags&tScratch != 0)
			keys.BinaryBuilder.Append(kb)
			var sz int
			p, sz = d.replayNode(n.children[0], p+1)
			size += sz + len(kb) + 4
		}
		return p, size
	}
	return pos + 1, size + n.width
}
