package pulsarschema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// avroPhys is how a value is encoded in Avro's binary form.
type avroPhys uint8

const (
	pNull avroPhys = iota + 1
	pBoolean
	pInt
	pLong
	pFloat
	pDouble
	pBytes
	pString
	pRecord
	pEnum
	pArray
	pMap
	pFixed
)

// avroOut is what the decoder appends (the Arrow side of the mapping).
type avroOut uint8

const (
	oNull avroOut = iota + 1
	oBool
	oInt32
	oInt64
	oFloat32
	oFloat64
	oBinary
	oString
	oStruct
	oEnum // int index -> utf8 symbol
	oList
	oMap
	oFixed     // fixed_size_binary
	oDate32    // int days
	oTime32    // int millis
	oTime64    // long micros
	oTimestamp // long, unit in the type
	oDecimal   // bytes or fixed, two's-complement big-endian
	oUnion     // several non-null branches -> struct of nullable children
)

// anode is one node of a compiled Avro schema. The tree mirrors the Arrow
// schema; a Decoder binds a copy of it to its builders.
type anode struct {
	name     string // field name (path segment)
	phys     avroPhys
	out      avroOut
	dt       arrow.DataType
	nullable bool // the Arrow field is nullable
	// union: the node is an Avro union. nullIdx is the branch index of
	// "null" (-1: none); for oUnion children[i] is branch i (nil for null).
	union   bool
	nullIdx int64
	branch  int64 // the one non-null branch of a nullable union
	// children: record fields; array items [0]; map values [0]; union branches.
	children []*anode
	symbols  [][]byte      // enum
	size     int           // fixed size
	minSize  int           // fewest bytes one value can take (hostile counts)
	b        array.Builder // bound by a Decoder; nil in a Codec's tree
}

// avroCompiler resolves named types while compiling one definition.
type avroCompiler struct {
	named    map[string]*anode // full name -> compiled type
	building map[string]bool   // names being compiled (recursion)
}

