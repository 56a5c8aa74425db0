// Package schemaevo holds the one set of schema evolution rules thalweg's
// servers (the Flight receiver and the Zerobus-compatible server) apply when
// a stream brings a schema that differs from what a dataset or table already
// stores. It imports nothing of thalweg.
//
// # Rules
//
// A store (dataset, table) remembers its merged schema: the union of every
// schema it accepted. A new schema S is compatible with the merged schema U
// when, with fields matched by name at every level of nesting (struct
// children, list elements, map entries, proto message fields):
//
//   - a field in both has the same type (for nested types: the same kind,
//     whose children follow these rules in turn); its nullability may
//     differ either way (U keeps it nullable if either is);
//   - a field only in S (added) is nullable;
//   - a field only in U (omitted by S) is nullable in U: readers see null
//     for it in the batches of S, which a nullable field already allowed;
//   - the order of fields does not matter, and new fields may go anywhere.
//
// Everything else is incompatible: a type change (int64 -> float64 is one:
// there is no implicit widening), a non-nullable field added, a
// non-nullable field removed, two fields of one name. Schema and field
// metadata never count. The guarantee is that every batch a store holds can
// be read as the merged schema (a null for each field a batch lacks).
//
// An incompatible change is reported as an *Error naming the first field
// that breaks the rules and the change, e.g.
// `field "amount": type int64 -> float64`; it is short and never a schema
// dump.
//
// It stays thalweg's own: arrow-go compares schemas for equality only and
// merges none; iceberg-go's schema evolution is Iceberg's (field ids),
// not these rules for Arrow schemas.
package schemaevo

import (
	"errors"
	"fmt"
	"strings"
)

// Field is the neutral form of one schema field the rules compare: Arrow
// fields and proto message fields are both converted to it (see FromArrow
// and FromProto).
type Field struct {
	Name string `json:"name"`
	// Type is the field's type without its children (leaf types in full,
	// e.g. "timestamp[ms, tz=UTC]"; nested ones by kind, e.g. "struct",
	// "fixed_size_list[4]"). Two fields have the same type when Type is
	// equal and Children are compatible.
	Type     string  `json:"type"`
	Nullable bool    `json:"nullable,omitempty"`
	Children []Field `json:"children,omitempty"`
}

// ErrIncompatible is the sentinel every *Error matches (errors.Is).
var ErrIncompatible = errors.New("incompatible schema change")

// Error is an incompatible change: the dotted path of the field and what
// changed.
type Error struct {
	Field  string // dotted path, e.g. "payload.amount"
	Change string // e.g. "type int64 -> float64"
}

func (e *Error) Error() string {
	return fmt.Sprintf("incompatible schema change: field %q: %s", e.Field, e.Change)
}

// Is makes every *Error match ErrIncompatible.
func (e *Error) Is(target error) bool { return target == ErrIncompatible }

// Merge checks next against merged (the union of the schemas accepted so
// far) and returns the new merged schema. merged nil means nothing was
// accepted yet: next becomes the merged schema. It returns an *Error for an
// incompatible change. Neither input is modified.
func Merge(merged, next []Field) ([]Field, error) {
	if merged == nil {
		if err := unique(next, ""); err != nil {
			return nil, err
		}
		return clone(next), nil
	}
	return mergeLevel(merged, next, "")
}

func mergeLevel(old, next []Field, prefix string) ([]Field, error) {
	if err := unique(next, prefix); err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(next))
	for i, f := range next {
		byName[f.Name] = i
	}
	out := make([]Field, 0, max(len(old), len(next)))
	seen := make(map[string]bool, len(old))
	for _, o := range old {
		seen[o.Name] = true
		path := prefix + o.Name
		i, ok := byName[o.Name]
		if !ok {
			if !o.Nullable {
				return nil, &Error{Field: path, Change: "non-nullable field removed"}
			}
			out = append(out, cloneField(o))
			continue
		}
		n := next[i]
		if o.Type != n.Type {
			return nil, &Error{Field: path, Change: fmt.Sprintf("type %s -> %s", short(o.Type), short(n.Type))}
		}
		m := Field{Name: o.Name, Type: o.Type, Nullable: o.Nullable || n.Nullable}
		if len(o.Children) > 0 || len(n.Children) > 0 {
			c, err := mergeLevel(o.Children, n.Children, path+".")
			if err != nil {
				return nil, err
			}
			m.Children = c
		}
		out = append(out, m)
	}
	for _, n := range next {
		if seen[n.Name] {
			continue
		}
		if !n.Nullable {
			return nil, &Error{Field: prefix + n.Name, Change: "non-nullable field added"}
		}
		out = append(out, cloneField(n))
	}
	return out, nil
}

func unique(fs []Field, prefix string) error {
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if seen[f.Name] {
			return &Error{Field: prefix + f.Name, Change: "appears twice"}
		}
		seen[f.Name] = true
	}
	return nil
}

// maxType bounds a type in an error message.
const maxType = 48

func short(t string) string {
	if len(t) <= maxType {
		return t
	}
	return strings.ToValidUTF8(t[:maxType], "") + "…"
}

func clone(fs []Field) []Field {
	if fs == nil {
		return nil
	}
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = cloneField(f)
	}
	return out
}

func cloneField(f Field) Field {
	f.Children = clone(f.Children)
	return f
}
