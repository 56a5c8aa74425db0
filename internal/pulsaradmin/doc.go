// Package pulsaradmin makes the client of Pulsar's admin REST API
// (/admin/v2) that every part of thalweg uses: pulsar-client-go's
// (github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin, its Topics,
// Subscriptions, Namespaces, ... with the types of .../pkg/utils), over a
// transport of thalweg's. `thalweg offsets reset` moves cursors with it,
// schema.mode pulsar's registry (internal/pulsarschema.Registry) fetches
// schemas through it, and the tests' broker set-up
// (internal/testkit/pulsartest, the chaos harness) creates topics,
// subscriptions and namespaces and reads stats with it.
//
// The package holds only what the library does not do as thalweg needs:
//
//   - New builds the library's client on its own transport (Options). The
//     library reads a token file once; thalweg rereads Options.TokenFile on
//     every request, so a rotated token is picked up (authTransport, the
//     library's auth.Provider). The library's transport ignores a CA file
//     that holds no certificate and bounds a request only by a 5-minute
//     client timeout; New refuses such a file (ErrOptions), bounds each
//     request by Options.Timeout as well as its context, and can keep no
//     idle connection (Options.DisableKeepAlives) for a client that is
//     never closed or must leave no goroutine behind.
//   - ResetCursor: the library's utils.MessageID does not send its batch
//     index, so its ResetCursorToMessageID always moves the cursor to the
//     start of the entry. ResetCursor sends it: with batch-index
//     acknowledgement the broker delivers the entry from that index on.
//   - Schema: the library's schema calls take no context, and the one that
//     returns the latest version with its number writes every error to
//     standard output. Schema makes the same request through the library's
//     REST client, with a context, and returns the library's
//     utils.SchemaInfoWithVersion.
//   - IsNotFound: the library's errors are rest.Error values with the HTTP
//     status; IsNotFound matches a 404 (no such topic, subscription or
//     schema).
//
// The library's errors name neither the request nor the topic: callers
// add the topic. No error carries the token. The library's
// Topics().List answers an error with goroutines that stay blocked (it
// stops reading its four requests' answers at the first error); thalweg
// lists topics only in `thalweg offsets reset`, which exits after, and in
// tests.
//
// A Client is safe for concurrent use. A request is not retried (an
// operator command reports the failure and may be run again: every call
// thalweg makes is idempotent).
package pulsaradmin