// compileAvro parses an Avro record definition into the root node (a record)
// and the Arrow schema of its fields.
func compileAvro(def []byte) (*anode, *arrow.Schema, error) {
	var v any
	if err := json.Unmarshal(def, &v); err != nil {
		return nil, nil, fmt.Errorf("%w: Avro definition is not JSON: %w", ErrDefinition, err)
	}
	c := &avroCompiler{named: map[string]*anode{}, building: map[string]bool{}}
	root, err := c.compile(v, "", "")
	if err != nil {
		return nil, nil, err
	}
	if root.phys != pRecord || root.union {
		return nil, nil, fmt.Errorf("%w: the top-level Avro type is %s, want a record", ErrUnmappable, root.dt)
	}
	fields := make([]arrow.Field, len(root.children))
	for i, ch := range root.children {
		fields[i] = arrow.Field{Name: ch.name, Type: ch.dt, Nullable: ch.nullable}
	}
	return root, arrow.NewSchema(fields, nil), nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func pathOrRoot(path string) string {
	if path == "" {
		return "<root>"
	}
	return path
}

func unmappable(path, format string, args ...any) error {
	return fmt.Errorf("%w: field %s: %s", ErrUnmappable, pathOrRoot(path), fmt.Sprintf(format, args...))
}

func badDef(path, format string, args ...any) error {
	return fmt.Errorf("%w: field %s: %s", ErrDefinition, pathOrRoot(path), fmt.Sprintf(format, args...))
}

// fullName resolves an Avro name against the enclosing namespace.
func fullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func primitive(name string) (*anode, bool) {
	n := &anode{}
	switch name {
	case "null":
		n.phys, n.out, n.dt, n.nullable = pNull, oNull, arrow.Null, true
	case "boolean":
		n.phys, n.out, n.dt, n.minSize = pBoolean, oBool, arrow.FixedWidthTypes.Boolean, 1
	case "int":
		n.phys, n.out, n.dt, n.minSize = pInt, oInt32, arrow.PrimitiveTypes.Int32, 1
	case "long":
		n.phys, n.out, n.dt, n.minSize = pLong, oInt64, arrow.PrimitiveTypes.Int64, 1
	case "float":
		n.phys, n.out, n.dt, n.minSize = pFloat, oFloat32, arrow.PrimitiveTypes.Float32, 4
	case "double":
		n.phys, n.out, n.dt, n.minSize = pDouble, oFloat64, arrow.PrimitiveTypes.Float64, 8
	case "bytes":
		n.phys, n.out, n.dt, n.minSize = pBytes, oBinary, arrow.BinaryTypes.Binary, 1
	case "string":
		n.phys, n.out, n.dt, n.minSize = pString, oString, arrow.BinaryTypes.String, 1
	default:
		return nil, false
	}
	return n, true
}

// compile compiles the Avro type v found at path, in namespace ns.
func (c *avroCompiler) compile(v any, path, ns string) (*anode, error) {
	switch t := v.(type) {
	case string:
		if n, ok := primitive(t); ok {
			return n, nil
		}
		full := fullName(t, ns)
		if c.building[full] {
			return nil, unmappable(path, "recursive type %s (Arrow types are finite)", full)
		}
		n, ok := c.named[full]
		if !ok && full != t {
			n, ok = c.named[t] // a name in the null namespace
		}
		if !ok {
			return nil, badDef(path, "unknown type %q", t)
		}
		return cloneNode(n), nil
	case []any:
		return c.union(t, path, ns)
	case map[string]any:
		return c.complex(t, path, ns)
	}
	return nil, badDef(path, "type is %T, want a string, an array or an object", v)
}

func (c *avroCompiler) union(branches []any, path, ns string) (*anode, error) {
	if len(branches) == 0 {
		return nil, badDef(path, "empty union")
	}
	n := &anode{union: true, nullIdx: -1, branch: -1}
	var nonNull []*anode
	var idx []int64
	for i, b := range branches {
		bn, err := c.compile(b, path, ns)
		if err != nil {
			return nil, err
		}
		if bn.union {
			return nil, badDef(path, "union inside a union")
		}
		if bn.phys == pNull {
			if n.nullIdx >= 0 {
				return nil, badDef(path, "union has null twice")
			}
			n.nullIdx = int64(i)
			continue
		}
		nonNull = append(nonNull, bn)
		idx = append(idx, int64(i))
	}
	switch len(nonNull) {
	case 0: // ["null"]
		n.phys, n.out, n.dt, n.nullable = pNull, oNull, arrow.Null, true
		n.branch = n.nullIdx
	case 1:
		b := nonNull[0]
		b.union, b.nullIdx, b.branch = true, n.nullIdx, idx[0]
		b.nullable = n.nullIdx >= 0 || b.nullable
		b.minSize++ // the branch index
		return b, nil
	default:
		// Several non-null branches: a struct with one nullable child per
		// branch, named after the branch's type; exactly one is set.
		n.phys, n.out, n.nullable = pRecord, oUnion, n.nullIdx >= 0
		n.children = make([]*anode, len(branches))
		fields := make([]arrow.Field, 0, len(nonNull))
		seen := map[string]bool{}
		for k, b := range nonNull {
			name := branchName(b)
			if seen[name] {
				return nil, unmappable(path, "union has two branches named %s", name)
			}
			seen[name] = true
			b.name, b.nullable = name, true
			n.children[idx[k]] = b
			fields = append(fields, arrow.Field{Name: name, Type: b.dt, Nullable: true})
		}
		n.dt = arrow.StructOf(fields...)
		n.minSize = 1
	}
	return n, nil
}

// branchName names the struct child of a union branch: the short name of a
// named type, else the Avro type name ("string", "array", "map").
func branchName(b *anode) string {
	if b.name != "" {
		return b.name
	}
	switch b.phys {
	case pBoolean:
		return "boolean"
	case pInt:
		return "int"
	case pLong:
		return "long"
	case pFloat:
		return "float"
	case pDouble:
		return "double"
	case pBytes:
		return "bytes"
	case pString:
		return "string"
	case pArray:
		return "array"
	case pMap:
		return "map"
	}
	return "value"
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func (c *avroCompiler) complex(m map[string]any, path, ns string) (*anode, error) {
	typ, isStr := m["type"].(string)
	if !isStr {
		if m["type"] == nil {
			return nil, badDef(path, "type object without \"type\"")
		}
		return c.compile(m["type"], path, ns) // {"type": {...}} or {"type": [...]}
	}
	switch typ {
	case "record", "error":
		return c.record(m, path, ns)
	case "enum":
		return c.enum(m, path, ns)
	case "fixed":
		return c.fixed(m, path, ns)
	case "array":
		items, err := c.compile(m["items"], path+"[]", ns)
		if err != nil {
			return nil, err
		}
		items.name = "item"
		return &anode{phys: pArray, out: oList, minSize: 1, children: []*anode{items},
			dt: arrow.ListOfField(arrow.Field{Name: "item", Type: items.dt, Nullable: items.nullable})}, nil
	case "map":
		vals, err := c.compile(m["values"], path+"{}", ns)
		if err != nil {
			return nil, err
		}
		vals.name = "value"
		mt := arrow.MapOf(arrow.BinaryTypes.String, vals.dt)
		mt.SetItemNullable(vals.nullable)
		return &anode{phys: pMap, out: oMap, minSize: 1, children: []*anode{vals}, dt: mt}, nil
	}
	n, ok := primitive(typ)
	if !ok {
		return c.compile(typ, path, ns) // {"type": "com.example.Named"}
	}
	return logical(n, m, path)
}

// logical applies a logicalType annotation. As the Avro specification asks,
// an unknown or invalid logical type leaves the underlying type.
func logical(n *anode, m map[string]any, path string) (*anode, error) {
	switch lt := str(m, "logicalType"); {
	case lt == "date" && n.phys == pInt:
		n.out, n.dt = oDate32, arrow.FixedWidthTypes.Date32
	case lt == "time-millis" && n.phys == pInt:
		n.out, n.dt = oTime32, arrow.FixedWidthTypes.Time32ms
	case lt == "time-micros" && n.phys == pLong:
		n.out, n.dt = oTime64, arrow.FixedWidthTypes.Time64us
	case lt == "timestamp-millis" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	case lt == "timestamp-micros" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case lt == "timestamp-nanos" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case lt == "local-timestamp-millis" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Millisecond}
	case lt == "local-timestamp-micros" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Microsecond}
	case lt == "local-timestamp-nanos" && n.phys == pLong:
		n.out, n.dt = oTimestamp, &arrow.TimestampType{Unit: arrow.Nanosecond}
	case lt == "decimal" && (n.phys == pBytes || n.phys == pFixed):
		return decimal(n, m, path)
	}
	// "uuid" on a string stays utf8; anything else keeps the underlying type.
	return n, nil
}

