package lanes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goBuild builds the program in lanes/testdata/<dir> from the module root and
// returns the combined output and error. It reuses the race build cache of
// the test binary when the tests run with -race.
func goBuild(t *testing.T, dir string) (string, error) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	lanesDir := filepath.Dir(file)
	root := filepath.Dir(lanesDir)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", lanesDir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"build", "-o", os.DevNull}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./lanes/testdata/"+dir)
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	cmd := exec.CommandContext(ctx, gocmd, args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go build %s timed out", dir)
	}
	return string(out), err
}

// docs/design.md#lane-separation: a coverage lane cannot hold a raw-anchor token. The
// wrong pairing must fail to type-check, naming both token types; the right
// pairing (the control) must build.
func TestTokenSeparationIsCompileTime(t *testing.T) {
	t.Parallel()
	out, err := goBuild(t, "wrongtoken")
	if err == nil {
		t.Fatal("testdata/wrongtoken built: a Lane[Coverage] accepted a RawAnchor token")
	}
	for _, want := range []string{"wrongtoken/main.go:", "cannot use", "RawAnchor", "Coverage"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q; a type error about the token is expected, got:\n%s", want, out)
		}
	}
	out, err = goBuild(t, "righttoken")
	if err != nil {
		t.Fatalf("control testdata/righttoken does not build: %v\n%s", err, out)
	}
}
