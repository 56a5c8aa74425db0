package flight

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// rowRange is a half-open row range [lo, hi) of a record batch.
type rowRange struct{ lo, hi int64 }

// Per-message allowance for what is not the IPC body: protobuf framing of
// FlightData, the descriptor on the first message, slack.
const framingAllowance = 1 << 10

// Per-buffer allowance on top of the buffer bytes: 8 bytes of padding, 8
// bytes of compression length prefix, and the buffer's entry in the
// flatbuffer header (plus field nodes), rounded up.
const perBufferAllowance = 64

// plan decides whether rec fits into one gRPC message and, if not, how to
// split it by rows. A nil result means "send whole". metaLen is the length
// of the app_metadata the parts will carry.
//
// The fast path is an upper bound that needs no encoding: the sum of the
// record's buffer sizes (whole buffers, so it over-estimates for sliced
// input) plus per-buffer allowances. Only batches
// above the limit are encoded to measure candidate parts exactly, halving a
// part until it fits. Halving keeps parts contiguous and in row order.
func (s *Sink) plan(rec arrow.RecordBatch, metaLen int) ([]rowRange, error) {
	limit := int64(s.opts.MaxMessageSize - framingAllowance - metaLen - s.descLen)
	rows := rec.NumRows()
	bytes, bufs := bufferBytes(rec)
	if bytes+bufs*perBufferAllowance+4096 <= limit || rows <= 1 {
		if rows <= 1 && rows > 0 {
			size, err := s.measure(rec, 0, rows)
			if err != nil {
				return nil, err
			}
			if size > limit {
				return nil, fmt.Errorf("%w: %d bytes encoded, limit %d", ErrRowTooLarge, size, limit)
			}
		}
		return nil, nil
	}
	var out []rowRange
	var split func(lo, hi int64) error
	split = func(lo, hi int64) error {
		size, err := s.measure(rec, lo, hi)
		if err != nil {
			return err
		}
		if size <= limit {
			out = append(out, rowRange{lo, hi})
			return nil
		}
		if hi-lo == 1 {
			return fmt.Errorf("%w: row %d encodes to %d bytes, limit %d", ErrRowTooLarge, lo, size, limit)
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
// [lo, hi) with the sink's IPC options, compression included.
func (s *Sink) measure(rec arrow.RecordBatch, lo, hi int64) (int64, error) {
	part := rec.NewSlice(lo, hi)
	defer part.Release()
	p, err := ipc.GetRecordBatchPayload(part, s.ipcOpts...)
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
	var visit func(d arrow.ArrayData)
	visit = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			buffers++
			if b != nil {
				bytes += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			visit(c)
		}
	}
	for _, c := range rec.Columns() {
		visit(c.Data())
	}
	return bytes, buffers
}
