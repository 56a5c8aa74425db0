// Package ipcguard checks the flatbuffer header of an Arrow IPC message
// received from an untrusted peer before arrow-go decodes it.
//
// arrow-go trusts the counts a header declares: the schema decoder makes a
// slice of as many fields as the header's vector length says, the record
// batch loader sizes a slice by a declared variadic buffer count, and field
// nesting is followed recursively (a cyclic header recurses until the stack
// is exhausted). A few hundred hostile bytes can therefore end the process
// with a fatal "out of memory" or "stack overflow" that no recover catches.
// CheckMessage walks the header first and rejects it unless every vector
// lies inside the header, nesting and field counts are bounded, declared
// counts are consistent with the vectors they index, and every body buffer
// lies inside the body. Decompressed buffer sizes are not visible here;
// servers bound those with an allocator that refuses large requests.
//
// The layout followed is Arrow's Message.fbs and Schema.fbs (format version
// V4/V5); unknown header types are rejected.
//
// It stays thalweg's own: arrow-go's generated flatbuffer code has no
// verifier, and arrow-go checks none of this before it allocates.
package ipcguard

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Limits of CheckMessage.
const (
	// MaxDepth bounds field nesting (a struct of lists of structs ...).
	MaxDepth = 64
	// MaxFields bounds the total number of fields, nested ones included, of
	// a schema.
	MaxFields = 10000
)

// ErrMalformed is wrapped by every CheckMessage error.
var ErrMalformed = errors.New("malformed Arrow IPC header")

// Message header types (Message.fbs union MessageHeader).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// Type union tags that carry vectors (Schema.fbs union Type).
const (
	typeTimestamp = 10
	typeUnion     = 14
)

type checker struct {
	b       []byte
	bodyLen int64
	fields  int
}

func (c *checker) errf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

func (c *checker) u32(pos int) (uint32, error) {
	if pos < 0 || pos+4 > len(c.b) {
		return 0, c.errf("offset %d outside the %d-byte header", pos, len(c.b))
	}
	return binary.LittleEndian.Uint32(c.b[pos:]), nil
}

// table is a flatbuffer table: its position and its vtable's.
type table struct{ pos, vt, vtLen int }

func (c *checker) table(pos int, what string) (table, error) {
	so, err := c.u32(pos)
	if err != nil {
		return table{}, fmt.Errorf("%s: %w", what, err)
	}
	vt := pos - int(int32(so))
	if vt < 0 || vt+4 > len(c.b) {
		return table{}, c.errf("%s: vtable at %d outside the header", what, vt)
	}
	vtLen := int(binary.LittleEndian.Uint16(c.b[vt:]))
	if vtLen < 4 || vt+vtLen > len(c.b) {
		return table{}, c.errf("%s: vtable length %d does not fit", what, vtLen)
	}
	return table{pos: pos, vt: vt, vtLen: vtLen}, nil
}

// field returns the absolute position of field i, or 0 when absent.
func (c *checker) field(t table, i int) int {
	o := 4 + 2*i
	if o+2 > t.vtLen {
		return 0
	}
	off := int(binary.LittleEndian.Uint16(c.b[t.vt+o:]))
	if off == 0 {
		return 0
	}
	return t.pos + off
}

// deref follows the uoffset stored at field i of t; 0 when absent.
func (c *checker) deref(t table, i int, what string) (int, error) {
	p := c.field(t, i)
	if p == 0 {
		return 0, nil
	}
	o, err := c.u32(p)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	target := p + int(o)
	if target >= len(c.b) || target < 0 {
		return 0, c.errf("%s: points to %d, outside the %d-byte header", what, target, len(c.b))
	}
	return target, nil
}

// vector checks the vector at field i of t whose elements are elem bytes
// and returns its element count and first element's position.
func (c *checker) vector(t table, i, elem int, what string) (n, start int, err error) {
	p, err := c.deref(t, i, what)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	l, err := c.u32(p)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", what, err)
	}
	start = p + 4
	if room := (len(c.b) - start) / elem; int64(l) > int64(room) {
		return 0, 0, c.errf("%s declares %d entries, the header has room for %d", what, l, room)
	}
	return int(l), start, nil
}

func (c *checker) subtable(t table, i int, what string) (table, bool, error) {
	p, err := c.deref(t, i, what)
	if err != nil || p == 0 {
		return table{}, false, err
	}
	st, err := c.table(p, what)
	return st, err == nil, err
}

