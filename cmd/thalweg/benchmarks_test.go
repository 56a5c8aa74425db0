package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/thalweg/thalweg/internal/testkit/testenv"
)

// A figure of BENCHMARKS.md says which code it measured, in a marker under
// its heading:
//
//	<!-- measured commit=cee9fae packages=batch,internal/pulsarschema -->
//
// The packages are directories from the module root whose non-test Go files
// the figure measures. When one of them changed after the commit, the line
// after the marker says so:
//
//	> Measured at cee9fae; `batch` changed since: the figures describe the code of that commit.
//
// and when none did, no such line may stand there (CONTRIBUTING.md,
// "Benchmarks").
var (
	benchMarkerRE = regexp.MustCompile(`^<!-- measured commit=([0-9a-f]{7,40}) packages=([a-z0-9_/,]+) -->$`)
	benchStaleRE  = regexp.MustCompile("^> Measured at ([0-9a-f]{7,40}); (`[a-z0-9_/]+`(?:, `[a-z0-9_/]+`)*) changed since: the figures describe the code of that commit\\.$")
)

// benchMarker is one marker of BENCHMARKS.md and the stale note after it.
type benchMarker struct {
	line     int
	section  string // the heading above it
	commit   string
	packages []string
	stale    []string // the packages the note says changed; nil without a note
	noteLine int
}

// benchMarkers reads the markers of doc, and names every "## " section
// that has none (except those listed in unmarked).
func benchMarkers(doc string, unmarked ...string) (marks []benchMarker, bare []string, problems []string) {
	lines := strings.Split(doc, "\n")
	section, heading, marked := "", "", true
	closeSection := func() {
		if section != "" && !marked && !slices.Contains(unmarked, section) {
			bare = append(bare, section)
		}
	}
	for i, line := range lines {
		if strings.HasPrefix(line, "## ") {
			closeSection()
			section, marked = strings.TrimPrefix(line, "## "), false
			heading = section
			continue
		}
		if strings.HasPrefix(line, "### ") {
			heading = strings.TrimPrefix(line, "### ")
		}
		if strings.HasPrefix(line, "<!-- measured") {
			m := benchMarkerRE.FindStringSubmatch(line)
			if m == nil {
				problems = append(problems, fmt.Sprintf("BENCHMARKS.md:%d: malformed marker %q", i+1, line))
				continue
			}
			marked = true
			mk := benchMarker{line: i + 1, section: heading, commit: m[1], packages: strings.Split(m[2], ",")}
			for j := i + 1; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "" {
					continue
				}
				if n := benchStaleRE.FindStringSubmatch(lines[j]); n != nil {
					if n[1] != mk.commit {
						problems = append(problems, fmt.Sprintf("BENCHMARKS.md:%d: the note names %s, the marker %s", j+1, n[1], mk.commit))
					}
					for _, p := range strings.Split(n[2], ", ") {
						mk.stale = append(mk.stale, strings.Trim(p, "`"))
					}
					mk.noteLine = j + 1
				} else if strings.HasPrefix(lines[j], "> Measured at") {
					problems = append(problems, fmt.Sprintf("BENCHMARKS.md:%d: malformed note %q", j+1, lines[j]))
				}
				break
			}
			marks = append(marks, mk)
		}
	}
	closeSection()
	return marks, bare, problems
}

// staleProblems compares each marker's note with changed, which returns
// the packages of a marker changed after its commit.
func staleProblems(marks []benchMarker, changed func(benchMarker) ([]string, error)) ([]string, error) {
	var out []string
	for _, mk := range marks {
		got, err := changed(mk)
		if err != nil {
			return nil, err
		}
		switch {
		case len(got) > 0 && !slices.Equal(got, mk.stale):
			note := "> Measured at " + mk.commit + "; `" + strings.Join(got, "`, `") + "` changed since: the figures describe the code of that commit."
			out = append(out, fmt.Sprintf("BENCHMARKS.md:%d (%s): %s changed after %s; measure again and name the new commit, or say so on the next line: %q",
				mk.line, mk.section, strings.Join(got, ", "), mk.commit, note))
		case len(got) == 0 && mk.stale != nil:
			out = append(out, fmt.Sprintf("BENCHMARKS.md:%d (%s): nothing of %s changed after %s; drop the note",
				mk.noteLine, mk.section, strings.Join(mk.packages, ", "), mk.commit))
		}
	}
	return out, nil
}

// Every section of BENCHMARKS.md names the commit it measured and its
// packages, and says so when those packages changed after that commit.
func TestBenchmarksNameTheirCommit(t *testing.T) {
	const root = "../.."
	git := testenv.GitHistory(t, root)
	data, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	marks, bare, problems := benchMarkers(string(data), "Tried and not kept")
	for _, s := range bare {
		problems = append(problems, fmt.Sprintf("BENCHMARKS.md: section %q names no commit: add a <!-- measured commit=... packages=... --> marker", s))
	}
	if len(marks) < 10 {
		t.Fatalf("found %d markers; the parsing is broken", len(marks))
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(git, append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	stale, err := staleProblems(marks, func(mk benchMarker) ([]string, error) {
		if _, err := run("merge-base", "--is-ancestor", mk.commit, "HEAD"); err != nil {
			return nil, fmt.Errorf("BENCHMARKS.md:%d: commit %s is not in this branch's history: %w", mk.line, mk.commit, err)
		}
		var changed []string
		for _, p := range mk.packages {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				return nil, fmt.Errorf("BENCHMARKS.md:%d: package %s: %w", mk.line, p, err)
			}
			last, err := run("log", "-1", "--format=%h", mk.commit+"..HEAD", "--",
				":(glob)"+p+"/*.go", ":(glob,exclude)"+p+"/*_test.go")
			if err != nil {
				return nil, err
			}
			if last != "" {
				changed = append(changed, p)
			}
		}
		return changed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(problems, stale...) {
		t.Error(p)
	}
}

// The marker check flags a section whose packages changed after its commit
// and carries no note, a note that no change justifies, and a section with
// no marker.
func TestBenchmarksMarkersFlagStale(t *testing.T) {
	doc := strings.Join([]string{
		"## A (`a`)",
		"<!-- measured commit=1111111 packages=a -->",
		"figures",
		"## B (`b`)",
		"<!-- measured commit=2222222 packages=b,c -->",
		"> Measured at 2222222; `c` changed since: the figures describe the code of that commit.",
		"## C (`c`)",
		"<!-- measured commit=3333333 packages=c -->",
		"",
		"> Measured at 3333333; `c` changed since: the figures describe the code of that commit.",
		"## D",
		"no marker",
		"## Tried and not kept",
	}, "\n")
	marks, bare, problems := benchMarkers(doc, "Tried and not kept")
	if len(problems) > 0 || !slices.Equal(bare, []string{"D"}) || len(marks) != 3 {
		t.Fatalf("markers %+v, unmarked %v, problems %v", marks, bare, problems)
	}
	changedAfter := map[string][]string{"1111111": {"a"}, "2222222": {"c"}, "3333333": nil}
	got, err := staleProblems(marks, func(mk benchMarker) ([]string, error) { return changedAfter[mk.commit], nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "BENCHMARKS.md:2 (A (`a`)): a changed after 1111111") ||
		!strings.HasPrefix(got[1], "BENCHMARKS.md:10 (C (`c`)): nothing of c changed after 3333333; drop the note") {
		t.Errorf("problems:\n%s", strings.Join(got, "\n"))
	}
}
