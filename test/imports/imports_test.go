// SPDX-License-Identifier: GPL-2.0-only

// Package imports holds the project's Go files to one layout of imports:
// the standard library, then other modules, then this module's, one group
// each. goimports -local sorts inside groups but leaves an import moved
// into the wrong group where it is; this test finds it.
package imports

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ftrace-stackmap/conformance"

// kind orders the groups: standard library, other modules, this module.
func kind(path string) int {
	switch {
	case path == module || strings.HasPrefix(path, module+"/"):
		return 2
	case strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 1
	}
	return 0
}

var kinds = []string{"the standard library", "other modules", "this module"}

func TestImportGroups(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "build", "results", "testdata", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		checked++
		if problem := checkFile(path); problem != "" {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: %s (fix: make fmt, then move the import to its kind's group)", rel, problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk missed the project", checked)
	}
}

// checkFile says what is wrong with a file's import groups, "" if nothing.
func checkFile(path string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		return err.Error()
	}
	last, line, group := -1, 0, -1
	seen := map[int]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		k, l := kind(p), fset.Position(imp.Pos()).Line
		newGroup := group < 0 || l > line+1
		line = l
		switch {
		case newGroup && seen[k]:
			return p + " starts a second group of " + kinds[k]
		case newGroup && k < last:
			return p + ": " + kinds[k] + " after " + kinds[last]
		case !newGroup && k != group:
			return p + " (" + kinds[k] + ") in a group of " + kinds[group]
		}
		if newGroup {
			group = k
		}
		seen[k], last = true, k
	}
	return ""
}
