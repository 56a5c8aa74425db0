//go:build race

package batch

// poisonFreed: see bufferPool. Race-detector builds are the test builds.
const poisonFreed = true
