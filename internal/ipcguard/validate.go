package ipcguard

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ErrInvalidData is wrapped by every ValidateBatch error.
var ErrInvalidData = errors.New("invalid Arrow data")

// ValidateBatch checks every column of a decoded batch in full before a
// server stores or acknowledges it: buffer sizes against lengths and
// offsets, offsets non-negative, monotonic and inside their data (string,
// binary, list and view types), child lengths, null counts, and UTF-8 for
// string types. arrow-go's IPC reader checks none of this, so a batch with,
// say, negative string offsets decodes, is stored, and then fails (or
// panics) every reader. It costs one pass over the data.
func ValidateBatch(rec arrow.RecordBatch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrInvalidData, p)
		}
	}()
	for i, col := range rec.Columns() {
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("%w: column %q has %d rows, the batch %d", ErrInvalidData, rec.ColumnName(i), col.Len(), rec.NumRows())
		}
		if err := array.ValidateFull(col); err != nil {
			return fmt.Errorf("%w: column %q: %v", ErrInvalidData, rec.ColumnName(i), err)
		}
	}
	return nil
}
