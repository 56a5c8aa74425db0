//go:build !race

package flightwire

// poisonReleased: see ReceivedData.
const poisonReleased = false
