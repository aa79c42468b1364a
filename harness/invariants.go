// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// The contract's always-true clauses (every id resolves, the counters
// agree with the blocks, ...) must hold in every state the suite reaches,
// not only in the one their own spec makes. A checkpoint reads the
// kernel's state after an action of any spec and judges each of them
// there. A clause broken at a checkpoint fails its own requirement, in a
// result of its own that the run's report gains (InvariantCase), and the
// spec whose state it was is UNRESOLVED naming that requirement: one
// cause, one failure.

// InvariantCase is the case key of a requirement's result for the
// clauses broken at checkpoints of a boot: <boot>.<ID>.invariants.
const InvariantCase = "invariants"

// violation is a clause broken at a checkpoint.
type violation struct {
	id   string // the clause's requirement
	text string // the clause's mark and what was found
	at   string // the state: the action that led to it, and the spec
}

// invariants is what the run's checkpoints found.
var invariants struct {
	mu          sync.Mutex
	checkpoints int
	spent       time.Duration // reading and judging, for the oracle's cost
	broken      []violation   // of requirements other than the spec's own
}

// Checkpoint is one reading of the kernel's state, after an action.
type Checkpoint struct {
	at     string
	start  time.Time
	broken []violation
}

// NewCheckpoint starts judging the state an action left ("after the map
// filled"), in the spec running now.
func NewCheckpoint(format string, args ...any) *Checkpoint {
	at := fmt.Sprintf(format, args...)
	if spec := CurrentSpecReport().LeafNodeText; spec != "" {
		at += ", in " + spec
	}
	return &Checkpoint{at: at, start: time.Now()}
}

// Hold records what a check of an always-true clause found here: nil when
// the clause held.
func (c *Checkpoint) Hold(clause func() string, err error) {
	if err == nil {
		return
	}
	mark := clause()
	id, rest := contract.ClauseOf(mark)
	if rest != "" {
		mark += ":" // the clause's words, then what was found
	}
	c.broken = append(c.broken, violation{id: contract.RequirementOf(id), text: mark + " " + err.Error(), at: c.at})
}

// Done ends the checkpoint. A clause of the running spec's own
// requirement fails the spec; any other broken clause is kept for its
// requirement's result, and the spec, whose state broke it, is
// UNRESOLVED naming the first.
func (c *Checkpoint) Done() {
	own := CurrentSpecReport().Labels()
	invariants.mu.Lock()
	invariants.checkpoints++
	invariants.spent += time.Since(c.start)
	var first *violation
	for i, v := range c.broken {
		if slices.Contains(own, v.id) {
			invariants.mu.Unlock()
			Fail(v.text+" ("+v.at+")", 1)
		}
		invariants.broken = append(invariants.broken, v)
		if first == nil {
			first = &c.broken[i]
		}
	}
	invariants.mu.Unlock()
	if first != nil {
		end(contract.Unresolved, fmt.Sprintf("%s is broken in the state this spec reached (%s), so this cannot be checked: %s", first.id, first.at, first.text), 1)
	}
}

// Checkpoints is how many checkpoints the run made, and the time they took.
func Checkpoints() (int, time.Duration) {
	invariants.mu.Lock()
	defer invariants.mu.Unlock()
	return invariants.checkpoints, invariants.spent
}

// invariantResults are the results the run's report gains: one per
// requirement whose clauses a checkpoint found broken outside its own
// specs, failing with the first violation, the state it was found in and
// how many there were.
func invariantResults() types.SpecReports {
	invariants.mu.Lock()
	defer invariants.mu.Unlock()
	byID := map[string][]violation{}
	for _, v := range invariants.broken {
		byID[v.id] = append(byID[v.id], v)
	}
	var out types.SpecReports
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		vs := byID[id]
		msg := vs[0].text + "\n(at " + vs[0].at + ")"
		if len(vs) > 1 {
			var others []string
			for _, v := range vs[1:min(len(vs), 4)] {
				others = append(others, v.text+" (at "+v.at+")")
			}
			msg += fmt.Sprintf("\nand %d more checkpoints broke %s, among them:\n%s", len(vs)-1, id, strings.Join(others, "\n"))
		}
		out = append(out, types.SpecReport{
			ContainerHierarchyTexts: []string{"every state the suite reached"},
			LeafNodeType:            types.NodeTypeIt,
			LeafNodeText:            "[" + id + "] holds at every checkpoint",
			LeafNodeLabels:          []string{id, contract.LabelStackmap, contract.CaseLabel + InvariantCase},
			State:                   types.SpecStateFailed,
			Failure:                 types.Failure{Message: msg},
		})
	}
	return out
}

// withInvariants is the run's report with the results of its broken
// invariants: a run that broke one did not succeed.
func withInvariants(r Report) Report {
	extra := invariantResults()
	if len(extra) == 0 {
		return r
	}
	r.SpecReports = append(slices.Clone(r.SpecReports), extra...)
	r.SuiteSucceeded = false
	return r
}
