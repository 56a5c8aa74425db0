package offsetstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// walFaults fails WAL writes and syncs while armed; it disarms itself after
// the first injected error, like a disk that hiccups once.
type walFaults struct{ armed atomic.Bool }

func (w *walFaults) String() string { return "walFaults" }

func (w *walFaults) MaybeError(op errorfs.Op) error {
	if isWALSyncOrWrite(op) && w.armed.CompareAndSwap(true, false) {
		return errorfs.ErrInjected
	}
	return nil
}

// generation is one incarnation of the store between (re)opens.
type generation struct {
	s      *Store
	issued int
	mu     sync.Mutex
	called []bool
	order  []int
	failed bool // a callback of this generation reported an error wrapping ErrFailed
}

// TestModelRandomized drives random commits on several destinations and
// partitions, random sync-completion delays (so completions arrive out of
// order), injected WAL failures, crashes (a crash clone keeps only synced
// data, the old store is abandoned) and graceful restarts, and checks after
// every step against a model:
//
//   - every watermark whose callback said durable is at least that high in
//     the durable view and after any reopen;
//   - nothing is ever above the highest Last committed;
//   - recovered watermarks never go backwards across reopens;
//   - callbacks fire exactly once each, in FIFO order, per generation;
//   - after a callback reported ErrFailed, no later callback of that
//     generation reports success.
func TestModelRandomized(t *testing.T) {
	seeds := []uint64{1, 2, 3, rand.Uint64()}
	if v := os.Getenv("OFFSETSTORE_MODEL_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
		seeds = []uint64{seed}
	}
	for _, seed := range seeds {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			st := runModel(t, seed, 600)
			t.Logf("%+v", st)
			require.Positive(t, st.durable)
			if seed <= 3 {
				// The fixed seeds are known to exercise everything.
				require.Positive(t, st.crashes)
				require.Positive(t, st.restarts)
				require.Positive(t, st.failedGenerations, "some injected WAL failure failed a store")
			}
		})
	}
}

type modelStats struct {
	commits, durable, failed             int
	crashes, restarts, failedGenerations int
}

func runModel(t *testing.T, seed uint64, steps int) (st modelStats) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var rngMu sync.Mutex // the sync hook draws delays from another goroutine
	randN := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	var reporters sync.WaitGroup
	defer reporters.Wait()

	faults := &walFaults{}
	mem := vfs.NewCrashableMem()
	m := newDurableModel()
	lastRecovered := map[wmKey]uint64{}
	dests := []string{"flight", "zerobus", "pq"}

	open := func(fs *vfs.MemFS) *generation {
		t.Helper()
		s, err := Open("db", Options{
			FS:              errorfs.Wrap(fs, faults),
			Logger:          quietLogger(),
			TeardownTimeout: 2 * time.Second,
			MaxInFlight:     1 + randN(3),
			MaxBatch:        1 + randN(16),
			testing: testingKnobs{syncDone: func(_ uint64, err error, report func(error)) {
				if randN(2) == 0 {
					report(err)
					return
				}
				d := time.Duration(randN(500)) * time.Microsecond
				reporters.Add(1)
				time.AfterFunc(d, func() { defer reporters.Done(); report(err) })
			}},
		})
		require.NoError(t, err)
		return &generation{s: s}
	}

	// checkRecovered compares a freshly opened store with the model.
	checkRecovered := func(g *generation, what string) {
		t.Helper()
		m.check(t, g.s, what)
		for key, seq := range lastRecovered {
			got, err := g.s.read(key.kind, key.dest)
			require.NoError(t, err)
			require.GreaterOrEqualf(t, got[key.partition].Seq, seq, "%s: %v went backwards across reopen", what, key)
		}
		for _, d := range dests {
			for _, k := range []kind{kindDelivered, kindCoverage} {
				got, err := g.s.read(k, d)
				require.NoError(t, err)
				for p, pos := range got {
					lastRecovered[wmKey{k, d, p}] = pos.Seq
				}
			}
		}
	}

	// finish closes a generation and checks that every callback was called.
	finish := func(g *generation) error {
		t.Helper()
		err := g.s.Close()
		g.mu.Lock()
		defer g.mu.Unlock()
		require.Len(t, g.order, g.issued, "Close returned before every callback ran")
		if g.failed {
			st.failedGenerations++
		}
		return err
	}

	g := open(mem)
	defer func() { _ = g.s.Close() }()
	for step := range steps {
		switch r := randN(100); {
		case r < 65: // commit
			k := kindDelivered
			if randN(3) == 0 {
				k = kindCoverage
			}
			dest, p := dests[randN(len(dests))], int32(randN(4))
			m.mu.Lock()
			top := m.committed[wmKey{k, dest, pn(p)}]
			m.mu.Unlock()
			last := top + uint64(randN(5))
			if randN(5) == 0 && top > 3 {
				last = top - 3 // a regression: must be a no-op
			}
			first := max(last, 2) - 2
			gen, i := g, g.issued
			g.issued++
			st.commits++
			g.mu.Lock()
			g.called = append(g.called, false)
			g.mu.Unlock()
			m.commit(g.s, k, dest, p, first, last, func(err error) {
				gen.mu.Lock()
				defer gen.mu.Unlock()
				if gen.called[i] {
					t.Errorf("step %d: callback %d called twice", step, i)
				}
				gen.called[i] = true
				if n := len(gen.order); n > 0 && gen.order[n-1] > i {
					t.Errorf("callback %d after %d: not FIFO", i, gen.order[n-1])
				}
				gen.order = append(gen.order, i)
				if err == nil && gen.failed {
					t.Errorf("callback %d reported success after the store failed", i)
				}
				if errors.Is(err, ErrFailed) {
					gen.failed = true
				}
				if err == nil {
					st.durable++
				} else {
					st.failed++
				}
			})
		case r < 75: // flush
			err := g.s.Flush(t.Context())
			if err != nil {
				require.ErrorIs(t, err, ErrFailed, "step %d: Flush fails only on a failed store", step)
				require.Error(t, g.s.Err())
			}
		case r < 80: // arm a WAL failure
			faults.armed.Store(true)
		case r < 86: // crash
			m.mu.Lock()
			snapshot := make(map[wmKey]uint64, len(m.reported))
			for k, v := range m.reported {
				snapshot[k] = v
			}
			m.mu.Unlock()
			rngMu.Lock()
			cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: []int{0, 0, 30, 100}[rng.IntN(4)], RNG: rand.New(rand.NewPCG(rng.Uint64(), 0))}
			rngMu.Unlock()
			crashed := mem.CrashClone(cfg)
			faults.armed.Store(false)
			_ = finish(g) // the abandoned process; its outcome no longer matters
			<-g.s.Done()
			m.mu.Lock()
			m.reported = snapshot // what the crashed process managed to report
			m.mu.Unlock()
			mem = crashed
			st.crashes++
			g = open(mem)
			checkRecovered(g, "after crash at step "+strconv.Itoa(step))
		case r < 89: // graceful restart
			faults.armed.Store(false)
			err := finish(g)
			if err == nil {
				g.mu.Lock()
				require.False(t, g.failed, "Close returned nil for a failed store")
				g.mu.Unlock()
			}
			<-g.s.Done()
			st.restarts++
			g = open(mem)
			checkRecovered(g, "after restart at step "+strconv.Itoa(step))
		default: // the live durable view
			m.check(t, g.s, "live view at step "+strconv.Itoa(step))
		}
		if g.s.Err() != nil {
			require.ErrorIs(t, g.s.Err(), ErrFailed)
		}
	}
	_ = finish(g)
	return st
}
