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

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
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
	idsHeld     int           // ids held to the stacks their twin recorded
	broken      []violation   // of requirements other than the spec's own
	// carried are the requirements broken at the last checkpoint that
	// judged them, each with the cause a report already names: the
	// requirement's own FAIL, or the failed spec that left the state. A
	// state stays broken until something repairs it; the specs after the
	// one that broke it did not cause it.
	carried map[string]string
}

// Checkpoint is one reading of the kernel's state, after an action.
type Checkpoint struct {
	at     string
	start  time.Time
	ended  bool // after the spec's body: the spec no longer uses the state
	whole  bool // every always-true clause was judged
	broken []violation
}

// NewCheckpoint starts judging the state an action left ("after the map
// filled"), in the spec running now, which goes on to use that state.
func NewCheckpoint(format string, args ...any) *Checkpoint {
	at := fmt.Sprintf(format, args...)
	if spec := CurrentSpecReport().LeafNodeText; spec != "" {
		at += ", in " + spec
	}
	guest.CheckpointStarts()
	return &Checkpoint{at: at, start: time.Now()}
}

// AfterSpec marks a checkpoint of the state a spec's body ended in: a
// clause found broken that was broken before the spec ran is not the
// spec's doing, and one found after a spec that failed is that failure's.
func (c *Checkpoint) AfterSpec() { c.ended = true }

// Whole marks a checkpoint that judged every always-true clause between
// a spec's actions or after them, so that a requirement it found holding
// is no longer carried as broken. It blames no spec: what the spec goes
// on to read, its readers judge (a checkpoint that is not whole), and a
// clause of a thing the spec never reads is not its prerequisite.
func (c *Checkpoint) Whole() { c.whole = true }

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

// Done ends the checkpoint. A clause broken here for the first time fails
// its own requirement: the running spec's, in the spec; any other's in a
// result of its own, and a spec that read the broken thing (a checkpoint
// that is not whole) is UNRESOLVED naming it. A clause still broken since
// an earlier checkpoint is not blamed again: a spec that reads it is
// UNRESOLVED naming the cause found then. After a spec that failed, what
// is broken is that failure's doing and fails nothing more.
func (c *Checkpoint) Done() {
	guest.CheckpointEnds()
	spec := CurrentSpecReport()
	failed := c.ended && spec.State.Is(types.SpecStateFailed)
	invariants.mu.Lock()
	invariants.checkpoints++
	invariants.spent += time.Since(c.start)
	if invariants.carried == nil {
		invariants.carried = map[string]string{}
	}
	if c.whole {
		for id := range invariants.carried {
			if !slices.ContainsFunc(c.broken, func(v violation) bool { return v.id == id }) {
				delete(invariants.carried, id)
			}
		}
	}
	var unresolved string
	for _, v := range c.broken {
		cause, carried := invariants.carried[v.id]
		switch {
		case failed:
			if !carried {
				invariants.carried[v.id] = "the failure of " + spec.LeafNodeText
			}
		case carried:
			if !c.whole && unresolved == "" {
				unresolved = fmt.Sprintf("%s is broken in the state this spec reached (%s), since %s, so this cannot be checked: %s", v.id, v.at, cause, v.text)
			}
		case slices.Contains(spec.Labels(), v.id):
			invariants.carried[v.id] = v.id + "'s failure"
			invariants.mu.Unlock()
			Fail(v.text+" ("+v.at+")", 1)
		default:
			invariants.broken = append(invariants.broken, v)
			invariants.carried[v.id] = v.id + "'s failure at a checkpoint (" + v.at + ")"
			if !c.whole && unresolved == "" {
				unresolved = fmt.Sprintf("%s is broken in the state this spec reached (%s), so this cannot be checked: %s", v.id, v.at, v.text)
			}
		}
	}
	invariants.mu.Unlock()
	if unresolved != "" {
		end(contract.Unresolved, unresolved, 1)
	}
}

// Checkpoints is how many checkpoints the run made, the time they took,
// and how many ids they and the specs held to their twins' stacks.
func Checkpoints() (n int, spent time.Duration, idsHeld int) {
	invariants.mu.Lock()
	defer invariants.mu.Unlock()
	return invariants.checkpoints, invariants.spent, invariants.idsHeld
}

// Violations are the always-true clauses the run's checkpoints found
// broken so far, each "[ID] what was found (at the state)".
func Violations() []string {
	invariants.mu.Lock()
	defer invariants.mu.Unlock()
	var out []string
	for _, v := range invariants.broken {
		out = append(out, "["+v.id+"] "+v.text+" (at "+v.at+")")
	}
	return out
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
