// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// Clause marks the check that judges clause id of CONTRACT.md
// ("SM-STAT-03.4"). It is a Gomega optional description whose message
// starts with the clause, so the reports and the reply name it:
//
//	Expect(x).To(Equal(y), harness.Clause("SM-OPT-01.2", "trace_options has no line %q", tok))
//
// and the mark Violated, FailOn and Warn take. test/clauses finds every
// call in suites/ and credits it to the specs that reach it, so id is a
// literal; CLAUSES.md is that table.
func Clause(id, format string, args ...any) func() string {
	if contract.RequirementOf(id) == "" {
		panic(fmt.Sprintf("Clause(%q): no clause of a known requirement", id))
	}
	return func() string { return contract.ClauseMark(id, fmt.Sprintf(format, args...)) }
}

// Violated fails the spec: the kernel broke the clause, as a check that
// is not Gomega's found.
func Violated(clause func() string) { Fail(clause(), 1) }

// FailOn fails the spec when err, what a check of the clause found, is not
// nil, in err's own words after the clause's (Gomega would wrap it in its
// Go type and fields).
func FailOn(err error, clause func() string) {
	if err == nil {
		return
	}
	msg := clause()
	if id, rest := contract.ClauseOf(msg); rest != "" || id == "" {
		msg += ":"
	}
	Fail(msg+" "+err.Error(), 1)
}
