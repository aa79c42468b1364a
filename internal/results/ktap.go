// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
)

// maxDiag caps the diagnostic lines of one spec in KTAP; the rest of a long
// failure message stays in report.json.
const maxDiag = 20

// KTAP is the run as KTAP version 1 (Documentation/dev-tools/ktap.rst):
// one test per spec in run order, named "<boot>.<ID>" so that its name
// lasts, its sentence and reasons as "# " lines before its result line.
// UNSUPPORTED is "# SKIP", UNRESOLVED "not ok ... # ERROR" (the execution
// of the test failed) or "# TIMEOUT" when it ran out of time, each with its
// reason. A run without a verdict is one "not ok <boot> # ERROR" per boot
// it was to make, naming why. The
// closing totals are kselftest's.
func KTAP(res *Result) string {
	o := res.Request
	s := res.Summary
	var b strings.Builder
	b.WriteString("KTAP version 1\n")
	plan := len(s.Specs)
	if o.FtraceDir != "" {
		plan++ // the tree's own selftests, as one subtest
	}
	boots := plans(res)
	if res.NoVerdict != "" {
		plan += len(boots)
	}
	logs := res.KernelLogs()
	plan += len(logs)
	if res.Decoder != nil {
		plan++
	}
	fmt.Fprintf(&b, "1..%d\n", plan)
	for _, h := range header(res) {
		if h[1] != "" {
			diag(&b, h[0]+": ", h[1])
		}
	}
	n, errors := 0, 0
	if res.NoVerdict != "" {
		diag(&b, "NO VERDICT: ", res.NoVerdict) // once, in full; each boot's line names it
		reason := directive(OneLine(res.NoVerdict))
		for _, boot := range boots {
			n++
			fmt.Fprintf(&b, "not ok %d %s # ERROR %s\n", n, boot, reason)
			errors++
		}
	}
	seen := map[string]int{}
	for _, sp := range s.Specs {
		n++
		name := ktapName(sp.Name)
		// Parsers key results by name; a repeat is not expected, and
		// numbering it keeps both if one comes.
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		diag(&b, "", sp.Text)
		for _, w := range sp.Warnings {
			diag(&b, "WARNING: ", w)
		}
		for _, note := range sp.Notes {
			diag(&b, "NOTE: ", note)
		}
		switch sp.Class {
		case contract.Pass:
			fmt.Fprintf(&b, "ok %d %s\n", n, name)
		case contract.Unsupported:
			fmt.Fprintf(&b, "ok %d %s # SKIP %s\n", n, name, directive(sp.Message))
		case contract.Unresolved:
			diag(&b, "UNRESOLVED: ", sp.Detail)
			if sp.Location != "" {
				diag(&b, "at ", sp.Location)
			}
			dir := "ERROR" // the execution of the test failed
			if sp.TimedOut {
				dir = "TIMEOUT"
			}
			fmt.Fprintf(&b, "not ok %d %s # %s %s\n", n, name, dir, directive(sp.Message))
			errors++
		default:
			diag(&b, "", sp.Detail)
			if sp.Location != "" {
				diag(&b, "at ", sp.Location)
			}
			fmt.Fprintf(&b, "not ok %d %s\n", n, name)
		}
	}
	// A boot whose kernel logged problems fails a test of its own.
	for _, l := range logs {
		n++
		for _, line := range l.Lines {
			diag(&b, "KERNEL: ", line)
		}
		fmt.Fprintf(&b, "not ok %d %s\n", n, KernelLogTest(l.Boot))
	}
	pass, fail, skip := s.Count(contract.Pass), s.Count(contract.Fail)+len(logs), s.Count(contract.Unsupported)
	if d := res.Decoder; d != nil {
		n++
		diag(&b, "", "the tree's "+dumpcheck.Tool+" reads the stack_map_bin the kernel wrote as the suite does")
		for _, p := range d.Problems {
			diag(&b, "", p)
		}
		if d.Agrees() {
			fmt.Fprintf(&b, "ok %d %s\n", n, DecoderTest)
			pass++
		} else {
			fmt.Fprintf(&b, "not ok %d %s\n", n, DecoderTest)
			fail++
		}
	}
	if o.FtraceDir != "" {
		if ftraceSubtest(&b, n+1, res) {
			pass++
		} else {
			fail++
		}
	}
	for _, p := range s.SuiteProblems {
		diag(&b, "SUITE: ", p)
	}
	fmt.Fprintf(&b, "# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:%d\n", pass, fail, skip, errors)
	return b.String()
}

// directive is a reason as a directive's text: one line, without "#",
// which a parser would read as the start of another directive.
func directive(text string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(Plain(text)), " "), "#", "_")
}

// plans are the boots a run was to make, for the tests of a run without a
// verdict: the default boot when the run did not get as far as planning.
func plans(res *Result) []string {
	if len(res.Plans) == 0 {
		return []string{"default"}
	}
	return res.Plans
}

// ftraceSubtest writes the tree's ftracetest verdicts as a KTAP subtest
// numbered n, one test per .tc file in ftracetest's own terms, and says
// whether the subtest passed: every case passed, was an expected failure
// or was skipped with a reason, and there are verdicts for all of them.
func ftraceSubtest(b *strings.Builder, n int, res *Result) bool {
	ok := res.SelftestsNote == ""
	b.WriteString("  KTAP version 1\n  # Subtest: ftracetest\n")
	fmt.Fprintf(b, "  1..%d\n", len(res.Selftests))
	for _, c := range res.Selftests {
		name := ktapName(c.File)
		switch {
		case c.Result == "PASS":
			fmt.Fprintf(b, "  ok %d %s\n", c.No, name)
		case c.Result == "XFAIL":
			fmt.Fprintf(b, "  ok %d %s # XFAIL\n", c.No, name)
		case c.Failed():
			ok = false
			for _, l := range c.Tail(maxDiag) {
				fmt.Fprintf(b, "  # %s\n", clean(l))
			}
			if c.Hint != "" {
				fmt.Fprintf(b, "  # why: %s\n", c.Hint)
			}
			dir := "" // a FAIL is a plain "not ok"; KTAP's word for undecided is ERROR
			if c.Result != "FAIL" {
				dir = " # ERROR " + c.Result
			}
			fmt.Fprintf(b, "  not ok %d %s%s\n", c.No, name, dir)
		default:
			fmt.Fprintf(b, "  ok %d %s # SKIP %s\n", c.No, name, c.Result)
		}
	}
	if res.SelftestsNote != "" {
		diag(b, "ftracetest: ", res.SelftestsNote)
	}
	verdict := "ok"
	if !ok {
		verdict = "not ok"
	}
	fmt.Fprintf(b, "%s %d ftracetest\n", verdict, n)
	return ok
}

// diag writes text as KTAP diagnostic lines, head before the first.
func diag(b *strings.Builder, head, text string) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = clean(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		if head != "" {
			fmt.Fprintf(b, "# %s\n", strings.TrimSpace(head))
		}
		return
	}
	if len(lines) > maxDiag {
		lines = append(lines[:maxDiag], fmt.Sprintf("... %d more lines in report.json", len(lines)-maxDiag))
	}
	lines[0] = head + lines[0]
	for _, l := range lines {
		fmt.Fprintf(b, "# %s\n", l)
	}
}

// ktapName makes a spec's text a KTAP description: one line, and no "#",
// which would start the directive.
func ktapName(text string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(text, "#", "_")), " ")
}
