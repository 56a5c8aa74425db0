package ipcguard

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
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
		var err error
		if str, ok := col.(*array.String); ok {
			err = validateString(str)
		} else {
			err = array.ValidateFull(col)
		}
		if err != nil {
			return fmt.Errorf("%w: column %q: %v", ErrInvalidData, rec.ColumnName(i), err)
		}
	}
	return nil
}

// validateString is array.ValidateFull for a String array, with one UTF-8
// pass over the values instead of one per value: a received raw batch has a
// topic string per row, and arrow-go's per-value check was the receiver's
// costliest validation (about 20 ns a row for a 46-byte topic).
//
// The values are valid one by one exactly when all of them together are
// valid UTF-8 and no value starts on a continuation byte (10xxxxxx): in
// valid UTF-8 every other byte starts a rune, so every value is then whole
// runes. Only an array that fails is checked again by arrow-go, for its
// error message. TestValidateStringMatchesArrow holds the two to the same
// verdict.
func validateString(a *array.String) error {
	if err := array.Validate(a); err != nil {
		return err
	}
	if a.Len() == 0 {
		return nil
	}
	d, bufs := a.Data(), a.Data().Buffers()
	// The data's count, not the array's NullN, which would count an
	// unknown one; arrow-go does not check an unknown count either.
	if declared := d.NullN(); declared != array.UnknownNullCount {
		nulls := 0
		if len(bufs) > 0 && bufs[0] != nil {
			nulls = a.Len() - bitutil.CountSetBits(bufs[0].Bytes(), d.Offset(), a.Len())
		}
		if nulls != declared {
			return array.ValidateFull(a)
		}
	}
	var values []byte
	if len(bufs) > 2 && bufs[2] != nil {
		values = bufs[2].Bytes()
	}
	if !validStrings(a.ValueOffsets(), values) {
		return array.ValidateFull(a)
	}
	return nil
}

// validStrings reports whether offsets (checked by Validate to start and
// end inside values) are non-negative and non-decreasing and delimit valid
// UTF-8 values.
func validStrings(offsets []int32, values []byte) bool {
	if offsets[0] < 0 {
		return false
	}
	end := offsets[len(offsets)-1]
	for i := 1; i < len(offsets); i++ {
		o := offsets[i]
		if o < offsets[i-1] {
			return false
		}
		if o < end && values[o]&0xC0 == 0x80 {
			return false
		}
	}
	return utf8.Valid(values[offsets[0]:end])
}
