package config

import (
	"bytes"
	"fmt"
	"strings"
)

// interpolate expands ${VAR}, ${VAR:-default} and $$ in data (see the
// package documentation for the rules). lookupEnv must not be nil. All
// problems are collected; messages name variables, never their values.
func interpolate(data []byte, lookupEnv func(string) (string, bool)) ([]byte, []*FieldError) {
	if !bytes.Contains(data, []byte{'$'}) {
		return data, nil
	}
	var (
		out  = make([]byte, 0, len(data)+len(data)/8)
		errs []*FieldError
	)
	for lineNo, rest := 1, data; len(rest) > 0; lineNo++ {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' {
			out = append(out, line...)
			continue
		}
		out, errs = expandLine(out, errs, line, lineNo, lookupEnv)
	}
	if n := len(errs) - maxProblems; n > 0 {
		errs = append(errs[:maxProblems], &FieldError{Msg: fmt.Sprintf("… and %d more problems", n)})
	}
	return out, errs
}

func expandLine(out []byte, errs []*FieldError, line []byte, lineNo int, lookupEnv func(string) (string, bool)) ([]byte, []*FieldError) {
	fail := func(format string, args ...any) {
		errs = append(errs, &FieldError{Line: lineNo, Msg: fmt.Sprintf(format, args...)})
	}
	for i := 0; i < len(line); {
		c := line[i]
		if c != '$' || i+1 == len(line) {
			out = append(out, c)
			i++
			continue
		}
		switch line[i+1] {
		case '$':
			out = append(out, '$')
			i += 2
			continue
		case '{':
		default:
			out = append(out, '$')
			i++
			continue
		}
		end := bytes.IndexByte(line[i+2:], '}')
		if end < 0 {
			fail("unterminated ${ (write $$ for a literal $)")
			return append(out, line[i:]...), errs
		}
		expr := string(line[i+2 : i+2+end])
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(expr, ":-")
		if !isEnvName(name) {
			fail("invalid variable reference ${%s}: want ${NAME} or ${NAME:-default} with NAME matching [A-Za-z_][A-Za-z0-9_]*", clip(expr))
			continue
		}
		v, set := lookupEnv(name)
		switch {
		case hasDef && v == "":
			v = def
		case !set:
			fail("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
			continue
		}
		if strings.ContainsAny(v, "\r\n") {
			// A line break would let a value inject YAML structure.
			fail("environment variable %s contains a line break, which interpolation does not allow", name)
			continue
		}
		out = append(out, v...)
	}
	return out, errs
}

// isEnvName reports whether s is a portable environment variable name.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
