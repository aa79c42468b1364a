// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// failingT stands in for *testing.T under RunSpecs, whose specs here are
// meant to fail: what matters is the class each one ends in.
type failingT struct{ failed bool }

func (f *failingT) Fail() { f.failed = true }

// The result helpers put each spec in the class its cause deserves: a
// failed setup step and a broken prerequisite of another requirement are
// UNRESOLVED naming it.
func TestResultClasses(t *testing.T) {
	broken := errors.New("write error: device or resource busy")
	classes := map[string]contract.Class{}
	ReportAfterEach(func(r SpecReport) { classes[r.LeafNodeText] = contract.ClassOf(r) })
	It("setup step fails", func() { Must(broken, "writing 1 to tracing_on") })
	It("setup step works", func() { Must(nil, "writing 1 to tracing_on") })
	ReqIt("SM-STAT-03", "prerequisite of another requirement broken", Case("c1"), func() { Prerequisite("SM-STAT-01", broken) })
	// A spec checks its own requirement in its body, never through a
	// helper's Prerequisite: that is a mistake of the suite, whatever err is.
	ReqIt("SM-STAT-01", "own requirement as a prerequisite, broken", Case("c2"), func() { Prerequisite("SM-STAT-01", broken) })
	ReqIt("SM-STAT-01", "own requirement as a prerequisite, met", Case("c3"), func() { Prerequisite("SM-STAT-01", nil) })
	ReqIt("SM-BIN-03", "note on a pass", func() { Note("symbols not compared") })
	// A failure names the clause it breaks first, however the spec fails.
	ReqIt("SM-STAT-03", "clause broken in an assertion", Case("c4"), func() {
		gomega.NewGomega(Fail).Expect(1008).To(gomega.Equal(1024), Clause("SM-STAT-03.4", "entries %d of %d", 1008, 1024))
	})
	ReqIt("SM-STAT-03", "clause broken by hand", Case("c5"), func() { Violated(Clause("SM-STAT-03.5", "drops %d", 3)) })
	ReqIt("SM-STAT-01", "clause broken, in the check's words", Case("c6"), func() { FailOn(broken, Clause("SM-STAT-01.3", "")) })
	ReqIt("SM-STAT-01", "clause kept", Case("c7"), func() { FailOn(nil, Clause("SM-STAT-01.3", "never shown")) })
	ReqIt("SM-OPT-02", "clause missed, informational", func() { Warn(Clause("SM-OPT-02.1", "stackmap does not follow stacktrace")) })

	// A probe that finds something missing makes the spec UNSUPPORTED; one
	// that cannot read tracefs has found nothing missing: UNRESOLVED.
	tfs, unreadable := fakeTraceFS(t), fakeTraceFS(t)
	os.WriteFile(tfs.Path("available_tracers"), []byte("function nop\n"), 0o644)
	os.WriteFile(tfs.Path("README"), []byte("tracing mini-HOWTO:\n"), 0o644)
	os.Mkdir(unreadable.Path("available_tracers"), 0o755)
	os.Mkdir(unreadable.Path("README"), 0o755)
	It("needs met", func() { Require(tfs, Node("trace"), Tracer("function"), Readme("mini-HOWTO")) })
	It("tracer missing", func() { Require(tfs, Tracer("function_graph")) })
	It("node missing", func() { Require(tfs, Node("stack_map")) })
	It("README phrase missing", func() { Require(tfs, Readme("stackmap")) })
	It("available_tracers unreadable", func() { Require(unreadable, Tracer("function")) })
	It("README unreadable", func() { Require(unreadable, Readme("stackmap")) })
	It("node cannot be looked up", func() { Require(tfs, Node("trace/stack_map")) })
	It("missing and unreadable", func() { Require(unreadable, Node("stack_map"), Tracer("function")) })

	// A checkpoint that finds another requirement's clause broken leaves
	// the spec UNRESOLVED naming it, and a result of that requirement's
	// own fails; one that finds the spec's own clause broken fails it.
	// In this order: a state broken stays broken until a checkpoint that
	// judges everything finds it repaired, and only its first finding
	// blames anyone.
	Describe("checkpoints", Ordered, ContinueOnFailure, func() {
		refs := errors.New("ref counts add up to 3, successes 4")
		ReqIt("SM-BIN-01", "checkpoint, another's clause broken", func() {
			cp := NewCheckpoint("after a fill")
			cp.Hold(Clause("SM-STAT-02.2", ""), nil)
			cp.Hold(Clause("SM-STAT-03.3", "stack_map"), refs)
			cp.Done()
		})
		ReqIt("SM-TEXT-01", "checkpoint after the spec, the same clause still broken", func() {
			cp := NewCheckpoint("after the spec's last action")
			cp.AfterSpec()
			cp.Whole()
			cp.Hold(Clause("SM-STAT-03.3", "stack_map"), refs)
			cp.Done()
		})
		ReqIt("SM-TEXT-02", "checkpoint for the spec to go on, the same clause still broken", func() {
			cp := NewCheckpoint("after a reset")
			cp.Hold(Clause("SM-STAT-03.3", "stack_map"), refs)
			cp.Done()
		})
		ReqIt("SM-OPT-01", "whole checkpoint, another's clause broken", func() {
			cp := NewCheckpoint("after the spec's last action")
			cp.AfterSpec()
			cp.Whole()
			cp.Hold(Clause("SM-TEXT-02.1", "stack_map"), errors.New("block 7 printed twice"))
			cp.Done()
		})
		ReqIt("SM-NODE-01", "checkpoint, every clause held", func() {
			cp := NewCheckpoint("after nothing")
			cp.Whole()
			cp.Hold(Clause("SM-STAT-03.2", ""), nil)
			cp.Done()
		})
		ReqIt("SM-STAT-03", "checkpoint, own clause broken", Case("c8"), func() {
			cp := NewCheckpoint("after a reset")
			cp.Hold(Clause("SM-STAT-03.2", ""), errors.New("entries 2, blocks in stack_map 1"))
			cp.Done()
		})
	})

	var reports []types.SpecReport
	ReportAfterSuite("collect", func(r Report) { reports = r.SpecReports })
	suite, reporter := GinkgoConfiguration()
	reporter.NoColor, reporter.Succinct = true, true
	RunSpecs(&failingT{}, "result classes", Label("unit"), suite, reporter)

	for text, want := range map[string]contract.Class{
		"setup step fails": contract.Unresolved,
		"setup step works": contract.Pass,
		"[SM-STAT-03] prerequisite of another requirement broken":                     contract.Unresolved,
		"[SM-STAT-01] own requirement as a prerequisite, broken":                      contract.Unresolved,
		"[SM-STAT-01] own requirement as a prerequisite, met":                         contract.Unresolved,
		"[SM-BIN-03] note on a pass":                                                  contract.Pass,
		"[SM-STAT-03] clause broken in an assertion":                                  contract.Fail,
		"[SM-STAT-03] clause broken by hand":                                          contract.Fail,
		"[SM-STAT-01] clause broken, in the check's words":                            contract.Fail,
		"[SM-STAT-01] clause kept":                                                    contract.Pass,
		"[SM-OPT-02] clause missed, informational":                                    contract.Pass,
		"[SM-BIN-01] checkpoint, another's clause broken":                             contract.Unresolved,
		"[SM-STAT-03] checkpoint, own clause broken":                                  contract.Fail,
		"[SM-OPT-01] whole checkpoint, another's clause broken":                       contract.Pass,
		"[SM-TEXT-01] checkpoint after the spec, the same clause still broken":        contract.Pass,
		"[SM-TEXT-02] checkpoint for the spec to go on, the same clause still broken": contract.Unresolved,
		"[SM-NODE-01] checkpoint, every clause held":                                  contract.Pass,
		"needs met":                    contract.Pass,
		"tracer missing":               contract.Unsupported,
		"node missing":                 contract.Unsupported,
		"README phrase missing":        contract.Unsupported,
		"available_tracers unreadable": contract.Unresolved,
		"README unreadable":            contract.Unresolved,
		"node cannot be looked up":     contract.Unresolved,
		"missing and unreadable":       contract.Unresolved,
	} {
		if got := classes[text]; got != want {
			t.Errorf("%q ended %s, want %s", text, got, want)
		}
	}
	for _, r := range reports {
		// Ginkgo reports where the spec called the helper, not the helper.
		if r.Failure.Message != "" && !strings.HasSuffix(r.Failure.Location.FileName, "/result_test.go") {
			t.Errorf("%q ended at %s, want the spec's line", r.LeafNodeText, r.Failure.Location)
		}
		if r.LeafNodeText == "[SM-STAT-03] prerequisite of another requirement broken" {
			if msg := r.Failure.Message; msg != "SM-STAT-01 is broken, so this cannot be checked: "+broken.Error() {
				t.Errorf("UNRESOLVED message %q does not name SM-STAT-01 and the cause", msg)
			}
		}
		if r.LeafNodeText == "[SM-TEXT-02] checkpoint for the spec to go on, the same clause still broken" &&
			!strings.Contains(r.Failure.Message, "since SM-STAT-03's failure at a checkpoint (after a fill, in [SM-BIN-01]") {
			t.Errorf("UNRESOLVED message %q does not name the FAIL that found the state broken first", r.Failure.Message)
		}
		if r.LeafNodeText == "[SM-BIN-03] note on a pass" && (len(r.ReportEntries) != 1 || r.ReportEntries[0].Name != contract.NoteEntry) {
			t.Errorf("a Note left report entries %v, want one %q", r.ReportEntries, contract.NoteEntry)
		}
		if want, ok := map[string]string{
			"[SM-STAT-03] clause broken in an assertion":       "[SM-STAT-03.4] entries 1008 of 1024\nExpected",
			"[SM-STAT-03] clause broken by hand":               "[SM-STAT-03.5] drops 3",
			"[SM-STAT-01] clause broken, in the check's words": "[SM-STAT-01.3] " + broken.Error(),
		}[r.LeafNodeText]; ok && !strings.HasPrefix(r.Failure.Message, want) {
			t.Errorf("%q failed with %q, want it to start %q", r.LeafNodeText, r.Failure.Message, want)
		}
		if r.LeafNodeText == "[SM-OPT-02] clause missed, informational" &&
			(len(r.ReportEntries) != 1 || r.ReportEntries[0].StringRepresentation() != "[SM-OPT-02.1] stackmap does not follow stacktrace") {
			t.Errorf("a Warn left report entries %v, want the warning naming its clause", r.ReportEntries)
		}
	}
}

