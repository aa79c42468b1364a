// SPDX-License-Identifier: GPL-2.0-only

// Package clauses audits the contract clause by clause: every clause of
// CONTRACT.md has spec lines that check it (a `// clause <ID>` comment in
// suites/), every such comment names a clause that exists, every fault
// switch names a clause of its own requirement, and CLAUSES.md, the table
// of all three, is up to date.
package clauses

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
)

var update = flag.Bool("update", false, "write CLAUSES.md again")

const root = "../.."

// open are the clauses no spec checks yet, and why: each one is a known
// gap, listed in CLAUSES.md. A clause that gains a spec must leave it.
var open = map[string]string{}

var (
	clauseRE = regexp.MustCompile(`^- \[((?:SM|BASE)-[A-Z]+-\d+\.\d+)\] (.*)$`)
	markRE   = regexp.MustCompile(`// clause ((?:(?:SM|BASE)-[A-Z]+-\d+\.\d+ ?)+)$`)
	idRE     = regexp.MustCompile(`^((?:SM|BASE)-[A-Z]+-\d+)\.\d+$`)
)

type clause struct {
	ID, Text string
	Lines    []string // spec lines, file:line
	Faults   []string
}

// readContract returns CONTRACT.md's clauses in order, each with the
// first line of its sentence.
func readContract(t *testing.T) []*clause {
	f, err := os.Open(filepath.Join(root, "CONTRACT.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var list []*clause
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := clauseRE.FindStringSubmatch(sc.Text()); m != nil {
			list = append(list, &clause{ID: m[1], Text: m[2]})
		}
	}
	return list
}

// readMarks returns every clause comment under suites/, by clause.
func readMarks(t *testing.T) map[string][]string {
	marks := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "suites"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(data), "\n") {
			if m := markRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				for _, id := range strings.Fields(m[1]) {
					marks[id] = append(marks[id], fmt.Sprintf("%s:%d", rel, i+1))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return marks
}

func TestClauses(t *testing.T) {
	list := readContract(t)
	if len(list) == 0 {
		t.Fatal("CONTRACT.md has no clauses")
	}
	byID := map[string]*clause{}
	for _, c := range list {
		if byID[c.ID] != nil {
			t.Errorf("clause %s appears twice in CONTRACT.md", c.ID)
		}
		byID[c.ID] = c
		req := idRE.FindStringSubmatch(c.ID)[1]
		if _, ok := contract.Requirements[req]; !ok {
			t.Errorf("clause %s: no requirement %s", c.ID, req)
		}
	}
	for req := range contract.Requirements {
		if byID[req+".1"] == nil {
			t.Errorf("requirement %s has no clauses in CONTRACT.md", req)
		}
	}
	for id, lines := range readMarks(t) {
		c := byID[id]
		if c == nil {
			t.Errorf("%s: a spec line checks clause %s, which CONTRACT.md no longer has", strings.Join(lines, ", "), id)
			continue
		}
		c.Lines = lines
	}
	for _, f := range mutants.Faults() {
		c := byID[f.Clause]
		switch {
		case f.Clause == "":
			t.Errorf("fault %s names no clause", f.Name)
		case c == nil:
			t.Errorf("fault %s breaks clause %s, which CONTRACT.md does not have", f.Name, f.Clause)
		default:
			c.Faults = append(c.Faults, f.Name)
		}
	}
	for _, c := range list {
		why, isOpen := open[c.ID]
		switch {
		case len(c.Lines) == 0 && !isOpen:
			t.Errorf("clause %s has no spec line (a `// clause %s` comment in suites/): %s", c.ID, c.ID, c.Text)
		case len(c.Lines) > 0 && isOpen:
			t.Errorf("clause %s is checked by %s: take it out of the open list (%s)", c.ID, strings.Join(c.Lines, ", "), why)
		}
	}
	for id := range open {
		if byID[id] == nil {
			t.Errorf("the open list names clause %s, which CONTRACT.md does not have", id)
		}
	}

	table := render(list)
	path := filepath.Join(root, "CLAUSES.md")
	if *update {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || string(old) != table {
		t.Errorf("CLAUSES.md is not the table of CONTRACT.md, suites/ and the fault switches: go test ./test/clauses -update")
	}
}

// render writes the table: one row per clause.
func render(list []*clause) string {
	var b strings.Builder
	covered, faulted, faults := 0, 0, 0
	for _, c := range list {
		if len(c.Lines) > 0 {
			covered++
		}
		if len(c.Faults) > 0 {
			faulted++
		}
		faults += len(c.Faults)
	}
	b.WriteString("# Clauses, the spec lines that check them, the faults that break them\n\n")
	b.WriteString("Written by `go test ./test/clauses -update` from CONTRACT.md, the\n")
	b.WriteString("`// clause` comments in suites/ and the fault table of internal/mutants.\n")
	b.WriteString("Do not edit.\n\n")
	fmt.Fprintf(&b, "%d clauses; %d checked by a spec, %d broken by at least one of %d fault switches.\n\n",
		len(list), covered, faulted, faults)
	b.WriteString("| clause | spec lines | faults |\n|---|---|---|\n")
	for _, c := range list {
		lines := strings.Join(c.Lines, "<br>")
		if why, ok := open[c.ID]; ok {
			lines = "none: " + why
		}
		sort.Strings(c.Faults)
		faults := strings.Join(slices.Compact(c.Faults), ", ")
		if faults == "" {
			faults = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.ID, lines, faults)
	}
	return b.String()
}
