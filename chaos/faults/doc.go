// Package faults holds thalweg's fault-injection tests; it has no API.
//
// They run the real parts end to end on loopback — a lanes.Lane, the real
// Flight and Zerobus sinks, the real receiver and Zerobus server, and the
// Pebble offset store — and break one thing at a time:
//
//   - network (internal/testkit/faultproxy between sink and server): a cut
//     connection, a stalled one, a throttled one. Expected: the lane
//     poisons and rebuilds (or, when slow, nothing at all happens), every
//     batch ends up stored (duplicates allowed and counted, gaps never), and
//     the lane metrics show the poisoning by cause;
//   - the offset store's file system (Pebble errorfs, a delaying vfs): disk
//     full and failed syncs never release an upstream acknowledgement for an
//     offset that is not durable, the store reports itself unhealthy, and a
//     reopened store works once the fault is gone; slow syncs only delay;
//   - memory: a sink that never acknowledges makes Submit block at the lane
//     capacity (the producer stops pulling) and the heap stays within the
//     bound the capacity and batch size imply.
//
// Every test is bounded in time and listens on 127.0.0.1 only.
package faults
