// SPDX-License-Identifier: GPL-2.0-only

package contract

import "github.com/onsi/ginkgo/v2/types"

// Class is the verdict for one spec: a result class in ftracetest's terms,
// told apart in a Ginkgo report. Ginkgo knows passed, failed and skipped.
// A spec that finds its feature missing, or that cannot decide (its setup
// broke), marks itself with a report entry naming the class, and then
// skips or fails.
type Class string

const (
	Pass        Class = "PASS"
	Fail        Class = "FAIL"
	Unsupported Class = "UNSUPPORTED" // feature absent; the message says which
	Unresolved  Class = "UNRESOLVED"  // could not decide; never counts as a pass
	NotRun      Class = "NOTRUN"      // filtered out by labels; not part of the run
)

// ClassEntry names the report entry that marks a spec UNSUPPORTED or
// UNRESOLVED: the two classes Ginkgo does not have.
const ClassEntry = "class"

// Mark is the report entry that gives a spec class c.
func Mark(c Class) types.ReportEntry {
	return types.ReportEntry{Name: ClassEntry, Value: types.WrapEntryValue(string(c))}
}

// ClassOf classifies one spec report.
func ClassOf(s types.SpecReport) Class {
	var marked Class
	for _, e := range s.ReportEntries {
		if e.Name == ClassEntry {
			marked = Class(e.StringRepresentation())
		}
	}
	switch s.State {
	case types.SpecStatePassed:
		return Pass
	case types.SpecStateSkipped:
		switch {
		case marked == Unsupported:
			return Unsupported
		case s.Failure.Message == "":
			return NotRun
		}
		// A bare Skip() without a reason hides why: never let it look intended.
		return Unresolved
	case types.SpecStatePending:
		return NotRun
	case types.SpecStateFailed:
		if marked == Unresolved {
			return Unresolved
		}
		return Fail
	default: // panicked, interrupted, aborted, timed out
		return Unresolved
	}
}
