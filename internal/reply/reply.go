// SPDX-License-Identifier: GPL-2.0-only

// Package reply writes the mail a tester sends to a series' thread: a reply
// to its cover letter that says what was tested and how it went, with a
// Tested-by trailer only when every run passed. It never sends mail.
package reply

import "github.com/ftrace-stackmap/conformance/internal/contract"

// File is the reply's name in a run's or a walk's directory.
const File = "reply.eml"

// Report is what a reply says of a test of the series.
type Report struct {
	// What was tested, one "name: value" each: tree, base, series,
	// arches, QEMU, profile.
	What  [][2]string
	Runs  []Run  // one per arch
	Table string // a walk's per-patch table, "" for a single run
	// Defects are the known defects of the postings the runs hit.
	Defects   []string
	Reproduce []string // the commands that make the runs again
}

// Run is one arch's run.
type Run struct {
	Arch      string
	Closing   string // the run's closing line
	Passed    bool   // the run's verdict is ok
	Verdict   string // its words: "ok", "FAIL..." or "NO VERDICT: ..."
	NoFeature string // why the kernel lacks the feature, "" when it has it
	Failures  []Failure
	Claims    string // what the claims plan measured, in a sentence; "" when not made
}

// Failure is a requirement that did not pass: FAIL or UNRESOLVED.
type Failure struct {
	Class       contract.Class
	ID          string
	Clause      string // the clause of ID a FAIL broke ("SM-STAT-03.4"), when its message names one
	Requirement string // the contract's words for it
	Observed    string
}

// Tested says whether the runs earn a Tested-by, and if not, why not.
func (r Report) Tested() (bool, string) {
	if len(r.Runs) == 0 {
		return false, "no run was made"
	}
	for _, run := range r.Runs {
		switch {
		case !run.Passed:
			return false, "the " + run.Arch + " run did not pass (" + run.Verdict + ")"
		case run.NoFeature != "":
			return false, "the " + run.Arch + " kernel lacks the stackmap feature (" + run.NoFeature + ")"
		}
		for _, f := range run.Failures {
			if f.Class == contract.Unresolved {
				return false, "the " + run.Arch + " run left " + f.ID + " UNRESOLVED"
			}
		}
	}
	return true, ""
}
