package receiver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/thalweg/thalweg/flight/receiver"
	"github.com/thalweg/thalweg/internal/testkit/flighttest"
)

// TestV1DatasetRefused: a dataset written before record identity (DATASET
// version 1, partition ids of one offset store) is refused by New with a
// message naming the command that migrates it, also when its DATASET file
// is lost; Migrate moves it aside, unchanged and readable by a plain Arrow
// reader, keeps version 2 datasets in place, and the receiver starts.
func TestV1DatasetRefused(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := "DATASET version 1"
		if lost {
			name = "DATASET lost"
		}
		t.Run(name, func(t *testing.T) {
			dir := copyRawV1(t)
			if lost {
				require.NoError(t, os.Remove(filepath.Join(dir, "v1", "DATASET")))
			}
			// A version 2 dataset next to it.
			v2dir := t.TempDir()
			srv, addr := flighttest.Receiver(t, receiver.Options{Dir: v2dir})
			storeBatches(t, addr, []string{"new"}, 2, 3, 8)
			require.NoError(t, srv.Stop())
			require.NoError(t, os.Rename(filepath.Join(v2dir, "new"), filepath.Join(dir, "new")))

			_, err := receiver.New(receiver.Options{Dir: dir})
			require.Error(t, err)
			require.True(t, errors.Is(err, receiver.ErrV1Dataset), "%v", err)
			var v1 *receiver.V1Error
			require.ErrorAs(t, err, &v1)
			require.Contains(t, err.Error(), "thalweg receiver migrate --dir "+dir)
			require.Contains(t, err.Error(), "written before record identity")

			aside, moved, err := receiver.Migrate(dir)
			require.NoError(t, err)
			require.Equal(t, []string{"v1"}, moved)
			require.Equal(t, dir, filepath.Dir(aside))
			require.True(t, strings.HasPrefix(filepath.Base(aside), "v1~"), aside)
			for _, f := range []string{"00000001.arrows", "00000002.idx", "00000003.arrows"} {
				want, err := os.ReadFile(filepath.Join("testdata", "v1", f))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(aside, "v1", f))
				require.NoError(t, err)
				require.Equal(t, want, got, "%s moved unchanged", f)
			}
			// A plain Arrow reader reads the moved segment.
			f, err := os.Open(filepath.Join(aside, "v1", "00000001.arrows"))
			require.NoError(t, err)
			defer f.Close()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rdr, err := ipc.NewReader(f, ipc.WithAllocator(mem))
			require.NoError(t, err)
			n := 0
			for rdr.Next() {
				n++
			}
			require.NoError(t, rdr.Err())
			rdr.Release()
			require.Equal(t, 4, n)

			// The receiver starts; the version 2 dataset is served, the
			// moved one is gone; a second Migrate has nothing to do.
			_, addr = flighttest.Receiver(t, receiver.Options{Dir: dir})
			require.Len(t, storedRows(t, addr, []string{"new"}), 6)
			_, err = receiver.New(receiver.Options{Dir: dir})
			require.Error(t, err, "the directory is locked while a receiver runs")
		})
	}
	t.Run("locked", func(t *testing.T) {
		dir := t.TempDir()
		_, _ = flighttest.Receiver(t, receiver.Options{Dir: dir})
		_, _, err := receiver.Migrate(dir)
		require.ErrorContains(t, err, "is a receiver running on it?")
	})
	t.Run("nothing to do", func(t *testing.T) {
		dir := t.TempDir()
		srv, addr := flighttest.Receiver(t, receiver.Options{Dir: dir})
		storeBatches(t, addr, []string{"new"}, 1, 3, 8)
		require.NoError(t, srv.Stop())
		aside, moved, err := receiver.Migrate(dir)
		require.NoError(t, err)
		require.Empty(t, aside)
		require.Empty(t, moved)
	})
}
