package offsetstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Key layout, version 2. See doc.go for the prose version.
//
//	"v"                          -> uvarint(layoutVersion)
//	"d" dest 0x00 partition name -> uvarint(seq) upstream-id   (delivered)
//	"c" dest 0x00 partition name -> uvarint(seq) upstream-id   (coverage)
//
// Version 1 keyed watermarks by a store-local partition id (be32) and kept
// a registry "p" name -> be32(id); its seqs were counters of that store.
// Open refuses it (ErrFormat), Migrate rewrites it.
const (
	layoutVersion   = 2
	layoutVersionV1 = 1

	prefixVersion     byte = 'v'
	prefixPartitionV1 byte = 'p'
	prefixDelivered   byte = 'd'
	prefixCoverage    byte = 'c'
)

// Limits on names, so that a key stays a key and not a payload.
const (
	maxDestinationLen   = 1024
	maxPartitionNameLen = 4096
	maxUpstreamIDLen    = 4096
)

// kind selects which watermark of a (destination, partition) pair a write
// or read addresses. Its value is the key prefix.
type kind byte

const (
	kindDelivered = kind(prefixDelivered)
	kindCoverage  = kind(prefixCoverage)
)

func (k kind) String() string {
	switch k {
	case kindDelivered:
		return "delivered"
	case kindCoverage:
		return "coverage"
	default:
		return fmt.Sprintf("kind(%d)", byte(k))
	}
}

// wmKey identifies one watermark.
type wmKey struct {
	kind      kind
	dest      string
	partition string
}

var versionKey = []byte{prefixVersion}

func watermarkKey(k wmKey) []byte {
	b := make([]byte, 0, 1+len(k.dest)+1+len(k.partition))
	b = append(b, byte(k.kind))
	b = append(b, k.dest...)
	b = append(b, 0)
	return append(b, k.partition...)
}

var errCorruptKey = errors.New("offsetstore: corrupt key")

func decodeWatermarkKey(key []byte) (wmKey, error) {
	if len(key) < 1+1+1+1 {
		return wmKey{}, fmt.Errorf("%w %q: too short", errCorruptKey, key)
	}
	k := kind(key[0])
	if k != kindDelivered && k != kindCoverage {
		return wmKey{}, fmt.Errorf("%w %q: unknown prefix", errCorruptKey, key)
	}
	rest := key[1:]
	nul := bytes.IndexByte(rest, 0)
	if nul <= 0 || nul == len(rest)-1 {
		return wmKey{}, fmt.Errorf("%w %q: bad destination/partition framing", errCorruptKey, key)
	}
	return wmKey{kind: k, dest: string(rest[:nul]), partition: string(rest[nul+1:])}, nil
}

func encodePosition(p Position) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(p.ID))
	b = binary.AppendUvarint(b, p.Seq)
	return append(b, p.ID...)
}

func decodePosition(v []byte) (Position, error) {
	seq, n := binary.Uvarint(v)
	if n <= 0 {
		return Position{}, errors.New("offsetstore: corrupt position value: bad uvarint")
	}
	var id []byte
	if len(v) > n {
		id = bytes.Clone(v[n:])
	}
	return Position{Seq: seq, ID: id}, nil
}

func validateDestination(dest string) error {
	switch {
	case dest == "":
		return fmt.Errorf("%w: destination is empty", ErrInvalidName)
	case len(dest) > maxDestinationLen:
		return fmt.Errorf("%w: destination is %d bytes, limit %d", ErrInvalidName, len(dest), maxDestinationLen)
	case strings.IndexByte(dest, 0) >= 0:
		return fmt.Errorf("%w: destination %q contains NUL", ErrInvalidName, dest)
	}
	return nil
}

func validatePartitionName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: partition name is empty", ErrInvalidName)
	case len(name) > maxPartitionNameLen:
		return fmt.Errorf("%w: partition name is %d bytes, limit %d", ErrInvalidName, len(name), maxPartitionNameLen)
	}
	return nil
}
