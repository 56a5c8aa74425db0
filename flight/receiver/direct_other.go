//go:build !linux

package receiver

import "errors"

// openDirect is Linux only: elsewhere every write goes through the page
// cache.
func openDirect(string) (directFile, error) {
	return nil, errors.ErrUnsupported
}