func intProp(m map[string]any, key string) (int, bool) {
	f, ok := m[key].(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

func decimal(n *anode, m map[string]any, path string) (*anode, error) {
	prec, ok := intProp(m, "precision")
	if !ok || prec < 1 {
		return n, nil // invalid: the underlying type, per the specification
	}
	scale, ok := intProp(m, "scale")
	if _, present := m["scale"]; !present {
		scale, ok = 0, true
	}
	if !ok || scale < 0 || scale > prec {
		return n, nil
	}
	if n.phys == pFixed && n.size > 0 && prec > maxDigits(n.size) {
		return n, nil
	}
	if prec > 38 {
		return nil, unmappable(path, "decimal precision %d exceeds decimal128's 38 digits", prec)
	}
	n.out, n.dt = oDecimal, &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}
	return n, nil
}

// maxDigits is the largest precision a size-byte two's complement holds.
func maxDigits(size int) int {
	// floor(log10(2^(8*size-1) - 1))
	return int(float64(8*size-1) * 0.30102999566398120)
}

func (c *avroCompiler) defineName(m map[string]any, path, ns string) (full, short, innerNS string, err error) {
	name := str(m, "name")
	if name == "" {
		return "", "", "", badDef(path, "named type without a name")
	}
	if nsv := str(m, "namespace"); nsv != "" && !strings.Contains(name, ".") {
		ns = nsv
	}
	full = fullName(name, ns)
	if _, dup := c.named[full]; dup || c.building[full] {
		return "", "", "", badDef(path, "type %s defined twice", full)
	}
	short = full[strings.LastIndexByte(full, '.')+1:]
	innerNS = ""
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		innerNS = full[:i]
	}
	return full, short, innerNS, nil
}

