package pulsarschema_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// runWithLeakCheck runs the tests, then fails if a goroutine (the Pulsar
// client's, the registry's HTTP transport) outlives them.
func runWithLeakCheck(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(testenv.LeakOptions()...); err != nil {
			println("goleak:", err.Error())
			return 1
		}
	}
	return code
}
