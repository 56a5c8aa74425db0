package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalid matches (errors.Is) every *Error: the configuration could not
// be loaded or did not validate.
var ErrInvalid = errors.New("invalid configuration")

// FieldError is one problem with one field.
type FieldError struct {
	// Path is the dotted field path, e.g. destinations[1].lane.capacity.
	// Empty for problems that belong to no field (YAML syntax, an unset
	// environment variable).
	Path string
	// Line is the 1-based line in the YAML text, 0 when unknown (a Config
	// built in Go). For a missing field it is the line of the enclosing
	// mapping.
	Line int
	// Msg says what was expected and, where it is not secret, what was found.
	Msg string
	// Err is the underlying error when there is one (e.g. ErrSecret); Msg
	// already includes its text.
	Err error
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Error renders "line N: path: msg", leaving out what is unknown.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	e.writeTail(&b)
	return b.String()
}

func (e *FieldError) writeTail(b *strings.Builder) {
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
}

// Error is every problem one loading step found, in document order where
// the step allows it. It unwraps to its *FieldErrors, so errors.As finds
// each, and errors.Is(err, ErrInvalid) holds.
type Error struct {
	// File is the config file name when the error came from Load.
	File     string
	Problems []*FieldError
}

// Error puts one problem on each line, prefixed "file:line: " when both are
// known (the compiler convention editors jump to).
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case e.File != "" && p.Line > 0:
			fmt.Fprintf(&b, "%s:%d: ", e.File, p.Line)
		case e.File != "":
			b.WriteString(e.File)
			b.WriteString(": ")
		case p.Line > 0:
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
		p.writeTail(&b)
	}
	return b.String()
}

// Unwrap returns the problems.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// maxProblems bounds the problems one step reports: past that, more
// detail does not help the reader, and a generated document with a
// million bad keys must not cost a million messages.
const maxProblems = 100

// checker collects problems; lines (may be nil) maps paths to lines.
type checker struct {
	lines    map[string]int
	problems []*FieldError
	dropped  int
}

func (c *checker) addf(path, format string, args ...any) {
	c.add(&FieldError{Path: path, Line: c.line(path), Msg: fmt.Sprintf(format, args...)})
}

// addErr records a problem caused by err, which stays reachable by errors.Is.
func (c *checker) addErr(path string, err error) {
	c.add(&FieldError{Path: path, Line: c.line(path), Msg: err.Error(), Err: err})
}

func (c *checker) add(p *FieldError) {
	if len(c.problems) >= maxProblems {
		c.dropped++
		return
	}
	c.problems = append(c.problems, p)
}

// line finds the line of path, or of its nearest written ancestor for a
// field that was left out.
func (c *checker) line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := c.lines[p]; ok {
			return l
		}
	}
	return 0
}

// enum checks that v is one of allowed; an empty v is reported as missing.
func (c *checker) enum(path, v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	if v == "" {
		c.addf(path, "required (one of %s)", strings.Join(allowed, "|"))
	} else {
		c.addf(path, "must be one of %s, got %q", strings.Join(allowed, "|"), clip(v))
	}
	return false
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	if c.dropped > 0 {
		c.problems = append(c.problems, &FieldError{Msg: fmt.Sprintf("… and %d more problems", c.dropped)})
	}
	return &Error{Problems: c.problems}
}

// parentPath strips the last element: a.b[2].c → a.b[2] → a.b → a → "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// clip shortens a value echoed in a message so that a pasted blob does not
// flood the terminal.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
