// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/internal/textlines"
)

// Evidence is the run in a few lines for a reply on the mailing list: what
// was booted where, the totals, every failure with its requirement IDs and
// what was observed, the kernel's problems, and the command to reproduce
// it. Its lines are report.Width wide.
func Evidence(res *Result) string {
	var b strings.Builder
	evidenceHead(&b, res)
	evidenceFailures(&b, res)
	evidenceSelftests(&b, res)
	b.WriteString(decoderText(res, "\n", "  "))
	evidenceKernel(&b, res)
	b.WriteString(claimsEvidence(res))
	// A command is not wrapped: it must paste back whole.
	cmd := Reproduce(res)
	if len("reproduce: "+cmd) <= report.Width {
		fmt.Fprintf(&b, "\nreproduce: %s\n", cmd)
	} else {
		fmt.Fprintf(&b, "\nreproduce:\n  %s\n", cmd)
	}
	return b.String()
}

// evidenceHead is what was booted where, and the verdict when there is none.
func evidenceHead(b *strings.Builder, res *Result) {
	o, s, wrap := res.Request, res.Summary, report.Wrap
	fmt.Fprintf(b, "ftrace stackmap conformance (profile %s): %s\n", o.Profile, res.ClosingLine())
	kernel := s.Kernel
	if kernel == "" {
		kernel = "(the guest did not say)"
	}
	b.WriteString(wrap("kernel:  ", "         ", kernel))
	if res.Source != "" { // known once the kernel was found
		b.WriteString(wrap("image:   ", "         ", res.Source))
		b.WriteString(wrap("sha256:  ", "         ", res.KernelSHA))
		b.WriteString(wrap("machine: ", "         ", o.Arch.Name+" on "+res.Machine))
	}
	if len(res.Boots) > 0 {
		b.WriteString(wrap("boots:   ", "         ", boots(res)))
	}
	b.WriteString(wrap("seed:    ", "         ", fmt.Sprint(o.Seed)))
	if res.Suite != "" {
		b.WriteString(wrap("suite:   ", "         ", res.Suite))
	}
	if r := requireLine(res); r != "" {
		b.WriteString(wrap("require: ", "         ", r))
	}
	if res.NoVerdict != "" {
		b.WriteString("\n" + wrap("NO VERDICT: ", "    ", res.NoVerdict))
	}
}

// evidenceFailures is every failure: the boots that could not be judged,
// the requirements UNSUPPORTED where the feature is required, each FAIL
// and UNRESOLVED spec with what it observed, and the suite's problems.
func evidenceFailures(b *strings.Builder, res *Result) {
	s, wrap := res.Summary, report.Wrap
	var failed []report.Spec
	absent := map[string][]string{} // required but UNSUPPORTED: IDs by reason
	// A boot not made for the default boot's reason gives it too.
	var reasons []string
	unjudged := map[string][]string{} // the IDs of each boot that could not be judged
	for _, u := range res.Unjudged {
		unjudged[u.Boot] = []string{}
	}
	for _, sp := range s.Specs {
		_, boot := unjudged[sp.Boot]
		switch {
		case boot && sp.Class == contract.Unresolved:
			unjudged[sp.Boot] = append(unjudged[sp.Boot], sp.IDs...)
		case sp.Unsupported != "":
			why := sp.Unsupported
			if absent[why] == nil {
				reasons = append(reasons, why)
			}
			absent[why] = append(absent[why], sp.IDs...)
		case sp.Class == contract.Fail || sp.Class == contract.Unresolved:
			failed = append(failed, sp)
		}
	}
	if len(failed) > 0 || len(s.SuiteProblems) > 0 || len(reasons) > 0 || len(res.Unjudged) > 0 {
		b.WriteString("\nfailures:\n")
	}
	// One entry for each boot that could not be judged: its specs are
	// UNRESOLVED for the boot's reason, not their own.
	for _, u := range res.Unjudged {
		b.WriteString(wrap("UNRESOLVED ", "    ", u.Unjudged()))
		// The rest of a reason of several lines (a dead kernel's report)
		// as it was, each line cut to the mail's width.
		for _, l := range textlines.Rest(u.Note) {
			b.WriteString(report.Clip("    "+l, report.Width) + "\n")
		}
		if ids := slices.Compact(slices.Sorted(slices.Values(unjudged[u.Boot]))); len(ids) > 0 {
			b.WriteString(wrap("    its specs: ", "    ", strings.Join(ids, " ")))
		}
	}
	// One entry for the specs that failed only because the feature is
	// required and absent: the reason is theirs in common.
	for _, why := range reasons {
		ids := slices.Compact(slices.Sorted(slices.Values(absent[why])))
		b.WriteString(wrap("", "    ", fmt.Sprintf("FAIL stackmap is required (%s), but %d requirements are UNSUPPORTED:", res.RequiredWhy, len(ids))))
		b.WriteString(wrap("    ", "    ", why))
		b.WriteString(wrap("    ", "    ", strings.Join(ids, " ")))
	}
	for _, sp := range failed {
		ids := strings.Join(sp.IDs, " ")
		if ids == "" {
			ids = "(no requirement)"
		}
		b.WriteString(wrap(fmt.Sprintf("%s %s: ", sp.Class, ids), "    ", gloss(sp)))
		b.WriteString(wrap("    spec: ", "          ", withoutIDs(sp)))
		if sp.Message != "" {
			b.WriteString(observed(sp))
		}
	}
	for _, p := range s.SuiteProblems {
		b.WriteString(wrap("SUITE: ", "    ", p))
	}
}

