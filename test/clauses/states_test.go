// SPDX-License-Identifier: GPL-2.0-only

package clauses

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/test/dryrun"
)

// stateRow is a row of AUDIT.md's table of states: the state, its boots,
// what makes it and where it is judged.
var (
	stateRowRE   = regexp.MustCompile(`^\| ([a-z-]+) \| ([a-z0-9, -]+) \| (.+) \| (.+) \|$`)
	showsRowRE   = regexp.MustCompile(`^\| ((?:SM|BASE)-[A-Z]+-\d+\.\d+) \| ([a-z, -]+) \|$`)
	afterRE      = regexp.MustCompile(`^after ((?:SM|BASE)-[A-Z]+-\d+(?:, (?:SM|BASE)-[A-Z]+-\d+)*)$`)
	namedCheckRE = regexp.MustCompile(`^checkpoint "([^"]+)"$`)
)

// runsIn are, by boot, the requirements of the stackmap specs a dry run of
// the suite selects with the boot's label filter: the specs after which
// the checkpoint judges the always-true clauses.
func runsIn(t *testing.T) map[string][]string {
	suite := dryrun.Suite(t)
	out := map[string][]string{}
	for _, p := range contract.Plans() {
		for _, s := range dryrun.List(t, suite, p.Name, p.Labels.String(), 1) {
			if slices.Contains(s.Labels, contract.LabelStackmap) {
				out[p.Name] = append(out[p.Name], s.IDs...)
			}
		}
	}
	return out
}

// namedCheckpoints are the actions of the suite's explicit checkpoint
// calls: the format string each gives checkpoint().
func namedCheckpoints(t *testing.T) []string {
	var out []string
	for _, p := range readSuites(t, "suites") {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "checkpoint" {
					return true
				}
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out = append(out, s)
					}
				}
				return true
			})
		}
	}
	return out
}

// TestEveryStateIsJudged holds AUDIT.md's tables of states to the suite:
// every boot of the plan reaches a state some checkpoint judges; each
// state is judged after specs that run in its boots, or by a checkpoint
// the suite makes; the always-true clauses are the ones the checkpoints
// judge, and each says where it can show.
func TestEveryStateIsJudged(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "AUDIT.md"))
	if err != nil {
		t.Fatal(err)
	}
	runs := runsIn(t)
	named := namedCheckpoints(t)
	states := map[string]bool{}
	judgedBoots := map[string]bool{}
	shows := map[string]string{}
	_, section, ok := strings.Cut(string(data), "\n## Where the always-true clauses are judged\n")
	if !ok {
		t.Fatal("AUDIT.md has no section \"Where the always-true clauses are judged\"")
	}
	section, _, _ = strings.Cut(section, "\n## ") // up to the next section
	for _, line := range strings.Split(section, "\n") {
		if m := showsRowRE.FindStringSubmatch(line); m != nil {
			shows[m[1]] = m[2]
			continue
		}
		m := stateRowRE.FindStringSubmatch(line)
		if m == nil || m[1] == "state" {
			continue
		}
		state, boots := m[1], strings.Split(m[2], ", ")
		states[state] = true
		for _, at := range strings.Split(m[4], "; ") {
			if c := namedCheckRE.FindStringSubmatch(at); c != nil {
				if !slices.ContainsFunc(named, func(n string) bool { return strings.HasPrefix(n, c[1]) }) {
					t.Errorf("AUDIT.md: state %s is judged at checkpoint %q, which the suite does not make (it makes %q)", state, c[1], named)
				}
				continue
			}
			a := afterRE.FindStringSubmatch(at)
			if a == nil {
				t.Errorf("AUDIT.md: state %s: %q is neither `after SM-...` nor `checkpoint \"...\"`", state, at)
				continue
			}
			for _, req := range strings.Split(a[1], ", ") {
				in := slices.ContainsFunc(boots, func(b string) bool { return slices.Contains(runs[b], req) })
				if !in {
					t.Errorf("AUDIT.md: state %s is judged after %s, whose stackmap specs run in none of its boots %v", state, req, boots)
				}
			}
		}
		for _, b := range boots {
			if _, ok := runs[b]; !ok && !slices.ContainsFunc(contract.Plans(), func(p contract.BootPlan) bool { return p.Name == b }) {
				t.Errorf("AUDIT.md: state %s names boot %s, which the plan does not have", state, b)
			}
			judgedBoots[b] = true
		}
	}
	for _, p := range contract.Plans() {
		if !judgedBoots[p.Name] {
			t.Errorf("AUDIT.md: boot %s reaches states no row of the table of states judges", p.Name)
		}
	}
	if len(states) == 0 {
		t.Fatal("AUDIT.md has no table of states")
	}

	// The always-true clauses are the ones the checkpoints judge.
	bySpec, _ := readMarks(t, "suites")
	var atCheckpoints []string
	for id, specs := range bySpec {
		if slices.ContainsFunc(specs, func(s spec) bool { return s.IDs[0] == checkpointSpec }) {
			atCheckpoints = append(atCheckpoints, id)
		}
	}
	for _, id := range atCheckpoints {
		if !contract.IsInvariant(id) {
			t.Errorf("the checkpoints judge %s, which contract.Invariants does not list", id)
		}
	}
	for _, id := range contract.Invariants() {
		if !slices.Contains(atCheckpoints, id) {
			t.Errorf("contract.Invariants lists %s, which no checkpoint judges", id)
		}
		where, ok := shows[id]
		if !ok {
			t.Errorf("AUDIT.md: always-true clause %s has no row saying where it can show", id)
			continue
		}
		delete(shows, id)
		if where == "every state" {
			continue
		}
		for _, s := range strings.Split(where, ", ") {
			if !states[s] {
				t.Errorf("AUDIT.md: %s can show in state %q, which the table of states does not have", id, s)
			}
		}
	}
	for id := range shows {
		t.Errorf("AUDIT.md: %s has a row of where it can show, but is not always true", id)
	}
	t.Logf("%d states in %d boots, %d always-true clauses judged at every checkpoint", len(states), len(judgedBoots), len(contract.Invariants()))
}
