package flightwire

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// Pool tiers: powers of two from 2^poolMinShift (below it gRPC does not pool:
// mem.IsBelowBufferPoolingThreshold) to 2^poolMaxShift. A larger buffer is
// allocated and dropped on Put: messages that large are rare (the row split
// keeps a message under the gRPC limit, 16 MiB by default, and gRPC's own
// buffers are frame-sized, 16 KiB), and pinning them would hold memory the
// documented bound does not count.
const (
	poolMinShift = 10
	poolMaxShift = 22 // 4 MiB
	// recvMaxShift is the largest tier of RecvPool: the receiver's
	// default largest message, 64 MiB.
	recvMaxShift = 26
)

// DirtyPool is a gRPC buffer pool (mem.BufferPool) that does not zero a
// buffer on Get. gRPC's default pool clears the whole capacity of every
// buffer it hands out (a 1 MiB size class for every message between 32 KiB
// and 1 MiB): on a Flight stream of large batches that clearing costs as
// much CPU as the copy it precedes.
//
// Not zeroing is safe because every user of a pool in grpc-go v1.85 writes
// the part of the buffer it then reads: a DATA frame is read into a buffer of
// exactly its length (io.ReadFull), the socket reader returns only the bytes
// read, MaterializeToBuffer and the receive-buffer compaction copy exactly
// the length they ask for, and the write buffer sends only what was copied
// into it. Nothing stale can therefore reach a message or the wire.
//
// It is safe for concurrent use. Pass it with experimental.WithBufferPool
// (client) or experimental.BufferPool (server). The zero DirtyPool is ready
// to use; Pool is the one the process's Flight speakers share.
type DirtyPool struct {
	// maxShift is the largest tier, 2^maxShift bytes; 0 stands for
	// poolMaxShift.
	maxShift int
	tiers    [recvMaxShift - poolMinShift + 1]sync.Pool
}

// Pool is the process's shared DirtyPool.
var Pool = &DirtyPool{}

// RecvPool holds the buffers DoPut messages are gathered into
// (ReceivedData): tiers up to 64 MiB, as a receiver's messages go up to
// its largest message size and are given back once stored.
var RecvPool = &DirtyPool{maxShift: recvMaxShift}

var _ mem.BufferPool = (*DirtyPool)(nil)

// tier returns the index of the smallest tier holding size bytes, or -1
// when size exceeds the largest tier.
func (p *DirtyPool) tier(size int) int {
	if size <= 1<<poolMinShift {
		return 0
	}
	maxShift := p.maxShift
	if maxShift == 0 {
		maxShift = poolMaxShift
	}
	s := bits.Len(uint(size - 1))
	if s > maxShift {
		return -1
	}
	return s - poolMinShift
}

// Get returns a buffer of length size whose contents are undefined.
func (p *DirtyPool) Get(size int) *[]byte {
	t := p.tier(size)
	if t < 0 {
		b := make([]byte, size)
		return &b
	}
	if b, ok := p.tiers[t].Get().(*[]byte); ok {
		*b = (*b)[:size]
		return b
	}
	b := make([]byte, size, 1<<(t+poolMinShift))
	return &b
}

// Put returns a buffer obtained from Get; a buffer of another capacity is
// dropped.
func (p *DirtyPool) Put(b *[]byte) {
	c := cap(*b)
	if c < 1<<poolMinShift || c&(c-1) != 0 {
		return
	}
	if t := p.tier(c); t >= 0 {
		p.tiers[t].Put(b)
	}
}

// WriteBufferSize and ReadBufferSize are the gRPC connection buffers of the
// sink (writes) and the receiver (reads): gRPC's 32 KiB default costs a
// write system call per 32 KiB, nine per 280 KB batch.
const (
	WriteBufferSize = 256 << 10
	ReadBufferSize  = 256 << 10
)

// poison is the byte a released ReceivedData's buffer is filled with when
// poisonReleased.
const poison = 0xa5

// SendMemory bounds what a Flight stream's send holds beside the batch
// itself, given one message of msgBytes (the batch, or the sink's max
// message size when smaller): the connection's write buffer, and with
// compression on the compressed body. Without compression the body is
// sent from the batch's own buffers (EncodeBatch).
func SendMemory(compressed bool, msgBytes int64) int64 {
	if compressed {
		return msgBytes + WriteBufferSize
	}
	return WriteBufferSize
}
