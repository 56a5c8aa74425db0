package iceberg

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/thalweg/thalweg/batch"
)

// The placeholders of a table template (Options.Table, OpenTables): parts
// of the topic of the partition a record comes from.
const (
	// PlaceholderTopic is the topic's short name: without the
	// persistent://tenant/namespace/ prefix and without the -partition-N
	// suffix ("orders" of persistent://public/default/orders-partition-3).
	PlaceholderTopic = "{topic}"
	// PlaceholderTenant is the topic's Pulsar tenant ("public").
	PlaceholderTenant = "{tenant}"
	// PlaceholderNamespace is the topic's Pulsar namespace ("default").
	PlaceholderNamespace = "{namespace}"
)

// ErrTemplate wraps every error of a table template.
var ErrTemplate = errors.New("iceberg: table template")

// IsTemplate reports whether a table name is a template: it names a
// placeholder (holds a brace). A name without one is one table.
func IsTemplate(name string) bool { return strings.ContainsAny(name, "{}") }

// tableTemplate is a parsed table template: its dot-separated parts, the
// last the table's name, the others its namespace.
type tableTemplate struct {
	raw   string
	parts [][]token
}

// token is a literal or, when ph is set, a placeholder.
type token struct {
	lit string
	ph  string
}

// ParseTemplate checks a table template: "namespace.table" whose parts
// are letters, digits and underscores and the placeholders {topic},
// {tenant} and {namespace}, at least one of them; no part may be empty.
func ParseTemplate(s string) error {
	_, err := parseTemplate(s)
	return err
}

func parseTemplate(s string) (tableTemplate, error) {
	t := tableTemplate{raw: s}
	segs := strings.Split(s, ".")
	if len(segs) < 2 {
		return t, fmt.Errorf("%w %q: want namespace.table", ErrTemplate, s)
	}
	placeholders := 0
	for _, seg := range segs {
		if seg == "" {
			return t, fmt.Errorf("%w %q: a part is empty (want namespace.table)", ErrTemplate, s)
		}
		var toks []token
		for seg != "" {
			open := strings.IndexByte(seg, '{')
			if open < 0 {
				toks = append(toks, token{lit: seg})
				break
			}
			if open > 0 {
				toks = append(toks, token{lit: seg[:open]})
			}
			end := strings.IndexByte(seg[open:], '}')
			if end < 0 {
				return t, fmt.Errorf("%w %q: %q has no closing brace", ErrTemplate, s, seg[open:])
			}
			ph := seg[open : open+end+1]
			switch ph {
			case PlaceholderTopic, PlaceholderTenant, PlaceholderNamespace:
			default:
				return t, fmt.Errorf("%w %q: unknown placeholder %s (want %s, %s or %s)", ErrTemplate, s, ph,
					PlaceholderTopic, PlaceholderTenant, PlaceholderNamespace)
			}
			toks = append(toks, token{ph: ph})
			placeholders++
			seg = seg[open+end+1:]
		}
		for _, tk := range toks {
			if i := strings.IndexFunc(tk.lit, func(r rune) bool { return !nameRune(r) }); i >= 0 {
				return t, fmt.Errorf("%w %q: %q outside a placeholder (want letters, digits, underscores)", ErrTemplate, s, tk.lit[i:i+1])
			}
		}
		t.parts = append(t.parts, toks)
	}
	if placeholders == 0 {
		return t, fmt.Errorf("%w %q: names no placeholder", ErrTemplate, s)
	}
	return t, nil
}

// nameRune reports whether r is kept by sanitise.
func nameRune(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

// sanitise replaces every character outside [A-Za-z0-9_] by '_': the
// characters every catalog accepts in a name, none of which is the dot
// that separates namespace levels.
func sanitise(s string) string {
	return strings.Map(func(r rune) rune {
		if nameRune(r) {
			return r
		}
		return '_'
	}, s)
}

// TopicOf splits the topic of a partition name (batch.OffsetSpan) into
// its tenant, namespace and short name: persistent://t/ns/orders-partition-3
// gives ("t", "ns", "orders"). A name that is not a Pulsar topic's
// (another source's partition) has no tenant and no namespace and is its
// own short name.
func TopicOf(partition string) (tenant, namespace, topic string) {
	base, _ := batch.SplitPartition(partition)
	if i := strings.Index(base, "://"); i >= 0 {
		if p := strings.SplitN(base[i+3:], "/", 3); len(p) == 3 {
			return p[0], p[1], p[2]
		}
	}
	return "", "", base
}

// render is the table of partition: the placeholders replaced by its
// topic's sanitised parts. A part left empty (a {tenant} of a partition
// that has none) is an error.
func (t tableTemplate) render(partition string) (string, error) {
	tenant, ns, topic := TopicOf(partition)
	var sb strings.Builder
	for i, toks := range t.parts {
		if i > 0 {
			sb.WriteByte('.')
		}
		n := sb.Len()
		for _, tk := range toks {
			switch tk.ph {
			case "":
				sb.WriteString(tk.lit)
			case PlaceholderTopic:
				sb.WriteString(sanitise(topic))
			case PlaceholderTenant:
				sb.WriteString(sanitise(tenant))
			case PlaceholderNamespace:
				sb.WriteString(sanitise(ns))
			}
		}
		if sb.Len() == n {
			return "", fmt.Errorf("%w %q: partition %q gives an empty part", ErrTemplate, t.raw, partition)
		}
	}
	return sb.String(), nil
}

// matchers are, per part, a pattern of the names render can give it.
func (t tableTemplate) matchers() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(t.parts))
	for i, toks := range t.parts {
		var sb strings.Builder
		sb.WriteString("^")
		for _, tk := range toks {
			if tk.ph == "" {
				sb.WriteString(regexp.QuoteMeta(tk.lit))
			} else {
				sb.WriteString("[A-Za-z0-9_]*")
			}
		}
		sb.WriteString("$")
		out[i] = regexp.MustCompile(sb.String())
	}
	return out
}
