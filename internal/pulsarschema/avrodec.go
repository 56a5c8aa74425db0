package pulsarschema

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// The Avro decoder reads the binary encoding (zig-zag varints, length-
// prefixed bytes, blocked arrays and maps) in two passes over the payload
// so that a payload that fails can never leave half a row in the builders:
//
//  1. check walks the schema and the bytes and validates everything: every
//     varint terminates and fits, every length and block count fits in what
//     is left, union and enum indexes are in range, strings are UTF-8,
//     decimals fit 128 bits, nothing trails. It allocates nothing.
//  2. emit walks them again and appends; it cannot fail.
//
// Hostile lengths cannot make it allocate: a length or count is compared
// with the bytes left before anything is sized by it, and items that take
// no bytes (null, an empty record) are bounded per payload by
// maxZeroWidthItems.

// maxZeroWidthItems bounds the array or map items of zero encoded bytes one
// payload may declare (otherwise a few bytes could ask for 2^63 rows).
const maxZeroWidthItems = 1 << 16

type avroDecoder struct {
	fields []*anode // the root record's fields, bound to builders
	src    []byte
	pos    int
	zero   int // zero-width items declared so far
	width  int // fixed bytes per row for the size estimate
}

func newAvroDecoder(root *anode, rb *array.RecordBuilder, skip int) *avroDecoder {
	r := cloneNode(root)
	d := &avroDecoder{fields: r.children}
	for i, f := range r.children {
		bindAvro(f, rb.Field(skip+i))
		d.width += fixedWidth(f.dt)
	}
	return d
}

func bindAvro(n *anode, b array.Builder) {
	n.b = b
	switch n.out {
	case oStruct:
		sb := b.(*array.StructBuilder)
		for i, c := range n.children {
			bindAvro(c, sb.FieldBuilder(i))
		}
	case oUnion:
		sb := b.(*array.StructBuilder)
		k := 0
		for _, c := range n.children {
			if c != nil {
				bindAvro(c, sb.FieldBuilder(k))
				k++
			}
		}
	case oList:
		bindAvro(n.children[0], b.(*array.ListBuilder).ValueBuilder())
	case oMap:
		bindAvro(n.children[0], b.(*array.MapBuilder).ItemBuilder())
	}
}

// fixedWidth estimates the bytes one value of dt takes besides its
// variable-length data.
func fixedWidth(dt arrow.DataType) int {
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		return max(fw.BitWidth()/8, 1)
	}
	if st, ok := dt.(*arrow.StructType); ok {
		w := 0
		for _, f := range st.Fields() {
			w += fixedWidth(f.Type)
		}
		return w
	}
	return 4 // an offset
}

// Append implements Decoder.
func (d *avroDecoder) Append(payload []byte) (int, error) {
	d.src, d.pos, d.zero = payload, 0, 0
	defer func() { d.src = nil }()
	for _, f := range d.fields {
		if err := d.check(f); err != nil {
			return 0, err.prefix(f.name)
		}
	}
	if d.pos != len(d.src) {
		return 0, &DecodeError{Offset: d.pos, Detail: strconv.Itoa(len(d.src)-d.pos) + " bytes after the record"}
	}
	d.pos = 0
	for _, f := range d.fields {
		d.emit(f)
	}
	return len(payload) + d.width, nil
}

func (d *avroDecoder) fail(n *anode, at int, detail string) *DecodeError {
	return &DecodeError{Expected: n.expected(), Offset: at, Detail: detail}
}

func (d *avroDecoder) truncated(n *anode) *DecodeError {
	return d.fail(n, d.pos, "payload ends inside the value")
}

// long reads a zig-zag varint; ok is false when it does not end within the
// payload or within 10 bytes.
func (d *avroDecoder) long() (int64, bool) {
	if d.pos < len(d.src) { // one byte: inlined
		if c := d.src[d.pos]; c < 0x80 {
			d.pos++
			return int64(c>>1) ^ -int64(c&1), true
		}
	}
	return d.longSlow()
}

