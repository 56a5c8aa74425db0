//go:build thalweg_unsafe_ack

package pipeline

// ackBeforeDurable breaks invariant 5 on purpose: the chaos tests' "red"
// build. Never ship a binary built with thalweg_unsafe_ack.
const ackBeforeDurable = true
