package iceberg

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	arrowflight "github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/thalweg/thalweg/internal/schemaevo"
)

// Type mapping (Arrow, as the assembler builds batches, to Iceberg; the
// package documentation has the table): iceberg-go's mapping
// (table.ArrowSchemaToIceberg), except that uint32 becomes long, not int,
// so that every unsigned value keeps its value, and time32 (Avro's
// time-millis, which Iceberg has no type for) becomes time, in
// microseconds. uint64 becomes long and a
// value above 2^63-1 is refused (ErrValueRange): seqs and the unsigned
// fields of registry schemas stay far below it. Rebuild restores the Arrow
// types from PropArrowSchema.

// icebergSchemaOf maps an Arrow schema to the Iceberg schema of its
// columns, with fresh field ids.
func icebergSchemaOf(s *arrow.Schema) (*iceberg.Schema, error) {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		f.Type = widen(f.Type)
		fields[i] = f
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoIcebergType, err)
	}
	return sc, nil
}

var errNoIcebergType = errors.New("a field has no Iceberg type")

// widen replaces uint32 by int64 and time32 by time64[us] at every level
// of dt.
func widen(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.Uint32Type:
		return arrow.PrimitiveTypes.Int64
	case *arrow.Time32Type:
		return arrow.FixedWidthTypes.Time64us
	case *arrow.StructType:
		fs := t.Fields()
		for i := range fs {
			fs[i].Type = widen(fs[i].Type)
		}
		return arrow.StructOf(fs...)
	case *arrow.MapType:
		m := arrow.MapOfFields(withType(t.KeyField(), widen(t.KeyType())), withType(t.ItemField(), widen(t.ItemType())))
		m.KeysSorted = t.KeysSorted
		return m
	case *arrow.ListType:
		return arrow.ListOfField(withType(t.ElemField(), widen(t.Elem())))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(withType(t.ElemField(), widen(t.Elem())))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), withType(t.ElemField(), widen(t.Elem())))
	}
	return dt
}

func withType(f arrow.Field, dt arrow.DataType) arrow.Field { f.Type = dt; return f }

// evolve checks the Iceberg schema next (a batch's) against the table's
// schema cur with the rules every thalweg anchor applies
// (internal/schemaevo), compared on the Arrow schemas iceberg-go derives
// from both. It reports whether the table schema must change to take
// next (a field added, a required field made optional); err is a
// *schemaevo.Error naming the field for an incompatible change.
func evolve(cur, next *iceberg.Schema) (change bool, err error) {
	ca, err := table.SchemaToArrowSchema(cur, nil, false, false)
	if err != nil {
		return false, err
	}
	na, err := table.SchemaToArrowSchema(next, nil, false, false)
	if err != nil {
		return false, err
	}
	old := schemaevo.FromArrow(ca)
	merged, err := schemaevo.MergeArrow(old, na)
	if err != nil {
		return false, err
	}
	return !reflect.DeepEqual(old, merged), nil
}

// plan is how the batches of one Arrow schema are written under one table
// schema: the file schema (the batch's columns, in its order, with the
// table's field ids and types) and a converter per column.
type plan struct {
	src      *arrow.Schema
	iceberg  *iceberg.Schema // the table schema the plan was made from
	file     *arrow.Schema   // with PARQUET:field_id on every field, nested ones too
	conv     []func(context.Context, arrow.Array) (arrow.Array, error)
	identity identity
	props    *parquet.WriterProperties // of the plan's data files (writerProps)
}

func newPlan(src *arrow.Schema, tbl *iceberg.Schema) (*plan, error) {
	p := &plan{src: src, iceberg: tbl, conv: make([]func(context.Context, arrow.Array) (arrow.Array, error), src.NumFields())}
	fields := make([]arrow.Field, src.NumFields())
	for i, f := range src.Fields() {
		tf, ok := tbl.FindFieldByName(f.Name)
		if !ok {
			return nil, fmt.Errorf("field %q is not in the table schema", f.Name)
		}
		dt, err := table.TypeToArrowType(tf.Type, true, false)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		fields[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: !tf.Required,
			Metadata: arrow.NewMetadata([]string{table.ArrowParquetFieldIDKey}, []string{strconv.Itoa(tf.ID)})}
		conv, err := converter(f.Type, dt)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		p.conv[i] = conv
	}
	p.file = arrow.NewSchema(fields, nil)
	p.identity = identityOf(src)
	p.props = writerProps(p.file)
	return p, nil
}

// writerProps are the Parquet properties of the data files of schema sc:
// zstd, as Iceberg writes by default (write.parquet.compression-codec),
// and dictionary encoding only for string columns. A dictionary pays for
// the few distinct values of a topic or a category; for the values a
// record owns alone (a payload, a message id, a seq, a timestamp) it is
// hashed row by row only to be given up when the page fills, which made
// it most of the CPU a batch costs.
func writerProps(sc *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithStats(true), parquet.WithDictionaryDefault(false)}
	var walk func(path []string, fields []arrow.Field)
	walk = func(path []string, fields []arrow.Field) {
		for _, f := range fields {
			p := append(slices.Clip(path), f.Name)
			switch t := f.Type.(type) {
			case *arrow.StringType, *arrow.LargeStringType:
				opts = append(opts, parquet.WithDictionaryPath(parquet.ColumnPath(p), true))
			case *arrow.StructType:
				walk(p, t.Fields())
			}
		}
	}
	walk(nil, sc.Fields())
	return parquet.NewWriterProperties(opts...)
}

