package flight

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/thalweg/thalweg/internal/flightwire"
)

// plan decides whether rec fits into one gRPC message and, if not, how to
// split it by rows (flightwire.Plan, exact). A nil result means "send
// whole". metaLen is the length of the app_metadata the parts will carry.
func (s *Sink) plan(rec arrow.RecordBatch, metaLen int) ([]flightwire.RowRange, error) {
	limit := flightwire.MessageLimit(s.opts.MaxMessageSize, metaLen, s.descLen)
	if v := s.opts.variant; v != nil && v.MaxPayload > 0 {
		limit = min(limit, int64(v.MaxPayload))
	}
	parts, err := flightwire.Plan(rec, limit, s.ipcOpts)
	if err == nil {
		// Send calls plan for every batch: the errors.As target below
		// escapes to the heap, one allocation a batch had it run on success.
		return parts, nil
	}
	var big *flightwire.RowTooLargeError
	if errors.As(err, &big) {
		return nil, fmt.Errorf("%w: %w", ErrRowTooLarge, big)
	}
	return nil, err
}
