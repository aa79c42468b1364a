// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// FromRun is what a reply says of one qemu-test run.
func FromRun(res *results.Result) Report {
	o := res.Request
	run := Run{Arch: o.Arch.Name, Closing: res.ClosingLine(), Passed: res.ExitCode() == 0, Verdict: res.Verdict()}
	if res.Claims != nil {
		run.Claims = res.Claims.Sentence()
	}
	var failed []string
	for _, sp := range res.Summary.Specs {
		if sp.FeatureAbsent != "" && run.NoFeature == "" {
			run.NoFeature = sp.FeatureAbsent
		}
		if sp.Class != contract.Fail && sp.Class != contract.Unresolved {
			continue
		}
		for _, id := range orNone(sp.IDs) {
			failed = append(failed, id)
			f := Failure{Class: sp.Class, ID: id, Requirement: Requirement(id, sp.Text), Observed: firstLine(sp.Message)}
			// A FAIL names the clause it broke; the line names it instead.
			if clause, rest := contract.ClauseOf(sp.Message); sp.Class == contract.Fail && contract.RequirementOf(clause) == id {
				f.Clause, f.Observed = clause, firstLine(rest)
			}
			run.Failures = append(run.Failures, f)
		}
	}
	const kernelLog = "the kernel logs no warning, oops or lockup"
	for _, p := range res.KernelProblems() {
		run.Failures = append(run.Failures, Failure{Class: contract.Fail, ID: "kernel log", Requirement: kernelLog, Observed: p})
	}
	for _, boot := range res.MissingKernelLogs() {
		run.Failures = append(run.Failures, Failure{Class: contract.Unresolved, ID: "kernel log", Requirement: kernelLog, Observed: "boot " + boot + ": " + results.KernelLogMissing})
	}
	if d := res.Decoder; d != nil && !d.Agrees() {
		run.Failures = append(run.Failures, Failure{Class: contract.Fail, ID: "decoder", Requirement: "the tree's decoder reads the kernel's binary export", Observed: d.Problems[0]})
	}
	hint := false
	for _, c := range res.Selftests {
		hint = hint || !c.Passed() && c.Hint != ""
	}
	return Report{
		What:      runWhat(res),
		Runs:      []Run{run},
		Defects:   Defects(failed, o.Profile.String(), hint),
		Reproduce: []string{results.Reproduce(res)},
	}
}

// runWhat is what a run tested: the kernel's source, QEMU, the profile.
func runWhat(res *results.Result) [][2]string {
	g := res.Origin
	var w [][2]string
	if g.Tree != "" {
		w = append(w, [2]string{"tree", g.Tree})
	}
	if base := strings.TrimSpace(fmt.Sprintf("%s %.12s", g.Describe, g.Commit)); base != "" {
		w = append(w, [2]string{"base", base})
	}
	if res.Summary.Kernel != "" {
		w = append(w, [2]string{"kernel", res.Summary.Kernel})
	}
	w = append(w, [2]string{"arches", res.Request.Arch.Name})
	if res.Sanitized != "" {
		w = append(w, [2]string{"config", res.Sanitized})
	}
	if res.Machine != "" {
		w = append(w, [2]string{"QEMU", res.Machine})
	}
	return append(w, [2]string{"profile", res.Request.Profile.String()})
}

// Requirement is the contract's summary of id, or the spec's text.
func Requirement(id, text string) string {
	if r, ok := contract.Requirements[id]; ok {
		return r.Summary
	}
	return text
}

func orNone(ids []string) []string {
	if len(ids) == 0 {
		return []string{"(no requirement)"}
	}
	return ids
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// WriteForRun writes reply.eml into a run's directory when its kernel
// came from a posted series (its thread fetched as b4 fetches it); a run
// of another kernel needs none, and gets none.
func WriteForRun(res *results.Result) error {
	if res == nil || res.Dir == "" || res.Origin.Series == "" {
		return nil
	}
	mbox, msgid, err := Thread(res.Origin.Series)
	if err == nil {
		_, err = Write(res.Dir, mbox, msgid, FromRun(res), "")
	}
	return err
}
