package ipcguard

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// FieldNodes returns the number of field nodes a record batch message
// declares: one per field of the schema it was written with, nested fields
// included (see SchemaNodes). header must have passed CheckMessage.
func FieldNodes(header []byte) (int, error) {
	c := &checker{b: header, bodyLen: math.MaxInt64}
	root, err := c.u32(0)
	if err != nil {
		return 0, err
	}
	msg, err := c.table(int(root), "message")
	if err != nil {
		return 0, err
	}
	if p := c.field(msg, 1); p == 0 || p >= len(header) || header[p] != headerRecordBatch {
		return 0, c.errf("not a record batch message")
	}
	h, ok, err := c.subtable(msg, 2, "message.header")
	if err != nil || !ok {
		return 0, c.errf("message.header is missing")
	}
	n, _, err := c.vector(h, 1, 16, "record_batch.nodes")
	return n, err
}

// SchemaNodes is the number of field nodes a record batch of schema sc
// has: one per field, nested fields included.
func SchemaNodes(sc *arrow.Schema) int {
	var count func(dt arrow.DataType) int
	count = func(dt arrow.DataType) int {
		n := 1
		if ext, ok := dt.(arrow.ExtensionType); ok {
			return count(ext.StorageType())
		}
		if nt, ok := dt.(arrow.NestedType); ok {
			for _, f := range nt.Fields() {
				n += count(f.Type)
			}
		}
		return n
	}
	total := 0
	for _, f := range sc.Fields() {
		total += count(f.Type)
	}
	return total
}
