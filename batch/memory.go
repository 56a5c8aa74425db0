package batch

// BatchMemory bounds the memory of one batch whose columns hold at most
// maxBytes (AssemblerOptions.MaxBytes): the assembler's buffers come in
// size classes up to 1/16 above what they hold (poolClass).
func BatchMemory(maxBytes int64) int64 { return maxBytes * 17 / 16 }

// AssemblerMemory bounds what an Assembler itself holds, given one batch's
// memory (BatchMemory): the batch being built and its buffer pool, which
// keeps about two batches (bufferPool.setLimit). Batches emitted and not
// yet released are their owner's to count.
func AssemblerMemory(batchMemory int64) int64 { return 3 * batchMemory }