func (d *avroDecoder) longSlow() (int64, bool) {
	src, pos := d.src, d.pos
	var u uint64
	for s := uint(0); s < 64; s += 7 {
		if pos >= len(src) {
			return 0, false
		}
		c := src[pos]
		pos++
		if s == 63 && c > 1 {
			return 0, false
		}
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			d.pos = pos
			return int64(u>>1) ^ -int64(u&1), true
		}
	}
	return 0, false
}

// length reads a byte length and checks that it fits in what is left.
func (d *avroDecoder) length(n *anode) (int, *DecodeError) {
	at := d.pos
	l, ok := d.long()
	if !ok {
		return 0, d.fail(n, at, "invalid length varint")
	}
	if l < 0 || l > int64(len(d.src)-d.pos) {
		return 0, d.fail(n, at, "length "+strconv.FormatInt(l, 10)+" exceeds the "+strconv.Itoa(len(d.src)-d.pos)+" bytes left")
	}
	return int(l), nil
}

// check validates one value of n (including its union index).
func (d *avroDecoder) check(n *anode) *DecodeError {
	if n.union {
		at := d.pos
		idx, ok := d.long()
		if !ok {
			return d.fail(n, at, "invalid union index varint")
		}
		if n.out == oUnion {
			if idx < 0 || idx >= int64(len(n.children)) {
				return d.fail(n, at, "union index "+strconv.FormatInt(idx, 10)+" out of range")
			}
			if c := n.children[idx]; c != nil {
				if err := d.checkValue(c); err != nil {
					return err.prefix(c.name)
				}
			}
			return nil
		}
		if idx == n.nullIdx {
			return nil
		}
		if idx != n.branch {
			return d.fail(n, at, "union index "+strconv.FormatInt(idx, 10)+" out of range")
		}
	}
	return d.checkValue(n)
}

func (d *avroDecoder) checkValue(n *anode) *DecodeError {
	at := d.pos
	switch n.phys {
	case pNull:
	case pBoolean:
		if d.pos >= len(d.src) {
			return d.truncated(n)
		}
		if d.src[d.pos] > 1 {
			return d.fail(n, at, "boolean byte "+strconv.Itoa(int(d.src[d.pos]))+" is neither 0 nor 1")
		}
		d.pos++
	case pInt:
		v, ok := d.long()
		if !ok {
			return d.fail(n, at, "invalid varint")
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return d.fail(n, at, "int "+strconv.FormatInt(v, 10)+" out of 32-bit range")
		}
	case pLong, pEnum:
		v, ok := d.long()
		if !ok {
			return d.fail(n, at, "invalid varint")
		}
		if n.phys == pEnum && (v < 0 || v >= int64(len(n.symbols))) {
			return d.fail(n, at, "enum index "+strconv.FormatInt(v, 10)+" out of range")
		}
	case pFloat, pDouble:
		w := 4
		if n.phys == pDouble {
			w = 8
		}
		if len(d.src)-d.pos < w {
			return d.truncated(n)
		}
		d.pos += w
	case pBytes, pString:
		l, err := d.length(n)
		if err != nil {
			return err
		}
		b := d.src[d.pos : d.pos+l]
		if n.phys == pString && !utf8.Valid(b) {
			return d.fail(n, at, "string is not valid UTF-8")
		}
		if n.out == oDecimal && !fitsDecimal128(b) {
			return d.fail(n, at, "decimal of "+strconv.Itoa(l)+" bytes does not fit 128 bits")
		}
		d.pos += l
	case pFixed:
		if len(d.src)-d.pos < n.size {
			return d.truncated(n)
		}
		if n.out == oDecimal && !fitsDecimal128(d.src[d.pos:d.pos+n.size]) {
			return d.fail(n, at, "decimal of "+strconv.Itoa(n.size)+" bytes does not fit 128 bits")
		}
		d.pos += n.size
	case pRecord:
		for _, c := range n.children {
			if err := d.check(c); err != nil {
				return err.prefix(c.name)
			}
		}
	case pArray, pMap:
		return d.checkBlocks(n)
	}
	return nil
}