// convert returns rec in the file schema. The caller releases the result.
func (p *plan) convert(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := p.conv[i](ctx, rec.Column(i))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", rec.Schema().Field(i).Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(p.file, cols, rec.NumRows()), nil
}

// converter returns the function that turns an array of type from into
// one of type to: the same buffers under the other type when the layouts
// agree (field names, metadata and nullability aside), a checked
// reinterpretation between uint64 and int64, a cast otherwise.
func converter(from, to arrow.DataType) (func(context.Context, arrow.Array) (arrow.Array, error), error) {
	switch {
	case sameLayout(from, to):
		return func(_ context.Context, a arrow.Array) (arrow.Array, error) {
			return retype(a, to), nil
		}, nil
	case from.ID() == arrow.UINT64 && to.ID() == arrow.INT64:
		return func(_ context.Context, a arrow.Array) (arrow.Array, error) {
			for _, v := range a.(*array.Uint64).Uint64Values() {
				if v > math.MaxInt64 {
					return nil, fmt.Errorf("%w: %d does not fit a long", ErrValueRange, v)
				}
			}
			return retype(a, to), nil
		}, nil
	case from.ID() == arrow.INT64 && to.ID() == arrow.UINT64:
		return func(_ context.Context, a arrow.Array) (arrow.Array, error) {
			for _, v := range a.(*array.Int64).Int64Values() {
				if v < 0 {
					return nil, fmt.Errorf("%w: %d is not a uint64", ErrValueRange, v)
				}
			}
			return retype(a, to), nil
		}, nil
	}
	if !compute.CanCast(from, to) {
		return nil, fmt.Errorf("%w: %s cannot be written as %s", errNoIcebergType, from, to)
	}
	return func(ctx context.Context, a arrow.Array) (arrow.Array, error) {
		out, err := compute.CastArray(ctx, a, compute.SafeCastOptions(to))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrValueRange, err)
		}
		if !arrow.TypeEqual(out.DataType(), to, arrow.CheckMetadata()) {
			defer out.Release()
			return retype(out, to), nil
		}
		return out, nil
	}, nil
}

// sameLayout reports whether arrays of a and b have the same buffers and
// children: equal types but for the names, metadata and nullability of
// nested fields.
func sameLayout(a, b arrow.DataType) bool {
	if a.ID() != b.ID() {
		return false
	}
	an, aok := a.(arrow.NestedType)
	bn, bok := b.(arrow.NestedType)
	if !aok || !bok {
		return arrow.TypeEqual(a, b)
	}
	switch at := a.(type) {
	case *arrow.FixedSizeListType:
		if at.Len() != b.(*arrow.FixedSizeListType).Len() {
			return false
		}
	case *arrow.DenseUnionType, *arrow.SparseUnionType:
		return arrow.TypeEqual(a, b)
	}
	af, bf := an.Fields(), bn.Fields()
	if len(af) != len(bf) {
		return false
	}
	for i := range af {
		if !sameLayout(af[i].Type, bf[i].Type) {
			return false
		}
	}
	return true
}

// retype returns a's data under type dt (sameLayout(a.DataType(), dt)).
// The caller releases the result.
func retype(a arrow.Array, dt arrow.DataType) arrow.Array {
	d := retypeData(a.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var children []arrow.ArrayData
	if n, ok := dt.(arrow.NestedType); ok {
		fs := n.Fields()
		children = make([]arrow.ArrayData, len(d.Children()))
		for i, c := range d.Children() {
			children[i] = retypeData(c, fs[i].Type)
		}
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
	}
	return array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}

// restorer converts a scanned record (the table's Arrow schema) back to
// the Arrow schema the batches were written in: columns the rows lack are
// null, unsigned types are restored.
func restore(ctx context.Context, rec arrow.RecordBatch, to *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, to.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range to.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) != 1 {
			cols[i] = array.MakeArrayOfNull(mem, f.Type, int(rec.NumRows()))
			continue
		}
		src := rec.Column(idx[0])
		conv, err := converter(src.DataType(), f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		c, err := conv(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(to, cols, rec.NumRows()), nil
}

func encodeArrowSchema(s *arrow.Schema) string {
	return base64.StdEncoding.EncodeToString(arrowflight.SerializeSchema(s, memory.DefaultAllocator))
}

func decodeArrowSchema(v string) (*arrow.Schema, error) {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("table property %s: %w", PropArrowSchema, err)
	}
	s, err := arrowflight.DeserializeSchema(b, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("table property %s: %w", PropArrowSchema, err)
	}
	return s, nil
}
