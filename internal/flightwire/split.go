package flightwire

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowRange is a half-open row range [Lo, Hi) of a record batch.
type RowRange struct{ Lo, Hi int64 }

// FramingAllowance is what a message limit keeps free for what is not the
// IPC message: protobuf framing of FlightData, slack.
const FramingAllowance = 1 << 10

// perBufferAllowance is added per buffer to the buffer bytes: 8 bytes of
// padding, 8 bytes of compression length prefix, and the buffer's entry in
// the flatbuffer header (plus field nodes), rounded up.
const perBufferAllowance = 64

// MessageLimit is the largest encoded record batch (flatbuffer header and
// body) that fits one gRPC message of maxMessageSize bytes together with
// metaLen bytes of app_metadata and a descriptor of descLen bytes.
func MessageLimit(maxMessageSize, metaLen, descLen int) int64 {
	return int64(maxMessageSize - FramingAllowance - metaLen - descLen)
}

// RowTooLargeError reports a single row whose encoding exceeds the limit,
// so that no split can make the batch fit. Callers wrap it with their own
// sentinel.
type RowTooLargeError struct{ Row, Size, Limit int64 }

func (e *RowTooLargeError) Error() string {
	return fmt.Sprintf("row %d encodes to %d bytes, limit %d", e.Row, e.Size, e.Limit)
}

// Plan decides whether rec fits into one message of at most limit encoded
// bytes (see MessageLimit) with the IPC options opts (compression
// included) and, if not, how to split it by rows. A nil result means "send
// whole".
//
// The fast path is an upper bound that needs no encoding: the sum of the
// record's buffer sizes (whole buffers, so it over-estimates for sliced
// input) plus per-buffer allowances. Only batches above the limit are
// encoded to measure candidate parts exactly, halving a part until it
// fits. Halving keeps parts contiguous and in row order.
func Plan(rec arrow.RecordBatch, limit int64, opts []ipc.Option) ([]RowRange, error) {
	rows := rec.NumRows()
	bytes, bufs := bufferBytes(rec)
	if bytes+bufs*perBufferAllowance+4096 <= limit || rows <= 1 {
		if rows == 1 {
			size, err := measure(rec, 0, rows, opts)
			if err != nil {
				return nil, err
			}
			if size > limit {
				return nil, &RowTooLargeError{Row: 0, Size: size, Limit: limit}
			}
		}
		return nil, nil
	}
	var out []RowRange
	var split func(lo, hi int64) error
	split = func(lo, hi int64) error {
		size, err := measure(rec, lo, hi, opts)
		if err != nil {
			return err
		}
		if size <= limit {
			out = append(out, RowRange{lo, hi})
			return nil
		}
		if hi-lo == 1 {
			return &RowTooLargeError{Row: lo, Size: size, Limit: limit}
		}
		mid := lo + (hi-lo)/2
		if err := split(lo, mid); err != nil {
			return err
		}
		return split(mid, hi)
	}
	if err := split(0, rows); err != nil {
		return nil, err
	}
	if len(out) == 1 {
		return nil, nil // the upper bound was pessimistic; it fits whole
	}
	return out, nil
}

// measure returns the exact encoded size (flatbuffer header + body) of rows
// [lo, hi) with the IPC options opts.
func measure(rec arrow.RecordBatch, lo, hi int64, opts []ipc.Option) (int64, error) {
	part := rec.NewSlice(lo, hi)
	defer part.Release()
	p, err := ipc.GetRecordBatchPayload(part, opts...)
	if err != nil {
		return 0, fmt.Errorf("encoding rows [%d, %d) to measure them: %w", lo, hi, err)
	}
	defer p.Release()
	meta := p.Meta()
	n := int64(meta.Len())
	meta.Release()
	var c countingWriter
	if err := p.SerializeBody(&c); err != nil {
		return 0, err
	}
	return n + c.n + 16, nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// bufferBytes returns the total length of the buffers rec references and
// how many buffers there are, children included.
func bufferBytes(rec arrow.RecordBatch) (bytes, buffers int64) {
	for _, c := range rec.Columns() {
		dataBufferBytes(c.Data(), &bytes, &buffers)
	}
	return bytes, buffers
}

// dataBufferBytes adds d's buffers, children included, to bytes and
// buffers. (A plain function: a recursive closure would be allocated on
// every Send.)
func dataBufferBytes(d arrow.ArrayData, bytes, buffers *int64) {
	for _, b := range d.Buffers() {
		*buffers++
		if b != nil {
			*bytes += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		dataBufferBytes(c, bytes, buffers)
	}
}

// HasDictionary reports whether sc has a dictionary-encoded field at any
// depth. The encoding does not carry dictionaries: one stream's dictionary
// batches would need their own offsets and replay rules.
func HasDictionary(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		if typeHasDictionary(f.Type) {
			return true
		}
	}
	return false
}

func typeHasDictionary(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return true
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if typeHasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}

// IPCOptions are the IPC writer options both sinks encode with: the
// allocator for encoding scratch and the body compression ("none", "lz4"
// or "zstd"; the callers validate the name).
func IPCOptions(mem memory.Allocator, compression string) []ipc.Option {
	opts := []ipc.Option{ipc.WithAllocator(mem)}
	switch compression {
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	}
	return opts
}