// blockCount reads one block header: the item count, and for a negative
// count the block's byte size, which is checked and skipped over.
func (d *avroDecoder) blockCount(n *anode) (int64, *DecodeError) {
	at := d.pos
	cnt, ok := d.long()
	if !ok {
		return 0, d.fail(n, at, "invalid block count varint")
	}
	if cnt < 0 {
		if cnt == math.MinInt64 {
			return 0, d.fail(n, at, "block count out of range")
		}
		cnt = -cnt
		if _, err := d.length(n); err != nil {
			return 0, err
		}
	}
	return cnt, nil
}

func (d *avroDecoder) checkBlocks(n *anode) *DecodeError {
	item := n.children[0]
	minSize := item.minSize
	if n.phys == pMap {
		minSize++ // the key's length
	}
	idx := 0
	for {
		at := d.pos
		cnt, err := d.blockCount(n)
		if err != nil {
			return err
		}
		if cnt == 0 {
			return nil
		}
		if minSize > 0 {
			if cnt > int64((len(d.src)-d.pos)/minSize) {
				return d.fail(n, at, "block of "+strconv.FormatInt(cnt, 10)+" items exceeds the "+strconv.Itoa(len(d.src)-d.pos)+" bytes left")
			}
		} else if cnt > int64(maxZeroWidthItems-d.zero) {
			return d.fail(n, at, "more than "+strconv.Itoa(maxZeroWidthItems)+" zero-width items in one payload")
		} else {
			d.zero += int(cnt)
		}
		for range cnt {
			if n.phys == pMap {
				kat := d.pos
				l, err := d.length(n)
				if err != nil {
					return err.prefixIndex(-1)
				}
				if !utf8.Valid(d.src[d.pos : d.pos+l]) {
					return d.fail(n, kat, "map key is not valid UTF-8")
				}
				d.pos += l
				if err := d.check(item); err != nil {
					return err.prefixIndex(-1)
				}
			} else if err := d.check(item); err != nil {
				return err.prefixIndex(idx)
			}
			idx++
		}
	}
}

// fitsDecimal128 reports whether the big-endian two's complement b fits 16
// bytes: any bytes before the last 16 are sign extension.
func fitsDecimal128(b []byte) bool {
	if len(b) <= 16 {
		return true
	}
	ext := byte(0)
	if b[len(b)-16]&0x80 != 0 {
		ext = 0xff
	}
	for _, c := range b[:len(b)-16] {
		if c != ext {
			return false
		}
	}
	return true
}

func decimalFromBE(b []byte) decimal128.Num {
	if len(b) > 16 {
		b = b[len(b)-16:]
	}
	var buf [16]byte
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(b):], b)
	return decimal128.New(int64(binary.BigEndian.Uint64(buf[:8])), binary.BigEndian.Uint64(buf[8:]))
}

// mustLong reads a varint that check already validated.
func (d *avroDecoder) mustLong() int64 {
	v, _ := d.long()
	return v
}

// growBy is how many values a builder grows by when full. The hot cases
// check capacity themselves and append unsafely, which skips the Reserve
// call every safe Append makes (BENCHMARKS.md, "Pulsar registry schemas").
const growBy = 256

// appendBytes appends v to b, growing b (and its data) only when full.
func appendBytes(b *array.BinaryBuilder, v []byte) {
	if b.Len() >= b.Cap() {
		b.Reserve(growBy)
	}
	if b.DataCap()-b.DataLen() < len(v) {
		b.ReserveData(max(len(v), b.DataCap()))
	}
	b.UnsafeAppend(v)
}

