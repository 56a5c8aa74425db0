// Package fieldpath builds the paths that decode errors name a value by,
// outermost first, as the decoders of batch and internal/pulsarschema
// write them: a field name, "[i]" for a list element, "{key}" for a map
// value. A decoder finds the failing value first and prepends each
// enclosing step on the way out.
//
// It stays thalweg's own: the path syntax is thalweg's error format
// (28 lines), which no library defines.
package fieldpath

// Field returns path with the field name in front of it: joined by a dot
// to a following name, directly to a following "[...]" or "{...}".
func Field(name, path string) string {
	switch {
	case path == "":
		return name
	case path[0] == '[' || path[0] == '{':
		return name + path
	default:
		return name + "." + path
	}
}

// Segment returns path with seg ("[i]" or "{key}") in front of it, joined
// by a dot to a following name.
func Segment(seg, path string) string {
	if path == "" || path[0] == '[' || path[0] == '{' {
		return seg + path
	}
	return seg + "." + path
}
