package main

import "github.com/thalweg/thalweg/cmd/thalweg/internal/config"

// unorderedSource reports whether the source is not monotone: a Pulsar
// Shared or KeyShared subscription, where several workers may consume one
// partition and one takes over the messages another dropped, so a
// partition's seqs reach this worker with holes and may go down. The
// pipeline then starts a new span for a lower seq instead of stopping, and
// keeps its secondaries at-least-once with the unordered coverage rules
// (pipeline.Options.Unordered). Exclusive and Failover subscriptions, and
// the generator, are ordered. (There is no sole-consumer setting in the
// configuration: a Shared subscription is treated as unordered even when
// one worker consumes it, which costs nothing but rebuild reads.)
func unorderedSource(cfg *config.Config) bool {
	t := cfg.Source.Subscription.Type
	return cfg.Source.Kind == config.SourcePulsar && (t == config.SubShared || t == config.SubKeyShared)
}