func (c *avroCompiler) record(m map[string]any, path, ns string) (*anode, error) {
	full, short, inner, err := c.defineName(m, path, ns)
	if err != nil {
		return nil, err
	}
	fs, ok := m["fields"].([]any)
	if !ok {
		return nil, badDef(path, "record %s has no fields array", full)
	}
	c.building[full] = true
	n := &anode{phys: pRecord, out: oStruct}
	fields := make([]arrow.Field, 0, len(fs))
	seen := map[string]bool{}
	for _, f := range fs {
		fm, ok := f.(map[string]any)
		if !ok {
			return nil, badDef(path, "record %s: a field is not an object", full)
		}
		fname := str(fm, "name")
		if fname == "" {
			return nil, badDef(path, "record %s: a field has no name", full)
		}
		if seen[fname] {
			return nil, badDef(joinPath(path, fname), "record %s has two fields of this name", full)
		}
		seen[fname] = true
		ch, err := c.compile(fm["type"], joinPath(path, fname), inner)
		if err != nil {
			return nil, err
		}
		ch.name = fname
		n.children = append(n.children, ch)
		n.minSize += ch.minSize
		fields = append(fields, arrow.Field{Name: fname, Type: ch.dt, Nullable: ch.nullable})
	}
	delete(c.building, full)
	n.dt = arrow.StructOf(fields...)
	n.name = short
	c.named[full] = n
	return cloneNode(n), nil
}

func (c *avroCompiler) enum(m map[string]any, path, ns string) (*anode, error) {
	full, short, _, err := c.defineName(m, path, ns)
	if err != nil {
		return nil, err
	}
	syms, ok := m["symbols"].([]any)
	if !ok || len(syms) == 0 {
		return nil, badDef(path, "enum %s has no symbols", full)
	}
	n := &anode{phys: pEnum, out: oEnum, dt: arrow.BinaryTypes.String, minSize: 1, name: short}
	for _, s := range syms {
		sym, ok := s.(string)
		if !ok {
			return nil, badDef(path, "enum %s: a symbol is not a string", full)
		}
		n.symbols = append(n.symbols, []byte(sym))
	}
	c.named[full] = n
	return cloneNode(n), nil
}

func (c *avroCompiler) fixed(m map[string]any, path, ns string) (*anode, error) {
	full, short, _, err := c.defineName(m, path, ns)
	if err != nil {
		return nil, err
	}
	size, ok := intProp(m, "size")
	if !ok || size < 1 || size > 1<<20 {
		return nil, badDef(path, "fixed %s: size %v is not in [1, %d]", full, m["size"], 1<<20)
	}
	n := &anode{phys: pFixed, out: oFixed, dt: &arrow.FixedSizeBinaryType{ByteWidth: size}, size: size, minSize: size, name: short}
	c.named[full] = n
	n, err = logical(cloneNode(n), m, path)
	if err != nil {
		return nil, err
	}
	c.named[full] = n
	return cloneNode(n), nil
}

// cloneNode deep-copies n (each use of a named type gets its own builders).
func cloneNode(n *anode) *anode {
	if n == nil {
		return nil
	}
	c := *n
	if n.children != nil {
		c.children = make([]*anode, len(n.children))
		for i, ch := range n.children {
			c.children[i] = cloneNode(ch)
		}
	}
	return &c
}

// expected names the Avro type of n in decode errors.
func (n *anode) expected() string {
	if n.out == oUnion {
		return "union"
	}
	return strconv.Quote(n.dt.String())
}