// The run's report gains one failing result per requirement a checkpoint
// found broken outside its own specs, named <boot>.<ID>.invariants, and
// the run fails; a run that broke nothing is left as it was.
func TestInvariantResults(t *testing.T) {
	if n, _, _ := Checkpoints(); n == 0 {
		t.Skip("needs TestResultClasses's checkpoints first")
	}
	// One per requirement, in ID order: SM-STAT-03's found by a reader,
	// SM-TEXT-02's by a whole checkpoint that blamed no spec.
	got := invariantResults()
	if len(got) != 2 || contract.ClassOf(got[0]) != contract.Fail || contract.ClassOf(got[1]) != contract.Fail ||
		!strings.HasPrefix(got[1].Failure.Message, "[SM-TEXT-02.1] stack_map: block 7 printed twice") {
		t.Fatalf("results %+v, want two FAILs, SM-STAT-03's and SM-TEXT-02's", got)
	}
	got = got[:1]
	r := got[0]
	if !strings.HasPrefix(r.Failure.Message, "[SM-STAT-03.3] stack_map: ref counts add up to 3, successes 4\n(at after a fill, in [SM-BIN-01] checkpoint") {
		t.Errorf("message %q, want the clause, what was found and where", r.Failure.Message)
	}
	s := report.Summarize("full-map", []types.Report{{SpecReports: got}})
	if s.Specs[0].Name != "full-map.SM-STAT-03.invariants" {
		t.Errorf("named %q, want full-map.SM-STAT-03.invariants", s.Specs[0].Name)
	}
	if w := withInvariants(types.Report{SuiteSucceeded: true}); w.SuiteSucceeded || len(w.SpecReports) != 2 {
		t.Errorf("a run with a broken invariant: succeeded %v, %d results", w.SuiteSucceeded, len(w.SpecReports))
	}
	if ExitCode(0) != 1 {
		t.Error("exit 0 with a broken invariant")
	}
}
