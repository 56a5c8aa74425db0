package chaos_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/thalweg/thalweg/chaos/internal/harness"
)

func TestMain(m *testing.M) {
	code := m.Run()
	harness.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
