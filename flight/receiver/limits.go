package receiver

import "github.com/thalweg/thalweg/internal/limits"

// ErrDecodeLimit is the cause of a batch rejected because decoding it would
// allocate a buffer larger than Options.MaxDecodedBufferSize (a compressed
// IPC buffer declares its uncompressed length in its first 8 bytes; a
// hostile or corrupt message can declare any length).
var ErrDecodeLimit = limits.ErrDecodeLimit
