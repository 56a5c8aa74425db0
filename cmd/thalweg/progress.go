package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/thalweg/thalweg/pipeline"
)

// progress prints a live line on a terminal (rewritten in place every
// second) and a plain line every interval otherwise — through log, as one
// structured stats line, when log is set (`thalweg run`).
type progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	stats    func() pipeline.Stats
	start    time.Time
	log      *slog.Logger // nil: plain lines on w

	stop chan struct{}
	wg   sync.WaitGroup
	last pipeline.Stats
	at   time.Time
}

// isTerminal reports whether w is a terminal (a file that answers the
// termios ioctl: /dev/null, a character device too, does not).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// startProgress starts reporting stats on w: every second on a terminal,
// every interval otherwise (0: never). close stops it.
func startProgress(w io.Writer, stats func() pipeline.Stats, interval time.Duration, log *slog.Logger) *progress {
	p := &progress{w: w, tty: isTerminal(w), stats: stats, start: time.Now(), stop: make(chan struct{}), log: log}
	p.interval = interval
	if p.tty {
		p.interval = time.Second
	}
	p.at = p.start
	if p.interval <= 0 {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case now := <-t.C:
				p.print(now)
			}
		}
	}()
	return p
}

func (p *progress) print(now time.Time) {
	st := p.stats()
	dt := now.Sub(p.at).Seconds()
	if dt <= 0 {
		dt = 1
	}
	recs := float64(st.SourceRecords-p.last.SourceRecords) / dt
	mb := float64(st.Assembler.Bytes-p.last.Assembler.Bytes) / dt / 1e6
	p.last, p.at = st, now
	if p.log != nil && !p.tty {
		attrs := append([]any{"elapsed", now.Sub(p.start).Round(time.Millisecond).String(), "rec_per_s", int64(recs)}, statsAttrs(st)...)
		p.log.Info("stats", attrs...)
		return
	}
	line := fmt.Sprintf("%6.1fs  %9.0f rec/s  %7.1f MB/s  batches %d  dead-lettered %d  acked %d  %s",
		now.Sub(p.start).Seconds(), recs, mb, st.Assembler.Batches, st.Assembler.Rejected, st.Acked, lanesLine(st))
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func lanesLine(st pipeline.Stats) string {
	parts := []string{laneLine(st.Anchor)}
	for _, l := range st.Secondaries {
		parts = append(parts, laneLine(l))
	}
	return strings.Join(parts, "  ")
}

func laneLine(l pipeline.LaneStats) string {
	s := fmt.Sprintf("[%s %s pending %d/%d delivered@%d", l.Name, l.State, l.Pending, l.Capacity, l.Delivered)
	if l.Bursts > 0 {
		s += fmt.Sprintf(" coalesce %.1f", float64(l.Confirmed)/float64(l.Bursts))
	}
	if l.Detached {
		s += " DETACHED"
	}
	return s + "]"
}

// statsAttrs are the log attributes of st: what the source read, dead-lettered
// and had acknowledged, what it could not hand out (group "source", only
// when something: messages its client discarded, records lost in the gaps
// they left, records missing in gaps the broker made), and per destination (a group named after it, in
// group "destinations") the
// records delivered durably, the rows replayed after a rebuild (the most
// the sink may hold twice), the retried attempts and the drains that
// shutdown.drain_timeout cut short — the only place a Prometheus-only
// deployment sees the final shutdown's drain timeout, since the process
// exits before the next scrape.
func statsAttrs(st pipeline.Stats) []any {
	var dests []any // one group per destination, under "destinations": a name never meets a top-level key
	for _, l := range append([]pipeline.LaneStats{st.Anchor}, st.Secondaries...) {
		dests = append(dests, slog.Group(l.Name, "state", l.State.String(), "delivered", l.Rows,
			"replayed", l.Replayed, "retries", l.Retries, "drain_timeouts", l.DrainTimeouts, "pending", l.Pending))
	}
	attrs := []any{"read", st.SourceRecords, "dead_lettered", st.DeadLettered, "acked", st.Acked}
	if st.SourceDiscarded > 0 || st.SourceLost > 0 || st.SourceSkipped > 0 {
		attrs = append(attrs, slog.Group("source", "discarded", st.SourceDiscarded, "lost", st.SourceLost, "skipped", st.SourceSkipped))
	}
	return append(attrs, slog.Group("destinations", dests...))
}

func (p *progress) close() {
	close(p.stop)
	p.wg.Wait()
	if p.tty {
		p.print(time.Now())
		fmt.Fprintln(p.w)
	}
}
