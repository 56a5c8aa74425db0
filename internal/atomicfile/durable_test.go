package atomicfile

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

func read(t *testing.T, fs vfs.FS, name string) string {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

// TestWriteFileSurvivesCrash: once WriteFile returns, a crash (everything
// not synced is lost) keeps the new content, its directory included.
func TestWriteFileSurvivesCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	if err := MkdirAll(mem, "/d/q"); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(mem, "/d/q", "f", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(mem, "/d/q", "f", []byte("two")); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if got := read(t, crashed, "/d/q/f"); got != "two" {
		t.Fatalf("after a crash: %q, want %q", got, "two")
	}
	if _, err := crashed.Stat("/d/q/f" + TmpExt); err == nil {
		t.Fatalf("the temporary file is left behind")
	}
}

// TestWriteFileFailureKeepsOldContent: a write whose sync fails leaves the
// old content under the name, and the error names the file and keeps the
// cause.
func TestWriteFileFailureKeepsOldContent(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(mem, "/d", "f", []byte("old")); err != nil {
		t.Fatal(err)
	}
	for _, op := range []errorfs.OpKind{errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileSync, errorfs.OpRename} {
		inj := errorfs.InjectorFunc(func(o errorfs.Op) error {
			if o.Kind == op {
				return errorfs.ErrInjected
			}
			return nil
		})
		err := WriteFile(errorfs.Wrap(mem, inj), "/d", "f", []byte("new"))
		if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("%v: err = %v, want the injected cause", op, err)
		}
		if !strings.Contains(err.Error(), "/d/f") {
			t.Fatalf("%v: %q does not name the file", op, err)
		}
		if got := read(t, mem, "/d/f"); got != "old" {
			t.Fatalf("%v: %q after a failed write, want the old content", op, got)
		}
	}
}
