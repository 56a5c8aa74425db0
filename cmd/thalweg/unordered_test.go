package main

import (
	"testing"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
)

func TestUnorderedSource(t *testing.T) {
	for _, tc := range []struct {
		kind config.SourceKind
		typ  config.SubscriptionType
		want bool
	}{
		{config.SourcePulsar, config.SubShared, true},
		{config.SourcePulsar, config.SubKeyShared, true},
		{config.SourcePulsar, config.SubFailover, false},
		{config.SourcePulsar, config.SubExclusive, false},
		{config.SourcePulsar, "", false}, // failover by default
		{config.SourceGenerator, config.SubShared, false},
	} {
		cfg := &config.Config{}
		cfg.Source.Kind, cfg.Source.Subscription.Type = tc.kind, tc.typ
		if got := unorderedSource(cfg); got != tc.want {
			t.Errorf("kind %q type %q: unordered = %v, want %v", tc.kind, tc.typ, got, tc.want)
		}
	}
}
