// SPDX-License-Identifier: GPL-2.0-only

package fence

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// layout is the page whose first block names each package's floor.
const layout = "../../docs/layout.md"

// floors reads the floor of each package from the block of docs/layout.md
// whose lines read "floor N  room  package ...".
func floors(t *testing.T) map[string]int {
	f, err := os.Open(layout)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	of := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) < 4 || w[0] != "floor" {
			continue
		}
		n, err := strconv.Atoi(w[1])
		if err != nil {
			t.Fatalf("%s: %q: the floor is no number", layout, sc.Text())
		}
		for _, pkg := range w[3:] {
			if _, twice := of[pkg]; twice {
				t.Errorf("%s puts %s on two floors", layout, pkg)
			}
			of[pkg] = n
		}
	}
	if len(of) < 10 {
		t.Fatalf("%s names %d packages on floors: the block is gone", layout, len(of))
	}
	return of
}

// TestFloors holds the house to its picture: every package of the module
// (the tests' own aside) is on a floor, and none imports from a floor
// above its own.
func TestFloors(t *testing.T) {
	of := floors(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		w := strings.Fields(line)
		pkg := strings.TrimPrefix(w[0], module+"/")
		if pkg == "test" || strings.HasPrefix(pkg, "test/") {
			continue
		}
		listed[pkg] = true
		floor, ok := of[pkg]
		if !ok {
			t.Errorf("%s is on no floor of %s: add it to the room that owns it", pkg, layout)
			continue
		}
		for _, imp := range w[1:] {
			dep, own := strings.CutPrefix(imp, module+"/")
			if !own {
				continue
			}
			if f, ok := of[dep]; ok && f > floor {
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow upward", pkg, floor, dep, f)
			}
		}
	}
	for pkg := range of {
		if !listed[pkg] {
			t.Errorf("%s names %s, which is no package of the module", layout, pkg)
		}
	}
}
