//go:build !race

package batch

// poisonFreed: see bufferPool.
const poisonFreed = false