// evidenceSelftests is the tree's own selftests, when the run ran them.
func evidenceSelftests(b *strings.Builder, res *Result) {
	wrap := report.Wrap
	if res.Request.FtraceDir == "" {
		return
	}
	p, f, other := ftracetest.Totals(res.Selftests)
	fmt.Fprintf(b, "\nthe tree's own selftests (ftracetest): %d passed, %d failed, %d other\n", p, f, other)
	if res.SelftestsNote != "" {
		b.WriteString(wrap("  ", "  ", res.SelftestsNote))
	}
	for _, c := range res.Selftests {
		if c.Passed() {
			continue
		}
		b.WriteString(wrap(fmt.Sprintf("%s %s: ", c.Result, c.File), "    ", c.Name))
		for _, l := range c.Tail(4) {
			b.WriteString(report.Clip("      "+l, report.Width) + "\n")
		}
		if c.Hint != "" {
			b.WriteString(wrap("    why: ", "         ", c.Hint))
		}
	}
}

// evidenceKernel is the frames that did not arrive, and the kernel's
// problems.
func evidenceKernel(b *strings.Builder, res *Result) {
	wrap := report.Wrap
	if len(res.Lost) > 0 {
		b.WriteString("\nframes that did not arrive whole:\n")
		for _, l := range res.Lost {
			b.WriteString(wrap("  ", "    ", "boot "+l.Boot+": "+l.Note))
		}
	}
	if len(res.KernelLogs) > 0 {
		b.WriteString("\nkernel problems:\n")
		for _, p := range res.KernelProblems() {
			b.WriteString(wrap("  ", "    ", p))
		}
		for _, boot := range res.MissingKernelLogs() {
			b.WriteString(wrap("  ", "    ", "UNRESOLVED "+KernelLogTest(boot)+": "+KernelLogMissing))
		}
	}
}

// observed is what a failing spec saw, for the evidence. A reason of
// several lines that is not an assertion's (a boot that died: the fault and
// the console's last lines) keeps its lines after the first, cut to the
// width, since a console is read line by line.
func observed(sp report.Spec) string {
	first, rest, multi := strings.Cut(sp.Detail, "\n")
	if !multi || strings.Contains(sp.Detail, "\nExpected") {
		return report.Wrap("    observed: ", "              ", sp.Message)
	}
	out := report.Wrap("    observed: ", "              ", first)
	for _, l := range strings.Split(rest, "\n") {
		out += report.Clip("      "+strings.TrimRight(l, " "), report.Width) + "\n"
	}
	return out
}

// boots says which boots were made, and which not and why.
func boots(res *Result) string {
	var made []string
	for _, br := range res.Boots {
		switch {
		case br.Control:
			made = append(made, br.Plan.Name+" (without any plan's parameters, to show the kernel boots; not reported)")
		case br.Boot != nil:
			made = append(made, br.Plan.Name)
		}
	}
	text := fmt.Sprintf("%d made (%s)", len(made), strings.Join(made, ", "))
	reasons, names := bootsNotMade(res)
	for _, why := range reasons {
		text += fmt.Sprintf("; %d not made: %s", len(names[why]), why)
	}
	return text
}

// gloss is what a spec's requirements ask, in the contract's own words,
// for a reader who does not know the IDs.
func gloss(sp report.Spec) string {
	var parts []string
	for _, id := range sp.IDs {
		if r, ok := contract.Requirements[id]; ok {
			parts = append(parts, r.Summary)
		}
	}
	if len(parts) == 0 {
		return withoutIDs(sp)
	}
	return strings.Join(parts, "; ")
}

// withoutIDs is a spec's text without its "[SM-...]" tags: the IDs are
// already named before it.
func withoutIDs(sp report.Spec) string {
	text := sp.Text
	for _, id := range sp.IDs {
		text = strings.ReplaceAll(text, "["+id+"]", " ")
	}
	return strings.Join(strings.Fields(text), " ")
}

// claimsEvidence is the claims in a few lines: each claim's status and
// figures; claims.txt has the tables.
func claimsEvidence(res *Result) string {
	r := res.Claims
	if r == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + report.Wrap("", "  ", fmt.Sprintf("what the series claims, measured (%s; no effect on the verdict):", strings.TrimPrefix(r.Line(), "claims: "))))
	if r.Emulated {
		b.WriteString(report.Wrap("  ", "  ", "emulated (TCG): times are not hardware times"))
	}
	for _, c := range r.Claims {
		b.WriteString(report.Wrap(fmt.Sprintf("  %s: ", c.Status), "    ", c.What+": "+c.Figures()))
	}
	return b.String()
}
