package offsetstore

import (
	"testing"

	"github.com/thalweg/thalweg/batch"

	"github.com/stretchr/testify/require"
)

// LowerCoverage moves coverage down only, in the commit FIFO, durably; a
// later CommitCoverage raises it again from there.
func TestLowerCoverage(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	require.NoError(t, commitWait(t, s, kindCoverage, "zb", span(0, 1, 151), span(1, 1, 10)))
	done := make(chan error, 1)
	s.LowerCoverage("zb", []batch.OffsetSpan{span(0, 49, 49), span(1, 20, 20), span(2, 5, 5)}, func(err error) { done <- err })
	require.NoError(t, <-done)
	cov, err := s.Coverage("zb")
	require.NoError(t, err)
	require.EqualValues(t, 49, cov[pn(0)].Seq, "lowered")
	require.EqualValues(t, 10, cov[pn(1)].Seq, "a coverage below the mark stays")
	require.NotContains(t, cov, pn(2), "no coverage: nothing to lower")

	require.NoError(t, commitWait(t, s, kindCoverage, "zb", span(0, 50, 60)))
	s.LowerCoverage("zb", []batch.OffsetSpan{{Partition: pn(1), First: 0, Last: 0}}, func(err error) { done <- err })
	require.NoError(t, <-done)
	require.NoError(t, s.Close())

	s = openT(t, dir, Options{})
	cov, err = s.Coverage("zb")
	require.NoError(t, err)
	require.EqualValues(t, 60, cov[pn(0)].Seq, "raised again after the lowering")
	require.NotContains(t, cov, pn(1), "lowered to 0: removed")
}
