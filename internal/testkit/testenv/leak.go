package testenv

import "go.uber.org/goleak"

// LeakOptions are the goleak options of every package whose tests run a
// Pulsar client or a worker: the goroutines it ignores are known leaks of a
// dependency, not of thalweg, and nothing thalweg does can end them.
//
//   - (*partitionConsumer).grabConn.func1: when a consumer (re)connects, the
//     client announces the connection to the consumer's dispatcher from a
//     goroutine of its own, on an unbuffered channel. A consumer closed
//     between the connect and that send has no dispatcher left to receive
//     it, and the goroutine blocks on the send for the life of the process
//     (pulsar-client-go v0.19.0, consumer_partition.go). A test that closes
//     a consumer during a reconnect (broker restarts, failover, a worker
//     stopped while it reconnects) can leave one behind.
//   - (*ConcurrencyLimitScheduler).periodicGranter: pebble.Open registers
//     its compaction scheduler, whose ticker goroutine only Close stops; an
//     Open that fails after that point (replaying the WAL, writing the
//     options file, syncing the directory: a full or failing disk) returns
//     without unregistering it (pebble v2.1.7, open.go). offsetstore's
//     tests ignore it for the same reason.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/apache/pulsar-client-go/pulsar.(*partitionConsumer).grabConn.func1"),
		goleak.IgnoreTopFunction("github.com/cockroachdb/pebble/v2.(*ConcurrencyLimitScheduler).periodicGranter"),
	}
}
