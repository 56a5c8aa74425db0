package pulsarschema

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// PrimitiveField names the one column of a primitive schema's rows.
const PrimitiveField = "value"

type primKind uint8

const (
	primBytes primKind = iota + 1
	primString
	primBool
	primInt8
	primInt16
	primInt32
	primInt64
	primFloat
	primDouble
	primDate          // java.util.Date: int64 epoch millis
	primTime          // java.sql.Time: int64 epoch millis, time of day in UTC
	primTimestamp     // java.sql.Timestamp: int64 epoch millis
	primInstant       // int64 epoch seconds + int32 nanos
	primLocalDate     // int64 epoch day
	primLocalTime     // int64 nano of day
	primLocalDateTime // int64 epoch day + int64 nano of day
)

type primDef struct {
	dt   arrow.DataType
	size int // exact payload size; 0: any
}

var primDefs = map[primKind]primDef{
	primBytes:         {arrow.BinaryTypes.Binary, 0},
	primString:        {arrow.BinaryTypes.String, 0},
	primBool:          {arrow.FixedWidthTypes.Boolean, 1},
	primInt8:          {arrow.PrimitiveTypes.Int8, 1},
	primInt16:         {arrow.PrimitiveTypes.Int16, 2},
	primInt32:         {arrow.PrimitiveTypes.Int32, 4},
	primInt64:         {arrow.PrimitiveTypes.Int64, 8},
	primFloat:         {arrow.PrimitiveTypes.Float32, 4},
	primDouble:        {arrow.PrimitiveTypes.Float64, 8},
	primDate:          {&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, 8},
	primTime:          {arrow.FixedWidthTypes.Time32ms, 8},
	primTimestamp:     {&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, 8},
	primInstant:       {&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, 12},
	primLocalDate:     {arrow.FixedWidthTypes.Date32, 8},
	primLocalTime:     {arrow.FixedWidthTypes.Time64ns, 8},
	primLocalDateTime: {&arrow.TimestampType{Unit: arrow.Nanosecond}, 16},
}

var primByType = map[Type]primKind{
	TypeNone: primBytes, TypeBytes: primBytes, TypeString: primString, TypeBoolean: primBool,
	TypeInt8: primInt8, TypeInt16: primInt16, TypeInt32: primInt32, TypeInt64: primInt64,
	TypeFloat: primFloat, TypeDouble: primDouble, TypeDate: primDate, TypeTime: primTime,
	TypeTimestamp: primTimestamp, TypeInstant: primInstant, TypeLocalDate: primLocalDate,
	TypeLocalTime: primLocalTime, TypeLocalDateTime: primLocalDateTime,
}

func compilePrimitive(t Type) (primKind, *arrow.Schema, error) {
	k, ok := primByType[t]
	if !ok {
		return 0, nil, fmt.Errorf("%w: %q", ErrUnsupported, t)
	}
	// The value is never null: Pulsar has no null payload for a primitive.
	s := arrow.NewSchema([]arrow.Field{{Name: PrimitiveField, Type: primDefs[k].dt}}, nil)
	return k, s, nil
}

type primDecoder struct {
	kind primKind
	b    array.Builder
}

func newPrimDecoder(k primKind, b array.Builder) *primDecoder { return &primDecoder{kind: k, b: b} }

const (
	nanosPerDay    = 86_400_000_000_000
	millisPerDay   = 86_400_000
	nanosPerSecond = 1_000_000_000
)

// Append implements Decoder. The encodings are those of the Pulsar clients'
// primitive schemas: fixed-width big-endian integers and IEEE 754 floats,
// UTF-8 strings, raw bytes.
func (d *primDecoder) Append(p []byte) (int, error) {
	def := primDefs[d.kind]
	fail := func(detail string) (int, error) {
		return 0, &DecodeError{Path: PrimitiveField, Expected: def.dt.String(), Detail: detail}
	}
	if def.size > 0 && len(p) != def.size {
		return fail("payload is " + strconv.Itoa(len(p)) + " bytes, want " + strconv.Itoa(def.size))
	}
	be := binary.BigEndian
	switch d.kind {
	case primBytes:
		d.b.(*array.BinaryBuilder).Append(p)
		return len(p) + 4, nil
	case primString:
		if !utf8.Valid(p) {
			return fail("string is not valid UTF-8")
		}
		d.b.(*array.StringBuilder).BinaryBuilder.Append(p)
		return len(p) + 4, nil
	case primBool:
		d.b.(*array.BooleanBuilder).Append(p[0] != 0)
	case primInt8:
		d.b.(*array.Int8Builder).Append(int8(p[0]))
	case primInt16:
		d.b.(*array.Int16Builder).Append(int16(be.Uint16(p)))
	case primInt32:
		d.b.(*array.Int32Builder).Append(int32(be.Uint32(p)))
	case primInt64:
		d.b.(*array.Int64Builder).Append(int64(be.Uint64(p)))
	case primFloat:
		d.b.(*array.Float32Builder).Append(math.Float32frombits(be.Uint32(p)))
	case primDouble:
		d.b.(*array.Float64Builder).Append(math.Float64frombits(be.Uint64(p)))
	case primDate, primTimestamp:
		d.b.(*array.TimestampBuilder).Append(arrow.Timestamp(int64(be.Uint64(p))))
	case primTime:
		ms := int64(be.Uint64(p)) % millisPerDay
		if ms < 0 {
			ms += millisPerDay
		}
		d.b.(*array.Time32Builder).Append(arrow.Time32(ms))
	case primInstant:
		sec, nanos := int64(be.Uint64(p)), int64(int32(be.Uint32(p[8:])))
		if nanos < 0 || nanos >= nanosPerSecond {
			return fail("nanoseconds " + strconv.FormatInt(nanos, 10) + " not in [0, 1e9)")
		}
		v, ok := mulAdd(sec, nanosPerSecond, nanos)
		if !ok {
			return fail("instant out of the nanosecond timestamp range (years 1677-2262)")
		}
		d.b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	case primLocalDate:
		day := int64(be.Uint64(p))
		if day < math.MinInt32 || day > math.MaxInt32 {
			return fail("epoch day " + strconv.FormatInt(day, 10) + " out of date32 range")
		}
		d.b.(*array.Date32Builder).Append(arrow.Date32(day))
	case primLocalTime:
		ns := int64(be.Uint64(p))
		if ns < 0 || ns >= nanosPerDay {
			return fail("nano of day " + strconv.FormatInt(ns, 10) + " not in [0, 86400e9)")
		}
		d.b.(*array.Time64Builder).Append(arrow.Time64(ns))
	case primLocalDateTime:
		day, ns := int64(be.Uint64(p)), int64(be.Uint64(p[8:]))
		if ns < 0 || ns >= nanosPerDay {
			return fail("nano of day " + strconv.FormatInt(ns, 10) + " not in [0, 86400e9)")
		}
		v, ok := mulAdd(day, nanosPerDay, ns)
		if !ok {
			return fail("date-time out of the nanosecond timestamp range (years 1677-2262)")
		}
		d.b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	}
	return def.size, nil
}

// mulAdd returns a*b+c (b > 0, 0 <= c < b) unless it overflows int64.
func mulAdd(a, b, c int64) (int64, bool) {
	if a > (math.MaxInt64-c)/b || a < math.MinInt64/b {
		return 0, false
	}
	return a*b + c, true
}
