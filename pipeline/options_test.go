package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// Every invalid field is reported at once, each by name, in one error that
// wraps ErrInvalidOptions; nothing is built.
func TestOptionsValidation(t *testing.T) {
	_, err := New(Options{
		Anchor:       Destination{Queue: -1},
		Secondaries:  []Destination{{Name: "s"}, {Name: "s"}},
		DrainTimeout: -1,
		MaxUnacked:   -1,
	})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New = %v, want ErrInvalidOptions", err)
	}
	for _, field := range []string{
		"Options.Source", "Options.Store", "Options.Anchor.Name", "Options.Anchor.Dial", "Options.Anchor.Queue",
		`Options.Secondaries[1].Name "s" is used twice`, "Options.Secondaries[0].Dial",
		"Options.DrainTimeout", "Options.MaxUnacked",
	} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
}
