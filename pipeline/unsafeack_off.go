//go:build !thalweg_unsafe_ack

package pipeline

// ackBeforeDurable is false in every real build. The chaos tests build the
// worker once with the tag thalweg_unsafe_ack to show that acknowledging
// upstream on submit, before the delivered offset is durable, loses data
// after a crash — and that this build does not.
const ackBeforeDurable = false
