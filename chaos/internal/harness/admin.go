package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/thalweg/thalweg/internal/pulsaradmin"
)

// Admin is the chaos tests' view of one broker's admin REST API (v2): a
// thin layer over the admin client every speaker of that API uses
// (pulsar-client-go's, made by internal/pulsaradmin.New). It keeps no idle
// connections, so no net/http goroutine outlives a test.
type Admin struct {
	c *pulsaradmin.Client
}

// NewAdmin returns an admin client for the broker's HTTP URL, e.g.
// http://127.0.0.1:8080; an invalid URL fails t.
func NewAdmin(t testing.TB, url string) *Admin {
	t.Helper()
	c, err := pulsaradmin.New(pulsaradmin.Options{URL: url, DisableKeepAlives: true})
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return &Admin{c: c}
}

// Retention of a namespace's topics.
type Retention int

const (
	// Pruning: no retention. An acknowledged message may be deleted by the
	// broker at any time (in practice when its ledger is trimmed): once
	// the subscription moved past it, it is gone for good.
	Pruning Retention = iota
	// Retaining: unlimited retention (time and size -1). Acknowledged
	// messages stay, and a cursor can be rewound over them.
	Retaining
)

func (r Retention) String() string {
	if r == Retaining {
		return "retaining"
	}
	return "pruning"
}

// Namespace creates public/<prefix>-<random> with the given retention and
// registers a cleanup that deletes it with its topics. It returns the
// namespace as "public/<name>".
func (a *Admin) Namespace(t testing.TB, prefix string, ret Retention) string {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	ns := "public/" + prefix + "-" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.c.Namespaces().CreateNamespaceWithContext(ctx, ns); err != nil {
		t.Fatalf("harness: namespace %s: %v", ns, err)
	}
	pol := utils.RetentionPolicies{}
	if ret == Retaining {
		pol = utils.NewRetentionPolicies(-1, -1)
	}
	if err := a.c.Namespaces().SetRetentionWithContext(ctx, ns, pol); err != nil {
		t.Fatalf("harness: namespace %s: %v", ns, err)
	}
	got, err := a.c.Namespaces().GetRetentionWithContext(ctx, ns)
	if err != nil {
		t.Fatalf("harness: namespace %s: %v", ns, err)
	}
	if *got != pol {
		t.Fatalf("harness: namespace %s retention is %+v, want %+v", ns, got, pol)
	}
	t.Cleanup(func() { a.deleteNamespace(t, ns) })
	return ns
}

// deleteNamespace deletes ns and its topics, best effort: a leftover
// namespace is only litter on a development broker.
func (a *Admin) deleteNamespace(t testing.TB, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if name, err := utils.GetNamespaceName(ns); err == nil {
		parted, topics, _ := a.c.Topics().ListWithContext(ctx, *name)
		for _, topic := range parted {
			if tn, err := utils.GetTopicName(topic); err == nil {
				_ = a.c.Topics().DeleteWithContext(ctx, *tn, true, false)
			}
		}
		for _, topic := range topics {
			if tn, err := utils.GetTopicName(topic); err == nil {
				_ = a.c.Topics().DeleteWithContext(ctx, *tn, true, true)
			}
		}
	}
	if err := a.c.Namespaces().DeleteNamespaceWithContext(ctx, ns); err != nil {
		t.Logf("harness: namespace %s left behind: %v", ns, err)
	}
}

// Topic is a partitioned topic created by CreateTopic.
type Topic struct {
	Name       string // persistent://tenant/ns/name
	Partitions int
}

// partition is the name of partition i of tp.
func (tp Topic) partition(i int) string { return tp.Name + "-partition-" + strconv.Itoa(i) }

// CreateTopic creates the partitioned topic persistent://<ns>/<name>.
func (a *Admin) CreateTopic(t testing.TB, ns, name string, partitions int) Topic {
	t.Helper()
	tp := Topic{Name: "persistent://" + ns + "/" + name, Partitions: partitions}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tn, err := utils.GetTopicName(tp.Name)
	if err == nil {
		err = a.c.Topics().CreateWithContext(ctx, *tn, partitions)
	}
	if err != nil {
		t.Fatalf("harness: topic %s: %v", tp.Name, err)
	}
	return tp
}

