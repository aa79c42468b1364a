// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Text is the run in full, as qemu-test prints it: where it ran, one line
// per spec, the requirements' coverage, and the closing line, last.
func Text(res *Result) string {
	s := res.Summary
	var b strings.Builder
	for _, h := range res.run().Header() {
		if h[1] != "" { // a run that stopped early did not learn them all
			fmt.Fprintf(&b, "%-8s %s\n", h[0]+":", h[1])
		}
	}
	for _, br := range res.Boots {
		if br.Boot != nil {
			fmt.Fprintf(&b, "boot:    %-13s %4.1fs  %s\n", br.Plan.Name, br.Boot.Duration.Seconds(), strings.Join(br.Plan.Append, " "))
		}
	}
	reasons, notMade := bootsNotMade(res)
	for _, why := range reasons {
		fmt.Fprintf(&b, "boots not made (%s): %s\n", why, strings.Join(notMade[why], ", "))
	}
	if len(s.Specs)+len(s.SuiteProblems) > 0 {
		b.WriteString("\n")
		s.WriteSpecs(&b)
	}
	for _, p := range res.KernelProblems() {
		fmt.Fprintf(&b, "%-11s %s\n", "KERNEL", p)
	}
	for _, boot := range res.MissingKernelLogs() {
		fmt.Fprintf(&b, "%-11s %s -- %s\n", contract.Unresolved, KernelLogTest(boot), KernelLogMissing)
	}
	if len(res.Unjudged) > 0 {
		b.WriteString("\n")
	}
	for _, u := range res.Unjudged {
		b.WriteString(report.Wrap("NOT JUDGED  ", "            ", u.Unjudged()))
	}
	for _, l := range res.Lost {
		b.WriteString(report.Wrap("LOST        ", "            ", "boot "+l.Boot+": "+l.Note))
	}
	writeSelftests(&b, res)
	b.WriteString(decoderText(res, "\n", "  "))
	if len(s.Coverage()) > 0 { // the stress run covers no requirement
		b.WriteString("\nrequirements:\n")
		s.WriteCoverage(&b)
	}
	if res.NoVerdict != "" {
		fmt.Fprintf(&b, "\nNO VERDICT: %s\n", strings.TrimSpace(res.NoVerdict))
	}
	fmt.Fprintf(&b, "\nresults: %s\n", res.Dir)
	fmt.Fprintf(&b, "evidence: %s\n", filepath.Join(res.Dir, EvidenceFile))
	fmt.Fprintf(&b, "page:     %s\n", filepath.Join(res.Dir, page.File))
	b.WriteString(res.ClosingLine() + "\n")
	return b.String()
}

// decoderText says whether the tree's own stack_map_bin decoder read the
// kernel's export as the suite did; nothing when the tree has none.
func decoderText(res *Result, lead, indent string) string {
	d := res.Decoder
	head := "the tree's decoder (" + dumpcheck.Tool + "): "
	switch {
	case d == nil && res.DecoderNote == "":
		return ""
	case d == nil:
		return lead + report.Wrap(head, indent, res.DecoderNote)
	case d.Agrees():
		return lead + report.Wrap(head, indent, fmt.Sprintf("agrees with the kernel's export: %d stacks, their ids, ref counts, depths and addresses", d.Stacks))
	}
	var b strings.Builder
	b.WriteString(lead + report.Wrap(head, indent, fmt.Sprintf("DISAGREES with the kernel's export (%d stacks)", d.Stacks)))
	for _, p := range d.Problems {
		b.WriteString(report.Wrap(indent+"- ", indent+"  ", p))
	}
	return b.String()
}

// writeSelftests lists the tree's own ftracetest verdicts, when asked for.
// They are the tree's tests, not the contract's: they do not change the
// closing line or the exit status, and a reviewer reads them side by side.
func writeSelftests(b *strings.Builder, res *Result) {
	o := res.Request
	if o.FtraceDir == "" {
		return
	}
	p, f, other := ftracetest.Totals(res.Selftests)
	fmt.Fprintf(b, "\nthe tree's own selftests (ftracetest in %s): %d passed, %d failed, %d other\n", o.FtraceDir, p, f, other)
	if res.SelftestsNote != "" {
		fmt.Fprintf(b, "  %s\n", res.SelftestsNote)
	}
	for _, c := range res.Selftests {
		fmt.Fprintf(b, "%-11s [%d] %s (%s)\n", c.Result, c.No, c.Name, c.File)
		if !c.Passed() {
			for _, l := range c.Tail(6) {
				fmt.Fprintf(b, "%-11s   %s\n", "", l)
			}
			if c.Hint != "" {
				fmt.Fprintf(b, "%-11s   why: %s\n", "", c.Hint)
			}
		}
	}
}

// bootsNotMade groups the boots skipped for a reason other than selecting
// no spec, by reason, in plan order.
func bootsNotMade(res *Result) (reasons []string, names map[string][]string) {
	names = map[string][]string{}
	for _, br := range res.Boots {
		if br.Boot != nil || br.Skipped == NoSpecSelected {
			continue
		}
		if names[br.Skipped] == nil {
			reasons = append(reasons, br.Skipped)
		}
		names[br.Skipped] = append(names[br.Skipped], br.Plan.Name)
	}
	return reasons, names
}