// emit appends one value of n, already validated by check.
func (d *avroDecoder) emit(n *anode) {
	if n.union {
		idx := d.mustLong()
		if n.out == oUnion {
			c := n.children[idx]
			if c == nil {
				n.b.AppendNull()
				return
			}
			n.b.(*array.StructBuilder).Append(true)
			for _, o := range n.children {
				if o == c {
					d.emitValue(c)
				} else if o != nil {
					o.b.AppendNull()
				}
			}
			return
		}
		if idx == n.nullIdx {
			n.b.AppendNull()
			return
		}
	}
	d.emitValue(n)
}

func (d *avroDecoder) emitValue(n *anode) {
	switch n.out {
	case oNull:
		n.b.AppendNull()
	case oBool:
		b := n.b.(*array.BooleanBuilder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(d.src[d.pos] != 0)
		d.pos++
	case oInt32:
		b := n.b.(*array.Int32Builder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(int32(d.mustLong()))
	case oInt64:
		b := n.b.(*array.Int64Builder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(d.mustLong())
	case oFloat32:
		b := n.b.(*array.Float32Builder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(math.Float32frombits(binary.LittleEndian.Uint32(d.src[d.pos:])))
		d.pos += 4
	case oFloat64:
		b := n.b.(*array.Float64Builder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(math.Float64frombits(binary.LittleEndian.Uint64(d.src[d.pos:])))
		d.pos += 8
	case oBinary:
		l := int(d.mustLong())
		appendBytes(n.b.(*array.BinaryBuilder), d.src[d.pos:d.pos+l])
		d.pos += l
	case oString:
		l := int(d.mustLong())
		appendBytes(n.b.(*array.StringBuilder).BinaryBuilder, d.src[d.pos:d.pos+l])
		d.pos += l
	case oEnum:
		appendBytes(n.b.(*array.StringBuilder).BinaryBuilder, n.symbols[d.mustLong()])
	case oFixed:
		n.b.(*array.FixedSizeBinaryBuilder).Append(d.src[d.pos : d.pos+n.size])
		d.pos += n.size
	case oDate32:
		n.b.(*array.Date32Builder).Append(arrow.Date32(d.mustLong()))
	case oTime32:
		n.b.(*array.Time32Builder).Append(arrow.Time32(d.mustLong()))
	case oTime64:
		n.b.(*array.Time64Builder).Append(arrow.Time64(d.mustLong()))
	case oTimestamp:
		b := n.b.(*array.TimestampBuilder)
		if b.Len() >= b.Cap() {
			b.Reserve(growBy)
		}
		b.UnsafeAppend(arrow.Timestamp(d.mustLong()))
	case oDecimal:
		l := n.size
		if n.phys == pBytes {
			l = int(d.mustLong())
		}
		n.b.(*array.Decimal128Builder).Append(decimalFromBE(d.src[d.pos : d.pos+l]))
		d.pos += l
	case oStruct:
		n.b.(*array.StructBuilder).Append(true)
		for _, c := range n.children {
			d.emit(c)
		}
	case oList:
		n.b.(*array.ListBuilder).Append(true)
		d.emitBlocks(n, nil)
	case oMap:
		mb := n.b.(*array.MapBuilder)
		mb.Append(true)
		d.emitBlocks(n, mb.KeyBuilder().(*array.StringBuilder))
	}
}

func (d *avroDecoder) emitBlocks(n *anode, keys *array.StringBuilder) {
	item := n.children[0]
	for {
		cnt := d.mustLong()
		if cnt == 0 {
			return
		}
		if cnt < 0 {
			cnt = -cnt
			d.mustLong() // the block's byte size
		}
		for range cnt {
			if keys != nil {
				l := int(d.mustLong())
				keys.BinaryBuilder.Append(d.src[d.pos : d.pos+l])
				d.pos += l
			}
			d.emit(item)
		}
	}
}
