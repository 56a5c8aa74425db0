// Package optcheck holds what the Options validators of several packages
// share (see CONTRIBUTING.md, "Options").
//
// It stays thalweg's own: it is thalweg's Options convention (15 lines).
package optcheck

import "fmt"

// OrDefault renders a field's value for a validation message that is about
// the value a component will use: what the caller wrote, and what it
// stands for when that was zero ("0 (default 1073741824)").
func OrDefault[T int | int64](set, effective T) string {
	if set == 0 && effective != 0 {
		return fmt.Sprintf("0 (default %d)", effective)
	}
	return fmt.Sprint(set)
}
