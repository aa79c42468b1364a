// SPDX-License-Identifier: GPL-2.0-only

package reply

import (
	"cmp"
	"fmt"
	"net/mail"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Body is the reply's text: why there is no trailer (first, when there is
// none), what was tested, the closing line per arch, a walk's table, the
// failures, the known defects hit, how to reproduce, and the trailer.
func Body(r Report, sender *mail.Address) string {
	var b strings.Builder
	ok, why := r.Tested()
	if ok {
		b.WriteString(report.Wrap("", "", "I tested this series with the ftrace stackmap conformance suite: every run passed, with the feature present and nothing UNRESOLVED.") + "\n")
	} else {
		b.WriteString(report.Wrap("", "", "I tested this series with the ftrace stackmap conformance suite, and give no Tested-by: "+why+".") + "\n")
	}
	// No colon after a name: b4 would take "name: ...<...>" for a trailer.
	b.WriteString("What was tested:\n")
	for _, w := range r.What {
		b.WriteString(report.Wrap(fmt.Sprintf("  %-9s", w[0]), "           ", w[1]))
	}
	b.WriteString("\nResults:\n")
	for _, run := range r.Runs {
		b.WriteString(report.Wrap(fmt.Sprintf("  %s: ", run.Arch), "    ", run.Closing))
		if !run.Passed {
			b.WriteString(report.Wrap("    verdict: ", "      ", run.Verdict))
		}
	}
	var measured []string
	for _, run := range r.Runs {
		if run.Claims != "" {
			measured = append(measured, report.Wrap(fmt.Sprintf("  %s: ", run.Arch), "    ", run.Claims))
		}
	}
	if len(measured) > 0 {
		b.WriteString("\n" + report.Wrap("", "", "What the cover letter claims, measured beside the tests (no effect on the results above; the figures are in claims.txt of each run):"))
		b.WriteString(strings.Join(measured, ""))
	}
	if r.Table != "" {
		b.WriteString("\nPatch by patch:\n\n")
		for _, l := range strings.Split(strings.TrimRight(r.Table, "\n"), "\n") {
			if len(l) <= report.Width {
				b.WriteString(strings.TrimRight(l, " ") + "\n")
				continue
			}
			b.WriteString(report.Wrap("", "    ", l))
		}
	}
	var fails []string
	for _, run := range r.Runs {
		for _, f := range run.Failures {
			s := report.Wrap(fmt.Sprintf("  %s %s (%s): ", f.Class, cmp.Or(f.Clause, f.ID), run.Arch), "    ", f.Requirement)
			if f.Observed != "" {
				s += report.Wrap("    observed: ", "      ", f.Observed)
			}
			fails = append(fails, s)
		}
	}
	if len(fails) > 0 {
		b.WriteString("\nFailures:\n" + strings.Join(fails, ""))
	}
	if len(r.Defects) > 0 {
		b.WriteString("\nKnown defects of the postings this hit:\n")
		for _, d := range r.Defects {
			b.WriteString(report.Wrap("  - ", "    ", d))
		}
	}
	if len(r.Reproduce) > 0 {
		// A command is not wrapped: it must paste back whole.
		b.WriteString("\nTo reproduce, from the suite's checkout:\n\n")
		for _, c := range r.Reproduce {
			b.WriteString("  " + c + "\n")
		}
	}
	if ok {
		b.WriteString("\nTested-by: " + trailerName(sender) + "\n")
	}
	return b.String()
}

// trailerName is the sender as a trailer writes it: the name unencoded,
// as git interpret-trailers and b4 read it.
func trailerName(a *mail.Address) string {
	if a.Name == "" {
		return "<" + a.Address + ">"
	}
	return a.Name + " <" + a.Address + ">"
}
