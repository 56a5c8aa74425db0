// Package pulsartest is what tests of several packages need from a real
// Pulsar broker's admin REST API: topics in public/default and their
// subscription backlogs. It is a thin layer over the admin client every
// speaker of that API uses (pulsar-client-go's, made by
// internal/pulsaradmin.New): every method fails the test on an error.
//
// It stays for the test failures: the calls are the library's.
package pulsartest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// Admin talks to the admin API at URL (e.g. testenv.PulsarURL's second
// result). The zero value is not usable.
type Admin struct {
	URL string
}

// call runs op on topic (parsed as the clients do) with an admin client
// that keeps no idle connection, so no net/http goroutine outlives a test
// (goleak), and fails t on its error.
func (a Admin) call(t testing.TB, topic string, op func(context.Context, *pulsaradmin.Client, utils.TopicName) error) {
	t.Helper()
	c, err := pulsaradmin.New(pulsaradmin.Options{URL: a.URL, DisableKeepAlives: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), pulsaradmin.DefaultTimeout)
	defer cancel()
	var tn utils.TopicName
	if topic != "" {
		p, err := utils.GetTopicName(topic)
		if err != nil {
			t.Fatal(err)
		}
		tn = *p
	}
	if err := op(ctx, c, tn); err != nil {
		t.Fatalf("pulsar admin: %s: %v", topic, err)
	}
}

// CreateTopic creates the non-partitioned topic
// persistent://public/default/<short>.
func (a Admin) CreateTopic(t testing.TB, short string) {
	t.Helper()
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		return c.Topics().CreateWithContext(ctx, tn, 0)
	})
}

// CreatePartitioned creates persistent://public/default/<short> with n
// partitions.
func (a Admin) CreatePartitioned(t testing.TB, short string, n int) {
	t.Helper()
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		return c.Topics().CreateWithContext(ctx, tn, n)
	})
}

// CreateSubscription creates subscription sub on
// persistent://public/default/<short> (on each partition when
// partitioned), at its earliest message.
func (a Admin) CreateSubscription(t testing.TB, short, sub string) {
	t.Helper()
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		return c.Subscriptions().CreateWithContext(ctx, tn, sub, utils.Earliest)
	})
}

// Unload unloads persistent://public/default/<short>: its consumers and
// producers reconnect.
func (a Admin) Unload(t testing.TB, short string) {
	t.Helper()
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		return c.Topics().UnloadWithContext(ctx, tn)
	})
}

// Subscriptions returns the subscriptions of the non-partitioned topic
// persistent://public/default/<short>.
func (a Admin) Subscriptions(t testing.TB, short string) []string {
	t.Helper()
	var subs []string
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) (err error) {
		subs, err = c.Subscriptions().ListWithContext(ctx, tn)
		return err
	})
	return subs
}

// Topics returns the topics of namespace ("tenant/namespace"), persistent
// and non-persistent, partitions by their names.
func (a Admin) Topics(t testing.TB, namespace string) []string {
	t.Helper()
	var topics []string
	a.call(t, "", func(ctx context.Context, c *pulsaradmin.Client, _ utils.TopicName) error {
		ns, err := utils.GetNamespaceName(namespace)
		if err != nil {
			return err
		}
		_, topics, err = c.Topics().ListWithContext(ctx, *ns)
		return err
	})
	return topics
}

// Backlog returns the backlog of subscription sub on
// persistent://public/default/<short>, summed over its partitions when
// partitioned. A missing subscription fails t.
func (a Admin) Backlog(t testing.TB, short, sub string, partitioned bool) int64 {
	t.Helper()
	var subs map[string]utils.SubscriptionStats
	a.call(t, short, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		if partitioned {
			st, err := c.Topics().GetPartitionedStatsWithContext(ctx, tn, false)
			subs = st.Subscriptions
			return err
		}
		st, err := c.Topics().GetStatsWithContext(ctx, tn)
		subs = st.Subscriptions
		return err
	})
	s, ok := subs[sub]
	if !ok {
		t.Fatalf("topic %s has no subscription %q", short, sub)
	}
	return s.MsgBacklog
}

// Consumers returns the names of the consumers connected to subscription
// sub of one topic-partition (or non-partitioned topic).
func (a Admin) Consumers(t testing.TB, partition, sub string) []string {
	t.Helper()
	var names []string
	a.call(t, partition, func(ctx context.Context, c *pulsaradmin.Client, tn utils.TopicName) error {
		st, err := c.Topics().GetStatsWithContext(ctx, tn)
		for _, cs := range st.Subscriptions[sub].Consumers {
			names = append(names, cs.ConsumerName)
		}
		return err
	})
	return names
}

// WaitBacklog waits until the backlog is want, failing t after 20 s.
func (a Admin) WaitBacklog(t testing.TB, short, sub string, partitioned bool, want int64) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("the backlog of %s/%s to be %d", short, sub, want), func() bool {
		return a.Backlog(t, short, sub, partitioned) == want
	})
}
