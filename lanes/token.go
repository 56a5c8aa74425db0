package lanes

import "github.com/thalweg/thalweg/batch"

// Token is the sealed set of confirmation kinds a lane can carry
// (docs/design.md#lane-separation). The lane's type parameter fixes the kind for its whole life, so
// a Lane[Coverage] statically cannot be handed a RawAnchor and vice versa:
// cross-lane confirmation bleed is a compile error, not a review item.
//
// The constraint lists exact types of this package (no ~), so no type
// outside lanes satisfies it. Adding a destination kind is one more union
// term plus one more case in confirmKind; the compiler then points at every
// exhaustive switch that needs the new arm.
type Token interface {
	RawAnchor | Coverage | NoCommit
}

// RawAnchor confirms a batch on the raw-anchor (recovery) lane: on durable
// confirmation the lane commits the batch's spans as the destination's
// delivered watermark (Committer.CommitDelivered) and, once that commit is
// synced, calls OnDurable(nil) — the moment the pipeline may acknowledge the
// covered records upstream.
//
// OnDurable is called exactly once per submitted token, in ascending offset
// order across the lane's tokens, from the Committer's callback (which the
// Committer contract orders) or from Close. It must not block and must not call the lane's Close. A non-nil error means the spans are NOT known durable (the commit
// failed, an earlier commit failed, or the lane was closed first): the
// caller must not acknowledge upstream; the records are redelivered after a
// restart. OnDurable may be nil.
type RawAnchor struct {
	OnDurable func(error)
}

// Coverage confirms a batch on a secondary (derived) lane: on durable
// confirmation the lane records the batch's spans as that destination's
// coverage (Committer.CommitCoverage). Coverage never gates the source, so
// the token carries no upstream callback.
type Coverage struct{}

// NoCommit confirms nothing: the lane only tracks delivery (tests, a sink
// whose position nobody recovers from).
type NoCommit struct{}

// Committer is the part of the offset store a lane needs. offsetstore.Store
// satisfies it; lanes does not import offsetstore.
//
// Both methods enqueue and return without waiting. onDurable is called
// exactly once, after the write was synced (nil) or failed (non-nil).
//
// Callback order: FIFO per Committer. The callbacks of all Commit* calls
// made on one Committer run in the order of those calls, one at a time —
// from one goroutine, or serialised so that each returns before the next
// starts; a Committer may call one synchronously inside its Commit* call
// (after Close, say) only once every earlier callback has returned. A
// commit reported durable thus implies every earlier commit was decided
// first. The lane releases RawAnchor tokens straight from these callbacks
// and re-sorts nothing; it checks the order, and a Committer that breaks it
// (a callback out of order, twice, or for no commit) fails the lane's
// commits with ErrCommitterContract wrapped in ErrCommitFailed.
// offsetstore.Store satisfies this: its notifier goroutine runs callbacks
// in ticket order. Callbacks may call Commit* again.
//
// spans are not modified by either side and may be retained.
type Committer interface {
	CommitDelivered(dest string, spans []batch.OffsetSpan, onDurable func(error))
	CommitCoverage(dest string, spans []batch.OffsetSpan, onDurable func(error))
}

// confirmKind is the compile-time token kind of a lane, resolved once in New.
type confirmKind uint8

const (
	kindRawAnchor confirmKind = iota + 1
	kindCoverage
	kindNoCommit
)

func (k confirmKind) String() string {
	switch k {
	case kindRawAnchor:
		return "raw-anchor"
	case kindCoverage:
		return "coverage"
	case kindNoCommit:
		return "no-commit"
	}
	return "unknown"
}

func kindOf[T Token]() confirmKind {
	var zero T
	switch any(zero).(type) {
	case RawAnchor:
		return kindRawAnchor
	case Coverage:
		return kindCoverage
	case NoCommit:
		return kindNoCommit
	}
	panic("lanes: unreachable: Token has a term kindOf does not handle")
}

// onDurable extracts the upstream callback of a token (nil unless RawAnchor).
func onDurable[T Token](tok T) func(error) {
	if ra, ok := any(tok).(RawAnchor); ok {
		return ra.OnDurable
	}
	return nil
}
