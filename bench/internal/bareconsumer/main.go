// Command bareconsumer is the baseline of BenchmarkE2EPulsar (bench): a
// bare pulsar-client-go consumer, in a process of its own, that reads a
// topic's backlog and acknowledges every message, as a user of the client
// alone would. It runs with the client's and Go's defaults (no GOGC or
// memory limit of its own, the client's default prefetch and logger), on
// the subscription type `thalweg run` uses by default (Failover).
//
// With -read it also reads every message as the worker does (its payload
// and key copied, its entry index, times and properties read), the
// baseline of BenchmarkE2EPartitions; without it, the cheapest consumer,
// the baseline of BenchmarkE2EPulsar. -work N adds N passes of a hash over
// each message's payload and key: a consumer that spends time of its own
// on every message, as the worker does.
//
// It prints "first" on stdout once it has acknowledged its first message
// (the benchmark's measure of its start-up), "tenth" once it has handled a
// tenth of -n (where the benchmark's steady state starts) and "done" once it has received and acknowledged -n
// messages, then waits for its stdin to close before it exits, so that
// the benchmark can read the process's CPU time at that moment from
// /proc, exactly as it does for the worker. With -cpuprofile it writes a
// CPU profile of the whole run (stopped at "done").
//
// With -touch N it does none of that: it writes one byte to every page of
// N MiB of fresh memory and exits, which gives the machine's memory back
// to the next process warm (see BenchmarkE2EPartitions).
//
// It is a test helper, not a tool: it is built by the benchmark only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	pclient "github.com/apache/pulsar-client-go/pulsar"
)

func main() {
	url := flag.String("url", "", "broker service URL")
	topic := flag.String("topic", "", "topic to read")
	sub := flag.String("subscription", "bare", "subscription name")
	n := flag.Int("n", 0, "messages to receive and acknowledge")
	ackEvery := flag.Int("ack-every", 0, "acknowledge cumulatively per partition every N messages of it (0: every message on its own)")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	read := flag.Bool("read", false, "read every message as a consumer that uses it does: copy its payload and key, read its entry index, times and properties")
	work := flag.Int("work", 0, "with -read, hash the copied payload and key this many times per message: a consumer with work of its own per message")
	touch := flag.Int("touch", 0, "only write to every page of this many MiB of fresh memory, and exit")
	flag.Parse()
	if *touch > 0 {
		touchMemory(*touch)
		return
	}
	if err := run(*url, *topic, *sub, *n, *ackEvery, *timeout, *cpuprofile, *read, *work); err != nil {
		fmt.Fprintln(os.Stderr, "bareconsumer:", err)
		os.Exit(1)
	}
}

func run(url, topic, sub string, n, ackEvery int, timeout time.Duration, cpuprofile string, read bool, work int) error {
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	c, err := pclient.NewClient(pclient.ClientOptions{URL: url})
	if err != nil {
		return err
	}
	defer c.Close()
	cons, err := c.Subscribe(pclient.ConsumerOptions{Topic: topic, SubscriptionName: sub,
		Type: pclient.Failover, SubscriptionInitialPosition: pclient.SubscriptionPositionEarliest})
	if err != nil {
		return err
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Per partition: its last message not yet acknowledged, and how many
	// messages that covers.
	type pending struct {
		last pclient.Message
		n    int
	}
	parts := make(map[int32]*pending)
	var (
		buf  []byte // the payload and key of the last message read
		seen uint64 // what was read, kept so that the reads are not dead code
	)
	for i := range n {
		var m pclient.ConsumerMessage
		select {
		case m = <-cons.Chan():
		case <-ctx.Done():
			return fmt.Errorf("%d of %d messages received within %v", i, n, timeout)
		}
		if read {
			buf = append(append(buf[:0], m.Payload()...), m.Key()...)
			if idx := m.Index(); idx != nil {
				seen += *idx
			}
			seen += uint64(len(buf)+len(m.Properties())) + uint64(m.EventTime().UnixNano()+m.PublishTime().UnixNano())
			for range work {
				for _, c := range buf {
					seen = seen*31 + uint64(c)
				}
			}
		}
		if ackEvery <= 0 {
			if err := cons.Ack(m.Message); err != nil {
				return err
			}
		} else {
			idx := m.ID().PartitionIdx()
			p := parts[idx]
			if p == nil {
				p = &pending{}
				parts[idx] = p
			}
			p.last, p.n = m.Message, p.n+1
			if p.n == ackEvery {
				if err := cons.AckCumulative(p.last); err != nil {
					return err
				}
				p.last, p.n = nil, 0
			}
		}
		if i == 0 {
			fmt.Println("first")
		}
		if i+1 == max(n/10, 1) {
			fmt.Println("tenth")
		}
	}
	for _, p := range parts {
		if p.last != nil {
			if err := cons.AckCumulative(p.last); err != nil {
				return err
			}
		}
	}
	if cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if read {
		fmt.Fprintln(os.Stderr, "read", seen) // what the reads computed, so that they stay in the program
	}
	fmt.Println("done")
	_, _ = io.Copy(io.Discard, os.Stdin) // the benchmark reads /proc while nothing moves
	return nil
}

// touchMemory writes to every page of mib MiB of memory it allocates.
func touchMemory(mib int) {
	b := make([]byte, mib<<20)
	for i := 0; i < len(b); i += os.Getpagesize() {
		b[i] = 1
	}
}
