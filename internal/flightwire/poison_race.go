//go:build race

package flightwire

// poisonReleased: see ReceivedData. Race-detector builds are the test
// builds.
const poisonReleased = true
