package pulsarschema

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The protobuf decoder reads the wire format with protowire, by field
// number, in two passes like the Avro one: check validates the whole
// message (tags, wire types against the schema, lengths, UTF-8, Timestamp
// ranges; unknown fields are skipped), then emit appends in schema order
// and cannot fail. Message fields may come in any order and repeat: a
// singular field takes its last occurrence (protobuf merges repeated
// occurrences of a singular message field; this decoder takes the last
// one), repeated fields take every occurrence, packed or not.

type protoDecoder struct {
	root  *pmsg
	src   []byte
	last  []int // per open message: the offset of each singular field's last value, -1 if absent
	width int
}

func newProtoDecoder(root *pmsg, rb *array.RecordBuilder, skip int) *protoDecoder {
	r := root.clone()
	d := &protoDecoder{root: r}
	for i, f := range r.fields {
		bindProto(f, rb.Field(skip+i))
		d.width += fixedWidth(f.dt)
	}
	return d
}

func bindProto(f *pfield, b array.Builder) {
	switch {
	case f.list:
		f.lb = b
		bindProto(f.val, b.(*array.ListBuilder).ValueBuilder())
	case f.isMap:
		f.lb = b
		mb := b.(*array.MapBuilder)
		bindProto(f.key, mb.KeyBuilder())
		bindProto(f.val, mb.ItemBuilder())
		f.entry = &pmsg{fields: []*pfield{f.key, f.val}, byNum: map[protowire.Number]int{1: 0, 2: 1}}
	default:
		f.b = b
		if f.wrapper {
			inner := *f
			inner.wrapper = false
			inner.name = "value"
			f.inner = &inner
			f.innerMsg = &pmsg{fields: []*pfield{f.inner}, byNum: map[protowire.Number]int{1: 0}}
		}
		if f.msg != nil {
			sb := b.(*array.StructBuilder)
			for i, c := range f.msg.fields {
				bindProto(c, sb.FieldBuilder(i))
			}
		}
	}
}

// Append implements Decoder.
func (d *protoDecoder) Append(payload []byte) (int, error) {
	d.src = payload
	defer func() { d.src = nil }()
	if err := d.checkMsg(d.root, 0, len(payload)); err != nil {
		return 0, err
	}
	d.emitFields(d.root, 0, len(payload))
	return len(payload) + d.width, nil
}

func (d *protoDecoder) fail(f *pfield, at int, detail string) *DecodeError {
	e := &DecodeError{Offset: at, Detail: detail}
	if f != nil {
		e.Expected = strconv.Quote(f.dt.String())
	}
	return e
}

// checkMsg validates the message in src[start:end].
func (d *protoDecoder) checkMsg(m *pmsg, start, end int) *DecodeError {
	b := d.src[:end]
	pos := start
	for pos < end {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return d.fail(nil, pos, "invalid tag: "+protowire.ParseError(n).Error())
		}
		at := pos
		pos += n
		i, known := m.byNum[num]
		if !known {
			n = protowire.ConsumeFieldValue(num, typ, b[pos:])
			if n < 0 {
				return d.fail(nil, pos, "unknown field "+strconv.Itoa(int(num))+": "+protowire.ParseError(n).Error())
			}
			pos += n
			continue
		}
		f := m.fields[i]
		var err *DecodeError
		pos, err = d.checkField(f, typ, at, pos)
		if err != nil {
			return err.prefix(f.name)
		}
	}
	return nil
}

// checkField validates one occurrence of f whose value starts at pos with
// wire type typ, and returns the offset after it.
func (d *protoDecoder) checkField(f *pfield, typ protowire.Type, at, pos int) (int, *DecodeError) {
	b := d.src
	switch {
	case f.isMap:
		if typ != protowire.BytesType {
			return 0, d.fail(f, at, "wire type "+strconv.Itoa(int(typ))+" for a map entry")
		}
		v, n := protowire.ConsumeBytes(b[pos:])
		if n < 0 {
			return 0, d.fail(f, pos, "map entry: "+protowire.ParseError(n).Error())
		}
		start := pos + n - len(v)
		if err := d.checkMsg(f.entry, start, pos+n); err != nil {
			return 0, err.prefixIndex(-1)
		}
		return pos + n, nil
	case f.list && typ == protowire.BytesType && wireType(f.kind) != protowire.BytesType:
		v, n := protowire.ConsumeBytes(b[pos:])
		if n < 0 {
			return 0, d.fail(f, pos, "packed: "+protowire.ParseError(n).Error())
		}
		p, end := pos+n-len(v), pos+n
		for p < end {
			q, err := d.checkScalar(f.val, wireType(f.kind), p, end)
			if err != nil {
				return 0, err
			}
			p = q
		}
		return end, nil
	case f.list:
		return d.checkValue(f.val, typ, at, pos)
	}
	return d.checkValue(f, typ, at, pos)
}

