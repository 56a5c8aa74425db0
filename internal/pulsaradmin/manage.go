package pulsaradmin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Earliest is the message id before every retained message: a
// subscription created at it reads the topic from its start.
var Earliest = MessageID{Ledger: -1, Entry: -1, Batch: -1}

// nsPath validates namespace ("tenant/namespace") and returns it escaped
// for a path.
func nsPath(namespace string) (string, error) {
	parts := strings.Split(namespace, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", fmt.Errorf("pulsaradmin: namespace: want tenant/namespace, got %q", namespace)
	}
	return url.PathEscape(parts[0]) + "/" + url.PathEscape(parts[1]), nil
}

// topicPath parses topic and returns its path below /admin/v2/.
func topicPath(topic string) (string, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return "", err
	}
	return "/admin/v2/" + t.path(), nil
}

// CreateTopic creates the non-partitioned topic.
func (c *Client) CreateTopic(ctx context.Context, topic string) error {
	p, err := topicPath(topic)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, p, nil, nil)
}

// CreatePartitionedTopic creates topic with n partitions.
func (c *Client) CreatePartitionedTopic(ctx context.Context, topic string, n int) error {
	p, err := topicPath(topic)
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("pulsaradmin: partitioned topic %s: want at least 1 partition, got %d", topic, n)
	}
	return c.do(ctx, http.MethodPut, p+"/partitions", n, nil)
}

// DeleteTopic deletes the non-partitioned topic (or one partition); force
// deletes it even while producers or consumers are attached.
func (c *Client) DeleteTopic(ctx context.Context, topic string, force bool) error {
	p, err := topicPath(topic)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, p+forceQuery(force), nil, nil)
}

// DeletePartitionedTopic deletes the partitioned topic with its
// partitions; force as for DeleteTopic.
func (c *Client) DeletePartitionedTopic(ctx context.Context, topic string, force bool) error {
	p, err := topicPath(topic)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, p+"/partitions"+forceQuery(force), nil, nil)
}

func forceQuery(force bool) string {
	if force {
		return "?force=true"
	}
	return ""
}

// Unload unloads topic from its broker: its producers and consumers are
// disconnected and reconnect to the broker that loads it next.
func (c *Client) Unload(ctx context.Context, topic string) error {
	p, err := topicPath(topic)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, p+"/unload", nil, nil)
}

// CreateSubscription creates subscription sub on topic (on every
// partition of a partitioned topic) with its cursor at id (Earliest: the
// start).
func (c *Client) CreateSubscription(ctx context.Context, partition, sub string, id MessageID) error {
	p, err := c.subPath(partition, sub)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, p, positionBody(id), nil)
}

// position is a cursor position as the broker's subscription endpoints
// take it.
type position struct {
	Ledger     int64 `json:"ledgerId"`
	Entry      int64 `json:"entryId"`
	Partition  int32 `json:"partitionIndex"`
	Batch      int32 `json:"batchIndex"`
	IsExcluded bool  `json:"isExcluded"`
}

func positionBody(id MessageID) position {
	return position{Ledger: id.Ledger, Entry: id.Entry, Partition: -1, Batch: max(id.Batch, -1)}
}

// TopicStats is the part of a topic's stats the tests and tools read.
type TopicStats struct {
	Subscriptions map[string]SubscriptionStats `json:"subscriptions"`
}

// SubscriptionStats is one subscription's view of a topic (or of every
// partition, summed, in PartitionedStats).
type SubscriptionStats struct {
	MsgBacklog         int64           `json:"msgBacklog"`
	ActiveConsumerName string          `json:"activeConsumerName"`
	Consumers          []ConsumerStats `json:"consumers"`
}

// ConsumerStats is one consumer attached to a subscription.
type ConsumerStats struct {
	ConsumerName    string `json:"consumerName"`
	UnackedMessages int64  `json:"unackedMessages"`
}

// Stats returns the stats of one topic-partition or non-partitioned
// topic.
func (c *Client) Stats(ctx context.Context, partition string) (TopicStats, error) {
	return c.stats(ctx, partition, "/stats")
}

// PartitionedStats returns the stats of a partitioned topic, summed over
// its partitions.
func (c *Client) PartitionedStats(ctx context.Context, topic string) (TopicStats, error) {
	return c.stats(ctx, topic, "/partitioned-stats")
}

func (c *Client) stats(ctx context.Context, topic, suffix string) (TopicStats, error) {
	var st TopicStats
	p, err := topicPath(topic)
	if err != nil {
		return st, err
	}
	err = c.do(ctx, http.MethodGet, p+suffix, nil, &st)
	return st, err
}

// PartitionedTopics returns the partitioned topics of namespace
// ("tenant/namespace") in domain "persistent".
func (c *Client) PartitionedTopics(ctx context.Context, namespace string) ([]string, error) {
	return c.topicList(ctx, namespace, "/partitioned")
}

// topicList returns the list of topics at suffix below namespace's
// persistent topics.
func (c *Client) topicList(ctx context.Context, namespace, suffix string) ([]string, error) {
	ns, err := nsPath(namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	err = c.do(ctx, http.MethodGet, "/admin/v2/persistent/"+ns+suffix, nil, &names)
	return names, err
}

// CreateNamespace creates namespace ("tenant/namespace") in an existing
// tenant.
func (c *Client) CreateNamespace(ctx context.Context, namespace string) error {
	ns, err := nsPath(namespace)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, "/admin/v2/namespaces/"+ns, nil, nil)
}

// DeleteNamespace deletes namespace; the broker refuses while it has
// topics.
func (c *Client) DeleteNamespace(ctx context.Context, namespace string) error {
	ns, err := nsPath(namespace)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/admin/v2/namespaces/"+ns, nil, nil)
}

// Retention is a namespace's retention policy for acknowledged messages:
// -1 is unlimited, 0 none.
type Retention struct {
	TimeInMinutes int `json:"retentionTimeInMinutes"`
	SizeInMB      int `json:"retentionSizeInMB"`
}

// SetRetention sets namespace's retention policy.
func (c *Client) SetRetention(ctx context.Context, namespace string, r Retention) error {
	ns, err := nsPath(namespace)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "/admin/v2/namespaces/"+ns+"/retention", r, nil)
}

// GetRetention returns namespace's retention policy.
func (c *Client) GetRetention(ctx context.Context, namespace string) (Retention, error) {
	var r Retention
	ns, err := nsPath(namespace)
	if err != nil {
		return r, err
	}
	err = c.do(ctx, http.MethodGet, "/admin/v2/namespaces/"+ns+"/retention", nil, &r)
	return r, err
}
