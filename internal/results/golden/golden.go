// SPDX-License-Identifier: GPL-2.0-only

// Package golden compares a renderer's output with the file that holds it
// in testdata, byte for byte, so that a review shows every changed line of
// a report. Run the tests with -update to write the files from the code:
//
//	go test ./internal/results ./internal/review ./harness -update
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the golden files in testdata from the code's output")

// testdata is the package's own: a test may change directory.
var testdata = func() string {
	wd, _ := os.Getwd() // go test starts in the package's directory
	return filepath.Join(wd, "testdata")
}()

// Check fails t when got differs from the file testdata/name, naming the
// first line that differs; with -update it writes got there instead.
func Check(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if want := string(b); got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Errorf("testdata/%s differs from line %d (go test -update rewrites it):\ngot:  %q\nwant: %q", name, i+1, at(g, i), at(w, i))
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}
