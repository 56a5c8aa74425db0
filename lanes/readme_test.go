package lanes_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The README's library example is the deliver function of
// example_resume_test.go, verbatim, so that the code a reader copies is the
// code Example_resume compiles and runs.
func TestReadmeQuotesLibraryExample(t *testing.T) {
	const file = "example_resume_test.go"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "deliver" {
			want = string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
		}
	}
	if want == "" {
		t.Fatalf("%s has no func deliver", file)
	}

	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## As a library\n")
	if !ok {
		t.Fatal(`README.md has no "## As a library" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		t.Fatal("the library section of README.md has no ```go block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the ```go block of the library section is not closed")
	}
	if block != want {
		t.Fatalf("README.md's library example differs from func deliver in %s; paste it again.\nREADME:\n%s\n\n%s:\n%s",
			file, block, file, want)
	}
}