// SubStats is one partition's view of a subscription.
type SubStats = utils.SubscriptionStats

// PartitionStats returns the subscription's stats on every partition of tp,
// by partition index. A partition without the subscription yet has zero stats.
func (a *Admin) PartitionStats(ctx context.Context, tp Topic, sub string) ([]SubStats, error) {
	out := make([]SubStats, tp.Partitions)
	for i := range out {
		tn, err := utils.GetTopicName(tp.partition(i))
		if err != nil {
			return nil, err
		}
		st, err := a.c.Topics().GetStatsWithContext(ctx, *tn)
		if err != nil {
			return nil, fmt.Errorf("stats of %s: %w", tn, err)
		}
		out[i] = st.Subscriptions[sub]
	}
	return out, nil
}

// ErrNoSubscription is returned by Backlog before the first consumer created
// the subscription.
var ErrNoSubscription = errors.New("harness: no such subscription")

// Backlog returns the subscription's backlog summed over tp's partitions.
func (a *Admin) Backlog(ctx context.Context, tp Topic, sub string) (int64, error) {
	tn, err := utils.GetTopicName(tp.Name)
	if err != nil {
		return 0, err
	}
	st, err := a.c.Topics().GetPartitionedStatsWithContext(ctx, *tn, false)
	if err != nil {
		return 0, fmt.Errorf("stats of %s: %w", tp.Name, err)
	}
	s, ok := st.Subscriptions[sub]
	if !ok {
		return 0, fmt.Errorf("%w: topic %s, subscription %q", ErrNoSubscription, tp.Name, sub)
	}
	return s.MsgBacklog, nil
}

// WaitBacklog polls until the subscription's backlog is 0, failing the test
// after timeout with the last value seen. It fails early if stop is closed
// (e.g. the worker that should drain the backlog exited).
func (a *Admin) WaitBacklog(t testing.TB, tp Topic, sub string, timeout time.Duration, stop <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last int64 = -1
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		n, err := a.Backlog(ctx, tp, sub)
		cancel()
		if err == nil && n == 0 {
			return
		}
		last, lastErr = n, err
		if time.Now().After(deadline) {
			t.Fatalf("harness: subscription %q on %s still has backlog %d after %v (err %v)", sub, tp.Name, last, timeout, lastErr)
		}
		select {
		case <-stop:
			t.Fatalf("harness: stopped waiting for the backlog of %q on %s at %d: the draining process exited", sub, tp.Name, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ResetCursor rewinds (or forwards) the subscription on every partition of
// tp to the first message published at or after ts. The broker disconnects
// the subscription's consumers to do so; call it while none is attached.
func (a *Admin) ResetCursor(t testing.TB, tp Topic, sub string, ts time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range tp.Partitions {
		tn, err := utils.GetTopicName(tp.partition(i))
		if err == nil {
			err = a.c.Subscriptions().ResetCursorToTimestampWithContext(ctx, *tn, sub, ts.UnixMilli())
		}
		if err != nil {
			t.Fatalf("harness: resetting %q on %s: %v", sub, tp.partition(i), err)
		}
	}
}

// markDelete returns the position up to which sub has acknowledged
// everything on one partition (its cursor's mark-delete position,
// ledger:entry, from the partition's internal stats).
func (a *Admin) markDelete(ctx context.Context, partition, sub string) (string, error) {
	tn, err := utils.GetTopicName(partition)
	if err != nil {
		return "", err
	}
	st, err := a.c.Topics().GetInternalStatsWithContext(ctx, *tn)
	if err != nil {
		return "", fmt.Errorf("internal stats of %s: %w", partition, err)
	}
	cur, ok := st.Cursors[sub]
	if !ok {
		return "", fmt.Errorf("%w: %s has no cursor %q", ErrNoSubscription, partition, sub)
	}
	return cur.MarkDeletePosition, nil
}
