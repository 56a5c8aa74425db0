package pulsaradmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// The lifecycle operations the tests' broker set-up uses, on the real
// broker: a namespace with a retention policy, a partitioned and a plain
// topic in it, a subscription created at the start, stats and backlog,
// unloading, and deleting it all again.
func TestManage(t *testing.T) {
	b := newBroker(t)
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	ns := fmt.Sprintf("public/thalweg-pulsaradmin-%d", time.Now().UnixNano()%1e9)
	must("CreateNamespace", b.c.CreateNamespace(ctx, ns))
	want := Retention{TimeInMinutes: -1, SizeInMB: -1}
	must("SetRetention", b.c.SetRetention(ctx, ns, want))
	got, err := b.c.GetRetention(ctx, ns)
	must("GetRetention", err)
	if got != want {
		t.Fatalf("retention %+v, want %+v", got, want)
	}

	parted, plain := "persistent://"+ns+"/parted", "persistent://"+ns+"/plain"
	must("CreatePartitionedTopic", b.c.CreatePartitionedTopic(ctx, parted, 2))
	must("CreateTopic", b.c.CreateTopic(ctx, plain))
	if err := b.c.CreatePartitionedTopic(ctx, parted+"-none", 0); err == nil {
		t.Fatal("CreatePartitionedTopic with 0 partitions succeeded")
	}
	list, err := b.c.PartitionedTopics(ctx, ns)
	must("PartitionedTopics", err)
	if !slices.Equal(list, []string{parted}) {
		t.Fatalf("PartitionedTopics = %v, want [%s]", list, parted)
	}
	must("CreateSubscription", b.c.CreateSubscription(ctx, parted, "s", Earliest))
	must("CreateSubscription", b.c.CreateSubscription(ctx, plain, "s", Earliest))

	c := b.client(t)
	produce(t, c, parted, 0, 6)
	produce(t, c, plain, 0, 4)
	pst, err := b.c.PartitionedStats(ctx, parted)
	must("PartitionedStats", err)
	if n := pst.Subscriptions["s"].MsgBacklog; n != 6 {
		t.Fatalf("partitioned backlog %d, want 6", n)
	}
	var sum int64
	for i := range 2 {
		st, err := b.c.Stats(ctx, fmt.Sprintf("%s-partition-%d", parted, i))
		must("Stats", err)
		sum += st.Subscriptions["s"].MsgBacklog
	}
	if sum != 6 {
		t.Fatalf("backlog summed over the partitions %d, want 6", sum)
	}
	must("Unload", b.c.Unload(ctx, plain))
	st, err := b.c.Stats(ctx, plain)
	must("Stats", err)
	if n := st.Subscriptions["s"].MsgBacklog; n != 4 {
		t.Fatalf("plain backlog after unload %d, want 4", n)
	}
	equal(t, "plain from the created subscription", drain(t, c, plain, "s", time.Second), seq(0, 4))

	if err := b.c.DeleteNamespace(ctx, ns); err == nil {
		t.Fatal("DeleteNamespace succeeded with topics left")
	}
	must("DeletePartitionedTopic", b.c.DeletePartitionedTopic(ctx, parted, true))
	must("DeleteTopic", b.c.DeleteTopic(ctx, plain, true))
	must("DeleteNamespace", b.c.DeleteNamespace(ctx, ns))
	if _, err := b.c.GetRetention(ctx, ns); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetRetention of the deleted namespace: %v, want ErrNotFound", err)
	}
	if _, err := b.c.Topics(ctx, "public"); err == nil {
		t.Fatal("Topics accepted a namespace without a tenant")
	}
}