// tables checks a vector of tables and calls fn on each.
func (c *checker) tables(t table, i int, what string, fn func(table, string) error) error {
	n, start, err := c.vector(t, i, 4, what)
	if err != nil {
		return err
	}
	for k := 0; k < n; k++ {
		p := start + 4*k
		o, _ := c.u32(p)
		name := fmt.Sprintf("%s[%d]", what, k)
		if int(o) <= 0 || p+int(o) >= len(c.b) {
			return c.errf("%s points outside the header", name)
		}
		et, err := c.table(p+int(o), name)
		if err != nil {
			return err
		}
		if err := fn(et, name); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) keyValues(t table, i int, what string) error {
	return c.tables(t, i, what, func(kv table, name string) error {
		if _, _, err := c.vector(kv, 0, 1, name+".key"); err != nil {
			return err
		}
		_, _, err := c.vector(kv, 1, 1, name+".value")
		return err
	})
}

func (c *checker) fieldTable(f table, name string, depth int) error {
	if depth > MaxDepth {
		return c.errf("%s: fields nest deeper than %d", name, MaxDepth)
	}
	if c.fields++; c.fields > MaxFields {
		return c.errf("schema has more than %d fields", MaxFields)
	}
	if _, _, err := c.vector(f, 0, 1, name+".name"); err != nil {
		return err
	}
	if p := c.field(f, 2); p != 0 {
		if p >= len(c.b) {
			return c.errf("%s.type_type outside the header", name)
		}
		typ, ok, err := c.subtable(f, 3, name+".type")
		if err != nil {
			return err
		}
		if ok {
			switch c.b[p] {
			case typeUnion:
				if _, _, err := c.vector(typ, 1, 4, name+".type.typeIds"); err != nil {
					return err
				}
			case typeTimestamp:
				if _, _, err := c.vector(typ, 1, 1, name+".type.timezone"); err != nil {
					return err
				}
			}
		}
	}
	if _, _, err := c.subtable(f, 4, name+".dictionary"); err != nil {
		return err
	}
	if err := c.keyValues(f, 6, name+".custom_metadata"); err != nil {
		return err
	}
	return c.tables(f, 5, name+".children", func(ch table, chName string) error {
		return c.fieldTable(ch, chName, depth+1)
	})
}

func (c *checker) schema(s table) error {
	if err := c.tables(s, 1, "schema.fields", func(f table, name string) error {
		return c.fieldTable(f, name, 1)
	}); err != nil {
		return err
	}
	if err := c.keyValues(s, 2, "schema.custom_metadata"); err != nil {
		return err
	}
	_, _, err := c.vector(s, 3, 8, "schema.features")
	return err
}

func (c *checker) recordBatch(rb table, what string) error {
	if _, _, err := c.vector(rb, 1, 16, what+".nodes"); err != nil {
		return err
	}
	nbuf, start, err := c.vector(rb, 2, 16, what+".buffers")
	if err != nil {
		return err
	}
	for k := 0; k < nbuf; k++ {
		p := start + 16*k
		off := int64(binary.LittleEndian.Uint64(c.b[p:]))
		ln := int64(binary.LittleEndian.Uint64(c.b[p+8:]))
		if off < 0 || ln < 0 || off > c.bodyLen || ln > c.bodyLen-off {
			return c.errf("%s.buffers[%d] (offset %d, length %d) lies outside the %d-byte body", what, k, off, ln, c.bodyLen)
		}
	}
	if _, _, err := c.subtable(rb, 3, what+".compression"); err != nil {
		return err
	}
	nv, vstart, err := c.vector(rb, 4, 8, what+".variadicBufferCounts")
	if err != nil {
		return err
	}
	for k := 0; k < nv; k++ {
		v := int64(binary.LittleEndian.Uint64(c.b[vstart+8*k:]))
		if v < 0 || v > int64(nbuf) {
			return c.errf("%s.variadicBufferCounts[%d] = %d, but the message has %d buffers", what, k, v, nbuf)
		}
	}
	return nil
}

// CheckMessage validates the flatbuffer header of one IPC message (the
// FlightData data_header, without continuation marker or length prefix)
// whose body has bodyLen bytes. It returns nil or an error wrapping
// ErrMalformed that says what is wrong. It never panics and allocates
// nothing proportional to declared counts.
func CheckMessage(header []byte, bodyLen int) error {
	c := &checker{b: header, bodyLen: int64(bodyLen)}
	if len(header) < 8 {
		return c.errf("header is %d bytes, too short for a message", len(header))
	}
	root, err := c.u32(0)
	if err != nil {
		return err
	}
	msg, err := c.table(int(root), "message")
	if err != nil {
		return err
	}
	if err := c.keyValues(msg, 4, "message.custom_metadata"); err != nil {
		return err
	}
	p := c.field(msg, 1)
	if p == 0 || p >= len(header) {
		return c.errf("message.header_type is missing")
	}
	kind := header[p]
	h, ok, err := c.subtable(msg, 2, "message.header")
	if err != nil {
		return err
	}
	if !ok {
		return c.errf("message.header is missing")
	}
	switch kind {
	case headerSchema:
		return c.schema(h)
	case headerRecordBatch:
		return c.recordBatch(h, "record_batch")
	case headerDictionaryBatch:
		rb, ok, err := c.subtable(h, 1, "dictionary_batch.data")
		if err != nil || !ok {
			return err
		}
		return c.recordBatch(rb, "dictionary_batch.data")
	default:
		return c.errf("message.header_type %d is not a schema, dictionary or record batch", kind)
	}
}

// Cost is what one IPC message declares it will take to decode.
type Cost struct {
	// Rows is the record batch's declared length (0 for a schema).
	Rows int64
	// DecodedBytes is the sum over the message's buffers of their decoded
	// size: a compressed buffer's declared uncompressed length, an
	// uncompressed buffer's length.
	DecodedBytes int64
}

// Declared returns the cost a message declares, from its header and body
// alone: nothing is decompressed or allocated. header must have passed
// CheckMessage with len(body). A compressed buffer shorter than its 8-byte
// length prefix, or declaring a negative length other than -1 (stored
// uncompressed), is malformed (ErrMalformed). arrow-go allocates each
// declared uncompressed length before it decompresses, so a server that
// bounds DecodedBytes before decoding bounds what one message can make it
// allocate.
func Declared(header, body []byte) (Cost, error) {
	c := &checker{b: header, bodyLen: int64(len(body))}
	root, err := c.u32(0)
	if err != nil {
		return Cost{}, err
	}
	msg, err := c.table(int(root), "message")
	if err != nil {
		return Cost{}, err
	}
	p := c.field(msg, 1)
	if p == 0 || p >= len(header) {
		return Cost{}, c.errf("message.header_type is missing")
	}
	h, ok, err := c.subtable(msg, 2, "message.header")
	if err != nil || !ok {
		return Cost{}, err
	}
	what := "record_batch"
	switch header[p] {
	case headerSchema:
		return Cost{}, nil
	case headerDictionaryBatch:
		what = "dictionary_batch.data"
		if h, ok, err = c.subtable(h, 1, what); err != nil || !ok {
			return Cost{}, err
		}
	case headerRecordBatch:
	default:
		return Cost{}, c.errf("message.header_type %d is not a schema, dictionary or record batch", header[p])
	}
	var cost Cost
	if lp := c.field(h, 0); lp != 0 {
		if lp+8 > len(header) {
			return Cost{}, c.errf("%s.length outside the header", what)
		}
		cost.Rows = int64(binary.LittleEndian.Uint64(header[lp:]))
		if cost.Rows < 0 {
			return Cost{}, c.errf("%s.length %d is negative", what, cost.Rows)
		}
	}
	_, compressed, err := c.subtable(h, 3, what+".compression")
	if err != nil {
		return Cost{}, err
	}
	nbuf, start, err := c.vector(h, 2, 16, what+".buffers")
	if err != nil {
		return Cost{}, err
	}
	for k := 0; k < nbuf; k++ {
		q := start + 16*k
		off := int64(binary.LittleEndian.Uint64(header[q:]))
		ln := int64(binary.LittleEndian.Uint64(header[q+8:]))
		if off < 0 || ln < 0 || off > c.bodyLen || ln > c.bodyLen-off {
			return Cost{}, c.errf("%s.buffers[%d] (offset %d, length %d) lies outside the %d-byte body", what, k, off, ln, c.bodyLen)
		}
		n := ln
		if compressed && ln > 0 {
			if ln < 8 {
				return Cost{}, c.errf("%s.buffers[%d] is compressed but has %d bytes, fewer than its 8-byte length prefix", what, k, ln)
			}
			switch u := int64(binary.LittleEndian.Uint64(body[off:])); {
			case u == -1:
				n = ln - 8
			case u < 0:
				return Cost{}, c.errf("%s.buffers[%d] declares the uncompressed length %d", what, k, u)
			default:
				n = u
			}
		}
		if cost.DecodedBytes += n; cost.DecodedBytes < 0 {
			return Cost{}, c.errf("%s: decoded buffer sizes overflow", what)
		}
	}
	return cost, nil
}