// checkValue validates one value of a non-repeated f.
func (d *protoDecoder) checkValue(f *pfield, typ protowire.Type, at, pos int) (int, *DecodeError) {
	want := wireType(f.kind)
	if f.wrapper || f.out == pTimestamp || f.out == pMsg {
		want = protowire.BytesType
	}
	if typ != want {
		return 0, d.fail(f, at, "wire type "+strconv.Itoa(int(typ))+", want "+strconv.Itoa(int(want)))
	}
	if want != protowire.BytesType {
		return d.checkScalar(f, typ, pos, len(d.src))
	}
	v, n := protowire.ConsumeBytes(d.src[pos:])
	if n < 0 {
		return 0, d.fail(f, pos, protowire.ParseError(n).Error())
	}
	start, end := pos+n-len(v), pos+n
	switch {
	case f.out == pMsg:
		return end, d.checkMsg(f.msg, start, end)
	case f.out == pTimestamp:
		sec, nanos, err := d.timestamp(start, end)
		if err != nil {
			return 0, err
		}
		if _, ok := tsNanos(sec, nanos); !ok {
			return 0, d.fail(f, start, "timestamp "+strconv.FormatInt(sec, 10)+"s "+strconv.FormatInt(nanos, 10)+"ns out of the nanosecond range (years 1677-2262)")
		}
		return end, nil
	case f.wrapper:
		return end, d.checkMsg(f.innerMsg, start, end)
	case f.out == pStr && !utf8.Valid(v):
		return 0, d.fail(f, start, "string is not valid UTF-8")
	}
	return end, nil
}

func (d *protoDecoder) checkScalar(f *pfield, typ protowire.Type, pos, end int) (int, *DecodeError) {
	n := protowire.ConsumeFieldValue(0, typ, d.src[pos:end])
	if n < 0 {
		return 0, d.fail(f, pos, protowire.ParseError(n).Error())
	}
	return pos + n, nil
}

// timestamp reads google.protobuf.Timestamp's seconds (1) and nanos (2).
func (d *protoDecoder) timestamp(start, end int) (sec, nanos int64, err *DecodeError) {
	b := d.src[:end]
	for pos := start; pos < end; {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return 0, 0, d.fail(nil, pos, "Timestamp: invalid tag")
		}
		pos += n
		if (num == 1 || num == 2) && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b[pos:])
			if n < 0 {
				return 0, 0, d.fail(nil, pos, "Timestamp: invalid varint")
			}
			if num == 1 {
				sec = int64(v)
			} else {
				nanos = int64(int32(v))
			}
			pos += n
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b[pos:])
		if n < 0 {
			return 0, 0, d.fail(nil, pos, "Timestamp: "+protowire.ParseError(n).Error())
		}
		pos += n
	}
	return sec, nanos, nil
}

func tsNanos(sec, nanos int64) (int64, bool) {
	if nanos < 0 || nanos >= nanosPerSecond {
		return 0, false
	}
	return mulAdd(sec, nanosPerSecond, nanos)
}

// emitFields appends the fields of the validated message src[start:end]
// to m's builders, in schema order.
func (d *protoDecoder) emitFields(m *pmsg, start, end int) {
	base := len(d.last)
	for range m.fields {
		d.last = append(d.last, -1)
	}
	for _, f := range m.fields {
		if f.list || f.isMap {
			if f.list {
				f.lb.(*array.ListBuilder).Append(true)
			} else {
				f.lb.(*array.MapBuilder).Append(true)
			}
		}
	}
	b := d.src[:end]
	for pos := start; pos < end; {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		tagAt := pos
		pos += n
		vn := protowire.ConsumeFieldValue(num, typ, b[pos:])
		i, known := m.byNum[num]
		if known {
			f := m.fields[i]
			switch {
			case f.isMap:
				v, _ := protowire.ConsumeBytes(b[pos:])
				s := pos + vn - len(v)
				d.emitEntry(f, s, pos+vn)
			case f.list && typ == protowire.BytesType && wireType(f.kind) != protowire.BytesType:
				v, _ := protowire.ConsumeBytes(b[pos:])
				for p, e := pos+vn-len(v), pos+vn; p < e; {
					p += d.emitScalar(f.val, p)
				}
			case f.list:
				d.emitValue(f.val, pos)
			default:
				d.last[base+i] = tagAt
			}
		}
		pos += vn
	}
	for i, f := range m.fields {
		if f.list || f.isMap {
			continue
		}
		at := d.last[base+i]
		if at < 0 {
			if f.nullable {
				f.b.AppendNull()
			} else {
				d.emitDefault(f)
			}
			continue
		}
		_, _, n := protowire.ConsumeTag(d.src[at:])
		d.emitValue(f, at+n)
	}
	d.last = d.last[:base]
}

