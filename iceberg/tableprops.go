package iceberg

import (
	"maps"
	"slices"
	"strconv"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The table properties that bound a table's metadata by construction,
// which iceberg-go honours on the Sink's commit path (docs/iceberg.md,
// "Operating a table"):
const (
	// DefaultMetadataVersionsMax is write.metadata.previous-versions-max:
	// the metadata log keeps this many earlier metadata.json files, and
	// with write.metadata.delete-after-commit.enabled (true) every commit
	// deletes the ones that fall out of it. Iceberg's own default keeps
	// 100 and deletes none. Fewer files cost the ability to roll the table
	// back to an older metadata file; snapshots are unaffected.
	DefaultMetadataVersionsMax = 10
	// DefaultManifestMinMergeCount is commit.manifest.min-count-to-merge,
	// with commit.manifest-merge.enabled (true): an append whose snapshot
	// would hold this many manifests of less than the target size merges
	// them into one, so a snapshot holds fewer manifests than this plus
	// one per full target-size manifest. Iceberg's own default is 100 and
	// merging off (every append adds a manifest for good). A lower count
	// merges more often: each merge rewrites the entries of the small
	// manifests, a cost that grows with the table's file count.
	DefaultManifestMinMergeCount = 16
	// DefaultManifestTargetSize is commit.manifest.target-size-bytes, the
	// size merged manifests are bin-packed to (Iceberg's own default).
	DefaultManifestTargetSize = 8 << 20
)

// boundedMetadataProps are the table properties of DefaultMetadataVersionsMax,
// DefaultManifestMinMergeCount and DefaultManifestTargetSize.
func boundedMetadataProps() iceberg.Properties {
	return iceberg.Properties{
		table.MetadataDeleteAfterCommitEnabledKey: "true",
		table.MetadataPreviousVersionsMaxKey:      strconv.Itoa(DefaultMetadataVersionsMax),
		table.ManifestMergeEnabledKey:             "true",
		table.ManifestMinMergeCountKey:            strconv.Itoa(DefaultManifestMinMergeCount),
		table.ManifestTargetSizeBytesKey:          strconv.Itoa(DefaultManifestTargetSize),
	}
}

// missingBoundedMetadataProps are those of boundedMetadataProps that have
// no value in have: a value set on the table (by a user, with any engine)
// is never replaced, not even by one that disables the bound.
func missingBoundedMetadataProps(have iceberg.Properties) iceberg.Properties {
	out := iceberg.Properties{}
	for k, v := range boundedMetadataProps() {
		if _, ok := have[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// propsList is p as "k=v" pairs in key order, for a log line.
func propsList(p iceberg.Properties) []string {
	out := make([]string, 0, len(p))
	for _, k := range slices.Sorted(maps.Keys(p)) {
		out = append(out, k+"="+p[k])
	}
	return out
}

// reportBoundsSet logs, once, the bounded-metadata properties the commit
// that just succeeded set (committer goroutine only).
func (s *Sink) reportBoundsSet() {
	if len(s.boundsSet) == 0 {
		return
	}
	s.opts.Logger.Info("iceberg table properties set to bound its metadata (a value already on the table is kept)",
		"table", s.opts.Table, "set", propsList(s.boundsSet))
	s.boundsSet = nil
}
