// Package harness runs thalweg's chaos tests against real processes: the
// worker binary (`thalweg run`), the durable Flight receiver (`thalweg
// receive`) as a separate process that outlives worker kills, a real Pulsar
// broker driven through its admin REST API, and a pulsar-client-go producer
// writing sequence-numbered records.
//
// # What is counted
//
// The producer numbers records 1, 2, 3, ... in a JSON payload
// {"id":N,"p":P,...}, independent of the engine's sequence numbers, and
// routes record N to partition P = (N-1) mod partitions itself, so the
// payload names the partition the broker stored it in; it keeps the
// broker's message id of every confirmed send. The sink is read back with
// flight.ReadAll and either tallied by payload id (as verify.PayloadPartition of a
// verify.Tally: ReadTally, TallyRows) or read row by row with its identity columns
// (ReadRows) and checked against the broker's message ids (CheckIdentity:
// missing, duplicates, keys shared by two records, and each row's topic,
// partition, message_id and seq). Either way "nothing lost" is judged at the
// sink against what the broker accepted, never from the worker's counters.
//
// # Stalls
//
// StallWatch polls a subscription's mark-delete position of every partition
// through the admin REST API and records every interval between two rises:
// how long a partition stood still (Longest, Quantile).
//
// # Processes
//
// Every process is started with Pdeathsig SIGKILL, so none outlives the test
// binary, and a test cleanup kills whatever is still running. Each
// process's stdout and stderr go to a log file; on failure the tests print
// its tail.
//
// Nothing here listens on anything but 127.0.0.1.
package harness