// emitEntry appends one map entry src[start:end].
func (d *protoDecoder) emitEntry(f *pfield, start, end int) {
	kAt, vAt := -1, -1
	b := d.src[:end]
	for pos := start; pos < end; {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if num == 1 {
			kAt = pos + n
		} else if num == 2 {
			vAt = pos + n
		}
		pos += n
		pos += protowire.ConsumeFieldValue(num, typ, b[pos:])
	}
	for _, e := range [2]struct {
		f  *pfield
		at int
	}{{f.key, kAt}, {f.val, vAt}} {
		switch {
		case e.at >= 0:
			d.emitValue(e.f, e.at)
		case e.f.nullable:
			e.f.b.AppendNull()
		default:
			d.emitDefault(e.f)
		}
	}
}

// emitValue appends the value of f starting at pos (after its tag).
func (d *protoDecoder) emitValue(f *pfield, pos int) {
	if !(f.wrapper || f.out == pTimestamp || f.out == pMsg) && wireType(f.kind) != protowire.BytesType {
		d.emitScalar(f, pos)
		return
	}
	v, n := protowire.ConsumeBytes(d.src[pos:])
	start, end := pos+n-len(v), pos+n
	switch {
	case f.out == pMsg:
		f.b.(*array.StructBuilder).Append(true)
		d.emitFields(f.msg, start, end)
	case f.out == pTimestamp:
		sec, nanos, _ := d.timestamp(start, end)
		ns, _ := tsNanos(sec, nanos)
		f.b.(*array.TimestampBuilder).Append(arrow.Timestamp(ns))
	case f.wrapper:
		at := -1
		b := d.src[:end]
		for p := start; p < end; {
			num, typ, n := protowire.ConsumeTag(b[p:])
			if num == 1 {
				at = p + n
			}
			p += n
			p += protowire.ConsumeFieldValue(num, typ, b[p:])
		}
		if at < 0 {
			d.emitDefault(f.inner)
		} else {
			d.emitValue(f.inner, at)
		}
	case f.out == pStr:
		f.b.(*array.StringBuilder).BinaryBuilder.Append(v)
	default:
		f.b.(*array.BinaryBuilder).Append(v)
	}
}

// emitScalar appends the varint or fixed-width value at pos and returns its
// length.
func (d *protoDecoder) emitScalar(f *pfield, pos int) int {
	b := d.src[pos:]
	var u uint64
	var n int
	switch wireType(f.kind) {
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		u = uint64(v)
	case protowire.Fixed64Type:
		u, n = protowire.ConsumeFixed64(b)
	default:
		u, n = protowire.ConsumeVarint(b)
	}
	d.appendScalar(f, u)
	return n
}

func (d *protoDecoder) appendScalar(f *pfield, u uint64) {
	switch f.out {
	case pBool:
		f.b.(*array.BooleanBuilder).Append(u != 0)
	case pI32:
		v := int32(u)
		if f.kind == protoreflect.Sint32Kind {
			v = int32(protowire.DecodeZigZag(u & math.MaxUint32))
		}
		f.b.(*array.Int32Builder).Append(v)
	case pI64:
		v := int64(u)
		if f.kind == protoreflect.Sint64Kind {
			v = protowire.DecodeZigZag(u)
		}
		f.b.(*array.Int64Builder).Append(v)
	case pU32:
		f.b.(*array.Uint32Builder).Append(uint32(u))
	case pU64:
		f.b.(*array.Uint64Builder).Append(u)
	case pF32:
		f.b.(*array.Float32Builder).Append(math.Float32frombits(uint32(u)))
	case pF64:
		f.b.(*array.Float64Builder).Append(math.Float64frombits(u))
	case pEnumName:
		name, ok := f.enum[int32(u)]
		if !ok {
			name = strconv.Itoa(int(int32(u)))
		}
		f.b.(*array.StringBuilder).Append(name)
	}
}

// emitDefault appends the proto3 default of an absent field without
// presence.
func (d *protoDecoder) emitDefault(f *pfield) {
	switch f.out {
	case pStr:
		f.b.(*array.StringBuilder).Append("")
	case pBin:
		f.b.(*array.BinaryBuilder).Append([]byte{})
	case pMsg, pTimestamp:
		f.b.AppendNull()
	default:
		d.appendScalar(f, 0)
	}
}
