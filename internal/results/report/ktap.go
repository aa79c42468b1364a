// SPDX-License-Identifier: GPL-2.0-only

package report

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
)

// maxDiag caps the diagnostic lines of one test; the rest of a long
// failure message stays in report.json.
const maxDiag = 20

// KTAP is a KTAP version 1 document (Documentation/dev-tools/ktap.rst)
// being written, as kselftest writes it so that LKFT, KernelCI and kunit.py
// read it. Tests are numbered in the order written; the plan and the
// closing totals are counted from them, so they agree with the lines.
type KTAP struct {
	lines                           []string
	tests                           int
	pass, fail, xfail, skip, errors int
}

// Diag writes text as diagnostic lines, head before the first: control
// characters made spaces, blank lines left out, at most maxDiag lines.
func (k *KTAP) Diag(head, text string) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = clean(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		if head != "" {
			k.lines = append(k.lines, "# "+strings.TrimSpace(head))
		}
		return
	}
	if len(lines) > maxDiag {
		lines = append(lines[:maxDiag], fmt.Sprintf("... %d more lines in report.json", len(lines)-maxDiag))
	}
	lines[0] = head + lines[0]
	for _, l := range lines {
		k.lines = append(k.lines, "# "+l)
	}
}

// Result writes the next test's result line: "ok" or "not ok", its name
// as a KTAP description, and a directive ("SKIP <reason>", "XFAIL", ...)
// unless "".
func (k *KTAP) Result(ok bool, name, directive string) {
	k.tests++
	word, _, _ := strings.Cut(directive, " ")
	switch {
	case !ok && (word == "ERROR" || word == "TIMEOUT"):
		k.errors++
	case !ok:
		k.fail++
	case word == "SKIP":
		k.skip++
	case word == "XFAIL":
		k.xfail++
	default:
		k.pass++
	}
	line := fmt.Sprintf("ok %d %s", k.tests, ktapName(name))
	if !ok {
		line = "not " + line
	}
	if directive != "" {
		line += " # " + directive
	}
	k.lines = append(k.lines, line)
}

// Class writes the next test's result line for a verdict in the
// contract's classes, the one mapping of every KTAP the project writes:
// PASS is "ok", UNSUPPORTED "ok # SKIP <reason>", FAIL "not ok", with the
// clause its reason names first as diagnostic data ("not ok 3
// default.SM-STAT-03 # SM-STAT-03.4", as kselftest writes "# exit=1"),
// UNRESOLVED "not ok # ERROR <reason>" (the execution of the test failed)
// or "# TIMEOUT <reason>" when it ran out of time. kunit.py and the JUnit
// read them alike.
func (k *KTAP) Class(name string, c contract.Class, timedOut bool, reason string) {
	switch c {
	case contract.Pass:
		k.Result(true, name, "")
	case contract.Unsupported:
		k.Result(true, name, "SKIP "+directive(reason))
	case contract.Unresolved:
		word := "ERROR"
		if timedOut {
			word = "TIMEOUT"
		}
		k.Result(false, name, word+" "+directive(reason))
	default:
		clause, _ := contract.ClauseOf(reason)
		k.Result(false, name, clause)
	}
}

// Nest writes sub as the subtest of the test whose result line comes
// next, as ktap.rst nests them: two spaces in, with its version line, its
// name and its plan.
func (k *KTAP) Nest(name string, sub *KTAP) {
	k.lines = append(k.lines, "  KTAP version 1", "  # Subtest: "+name, fmt.Sprintf("  1..%d", sub.tests))
	for _, l := range sub.lines {
		k.lines = append(k.lines, "  "+l)
	}
}

// Passed says whether every test written passed or was skipped: a
// subtest's parent passes then.
func (k *KTAP) Passed() bool { return k.fail == 0 && k.errors == 0 }

// String is the document: the version and plan lines, the lines written,
// and kselftest's totals.
func (k *KTAP) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "KTAP version 1\n1..%d\n", k.tests)
	for _, l := range k.lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "# Totals: pass:%d fail:%d xfail:%d xpass:0 skip:%d error:%d\n", k.pass, k.fail, k.xfail, k.skip, k.errors)
	return b.String()
}

// directive is a reason as a directive's text: one line, without "#",
// which a parser would read as the start of another directive.
func directive(text string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(Plain(text)), " "), "#", "_")
}

// ktapName makes a test's name a KTAP description: one line, and no "#",
// which would start the directive.
func ktapName(text string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(text, "#", "_")), " ")
}

// KTAP is the run as KTAP: its header as diagnostic lines, then one test
// per spec in run order, named "<boot>.<ID>" so that its name lasts, its
// sentence and reasons as diagnostic lines before its result line. A run
// without a verdict is first one "not ok <boot> # ERROR" per boot it was
// to make, naming why. more writes the tests that follow the specs' (those
// of a QEMU run's own); the suite's problems close it.
func (r Run) KTAP(more func(*KTAP)) string {
	var k KTAP
	for _, h := range r.Header() {
		if h[1] != "" { // a run that stopped early did not learn them all
			k.Diag(h[0]+": ", h[1])
		}
	}
	if r.NoVerdict != "" {
		k.Diag("NO VERDICT: ", r.NoVerdict) // once, in full; each boot's line names it
		for _, boot := range r.boots() {
			k.Class(boot, contract.Unresolved, false, OneLine(r.NoVerdict))
		}
	}
	seen := map[string]int{}
	for _, sp := range r.Summary.Specs {
		name := ktapName(sp.Name)
		// Parsers key results by name; a repeat is not expected, and
		// numbering it keeps both if one comes.
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		k.Diag("", sp.Text)
		for _, w := range sp.Warnings {
			k.Diag("WARNING: ", w)
		}
		for _, note := range sp.Notes {
			k.Diag("NOTE: ", note)
		}
		if sp.Class != contract.Pass && sp.Class != contract.Unsupported {
			head := ""
			if sp.Class == contract.Unresolved {
				head = "UNRESOLVED: "
			}
			k.Diag(head, sp.Detail)
			if sp.Location != "" {
				k.Diag("at ", sp.Location)
			}
		}
		k.Class(name, sp.Class, sp.TimedOut, sp.Message)
	}
	if more != nil {
		more(&k)
	}
	for _, p := range r.Summary.SuiteProblems {
		k.Diag("SUITE: ", p)
	}
	return k.String()
}
