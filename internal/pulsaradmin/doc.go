// Package pulsaradmin is the small part of Pulsar's admin REST API
// (/admin/v2) that thalweg needs, its one client of that API: for `thalweg
// offsets reset` a topic's partitions, the topics of a namespace, and
// moving a subscription's cursor to a timestamp, a message id, the earliest
// retained message or the end of the topic; for schema.mode pulsar a
// topic's schema by version from the schema registry (Schema, which
// internal/pulsarschema.Registry fetches through). The tests' broker
// set-up (internal/testkit/pulsartest, the chaos harness) goes through it
// too: creating and deleting topics, subscriptions and namespaces,
// retention, unloading a topic and its stats (manage.go).
//
// Cursor resets act on one topic-partition (or a non-partitioned topic);
// callers expand a partitioned topic with Partitions and reset each
// partition, so that a failure names the partition it concerns. The broker
// disconnects the subscription's consumers on a reset: run it with the
// workers stopped.
//
// Authentication and TLS follow the worker's source settings: a bearer
// token (Options.Token, or Options.TokenFile reread on every request, so a
// rotated token is picked up), and for https:// a CA bundle
// (Options.TLSCAFile; empty: the system roots). The token never appears in
// an error.
//
// A Client is safe for concurrent use. Every call is bounded by its context
// and by Options.Timeout per request; a request is not retried (an operator
// command reports the failure and may be run again: every call is
// idempotent).
package pulsaradmin
