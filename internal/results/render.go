// SPDX-License-Identifier: GPL-2.0-only

// Rendering a finished run for the people who review the stackmap series:
// the summary qemu-test prints, KTAP as kselftest writes it (so LKFT and
// KernelCI parsers read it), a short block of evidence to paste into a
// reply on the mailing list, and the one-line verdict.

package results

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
)

// The files Write puts into the run's directory.
const (
	SummaryFile  = "summary.txt"
	KTAPFile     = "ktap.txt"
	EvidenceFile = "evidence.txt"
	// VerdictFile keeps the verdict on one line ("ok", "FAIL", "NO VERDICT:
	// ..."): make turns every failing status into its own 2.
	VerdictFile = "verdict.txt"
)

// SeenInDefaultBoot follows the reason given to the specs of a boot that
// was not made because the default boot found the feature absent.
const SeenInDefaultBoot = " (seen in the default boot"

// DefaultFtraceMatch picks the tree's selftests run by FTRACETEST=: those
// of the feature.
const DefaultFtraceMatch = "stackmap"

// Width is the widest line evidence.txt makes, unless a word is wider.
const Width = 76

// maxDiag caps the diagnostic lines of one spec in KTAP; the rest of a long
// failure message stays in report.json.
const maxDiag = 20

// Write puts the summary, the KTAP, the JUnit, the evidence and the
// verdict into the run's directory, and returns the summary: what
// qemu-test prints. A run without a verdict (Result.NoVerdict) gets them
// too, saying why.
func Write(res *Result) (string, error) {
	summary := Text(res)
	junit, err := JUnit(res)
	if err != nil {
		return summary, err
	}
	for _, f := range []struct{ name, text string }{
		{SummaryFile, summary}, {KTAPFile, KTAP(res)}, {JUnitFile, string(junit)}, {EvidenceFile, Evidence(res)},
		{VerdictFile, OneLine(res.Verdict()) + "\n"},
	} {
		if err := os.WriteFile(filepath.Join(res.Dir, f.name), []byte(Plain(f.text)), 0o644); err != nil {
			return summary, err
		}
	}
	return summary, nil
}

// ansiEscape is a terminal control sequence, such as a colour.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// OneLine is a verdict as verdict.txt keeps it, for scripts: its first line,
// without colour escapes or other control characters.
func OneLine(verdict string) string {
	first, _, _ := strings.Cut(verdict, "\n")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, ansiEscape.ReplaceAllString(first, ""))
}

// Text is the run in full: where it ran, one line per spec, the
// requirements' coverage, and the closing line, last.
func Text(res *Result) string {
	s := res.Summary
	var b strings.Builder
	for _, h := range header(res) {
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
	for _, p := range res.KernelProblems {
		fmt.Fprintf(&b, "%-11s %s\n", "KERNEL", p)
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
	b.WriteString(res.ClosingLine() + "\n")
	return b.String()
}

// decoderText says whether the tree's own stack_map_bin decoder read the
// kernel's export as the suite did; nothing when the tree has none.
func decoderText(res *Result, lead, indent string) string {
	d := res.Decoder
	switch {
	case d == nil && res.DecoderNote == "":
		return ""
	case d == nil:
		return lead + wrap("the tree's decoder ("+dumpcheck.Tool+"): ", indent, res.DecoderNote)
	case d.Agrees():
		return lead + wrap("the tree's decoder ("+dumpcheck.Tool+"): ", indent, fmt.Sprintf("agrees with the kernel's export: %d stacks, their ids, ref counts, depths and addresses", d.Stacks))
	}
	var b strings.Builder
	b.WriteString(lead + wrap("the tree's decoder ("+dumpcheck.Tool+"): ", indent, fmt.Sprintf("DISAGREES with the kernel's export (%d stacks)", d.Stacks)))
	for _, p := range d.Problems {
		b.WriteString(wrap(indent+"- ", indent+"  ", p))
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

// header is what a run was, as the summary and the KTAP begin: a value
// the run did not learn before it stopped is "".
func header(res *Result) [][2]string {
	o := res.Request
	image := res.Source
	if res.KernelSHA != "" {
		image += ", sha256 " + res.KernelSHA
	}
	machine := o.Arch
	if res.Machine != "" {
		machine += " on " + res.Machine
	}
	return [][2]string{{"kernel", res.Summary.Kernel}, {"image", image}, {"machine", machine},
		{"profile", o.Profile}, {"seed", fmt.Sprint(o.Seed)}, {"suite", res.Suite}, {"require", requireLine(res)}}
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

// requireLine says whether the run requires the feature, and who decided.
func requireLine(res *Result) string {
	switch {
	case res.RequiredWhy == "":
		return ""
	case res.Required:
		return "stackmap (" + res.RequiredWhy + ")"
	}
	return "nothing (" + res.RequiredWhy + ")"
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

// clean keeps one line printable: control characters become spaces, and
// the end is trimmed (indentation is kept, it shapes Gomega's values).
func clean(s string) string {
	return strings.TrimRightFunc(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, ansiEscape.ReplaceAllString(s, "")), unicode.IsSpace)
}

// Plain is text without terminal escapes (Ginkgo colours its errors) and
// without control characters other than newlines and tabs: what files and
// pipes get.
func Plain(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, ansiEscape.ReplaceAllString(s, ""))
}

// ktapName makes a spec's text a KTAP description: one line, and no "#",
// which would start the directive.
func ktapName(text string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(text, "#", "_")), " ")
}

// Evidence is the run in a few lines for a reply on the mailing list: what
// was booted where, the totals, every failure with its requirement IDs and
// what was observed, the kernel's problems, and the command to reproduce it.
func Evidence(res *Result) string {
	o := res.Request
	s := res.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "ftrace stackmap conformance (profile %s): %s\n", o.Profile, res.ClosingLine())
	kernel := s.Kernel
	if kernel == "" {
		kernel = "(the guest did not say)"
	}
	b.WriteString(wrap("kernel:  ", "         ", kernel))
	if res.Source != "" { // known once the kernel was found
		b.WriteString(wrap("image:   ", "         ", res.Source))
		b.WriteString(wrap("sha256:  ", "         ", res.KernelSHA))
		b.WriteString(wrap("machine: ", "         ", o.Arch+" on "+res.Machine))
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

	var failed []Spec
	absent := map[string][]string{} // required but UNSUPPORTED: IDs by reason
	// A boot not made for the default boot's reason gives it too.
	var reasons []string
	for _, sp := range s.Specs {
		switch {
		case sp.Unsupported != "":
			why, _, _ := strings.Cut(sp.Unsupported, SeenInDefaultBoot)
			if absent[why] == nil {
				reasons = append(reasons, why)
			}
			absent[why] = append(absent[why], sp.IDs...)
		case sp.Class == contract.Fail || sp.Class == contract.Unresolved:
			failed = append(failed, sp)
		}
	}
	if len(failed) > 0 || len(s.SuiteProblems) > 0 || len(reasons) > 0 {
		b.WriteString("\nfailures:\n")
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
	if o.FtraceDir != "" {
		p, f, other := ftracetest.Totals(res.Selftests)
		fmt.Fprintf(&b, "\nthe tree's own selftests (ftracetest): %d passed, %d failed, %d other\n", p, f, other)
		if res.SelftestsNote != "" {
			b.WriteString(wrap("  ", "  ", res.SelftestsNote))
		}
		for _, c := range res.Selftests {
			if c.Passed() {
				continue
			}
			b.WriteString(wrap(fmt.Sprintf("%s %s: ", c.Result, c.File), "    ", c.Name))
			for _, l := range c.Tail(4) {
				l = "      " + l
				if len(l) > Width {
					l = l[:Width-3] + "..."
				}
				b.WriteString(l + "\n")
			}
			if c.Hint != "" {
				b.WriteString(wrap("    why: ", "         ", c.Hint))
			}
		}
	}
	b.WriteString(decoderText(res, "\n", "  "))
	if len(res.KernelProblems) > 0 {
		b.WriteString("\nkernel problems:\n")
		for _, p := range res.KernelProblems {
			b.WriteString(wrap("  ", "    ", p))
		}
	}
	// A command is not wrapped: it must paste back whole.
	cmd := Reproduce(res)
	if len("reproduce: "+cmd) <= Width {
		fmt.Fprintf(&b, "\nreproduce: %s\n", cmd)
	} else {
		fmt.Fprintf(&b, "\nreproduce:\n  %s\n", cmd)
	}
	return b.String()
}

// observed is what a failing spec saw, for the evidence. A reason of
// several lines that is not an assertion's (a boot that died: the fault and
// the console's last lines) keeps its lines after the first, cut to the
// width, since a console is read line by line.
func observed(sp Spec) string {
	first, rest, multi := strings.Cut(sp.Detail, "\n")
	if !multi || strings.Contains(sp.Detail, "\nExpected") {
		return wrap("    observed: ", "              ", sp.Message)
	}
	out := wrap("    observed: ", "              ", first)
	for _, l := range strings.Split(rest, "\n") {
		l = "      " + strings.TrimRight(l, " ")
		if len(l) > Width {
			l = l[:Width-3] + "..."
		}
		out += l + "\n"
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
func gloss(sp Spec) string {
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
func withoutIDs(sp Spec) string {
	text := sp.Text
	for _, id := range sp.IDs {
		text = strings.ReplaceAll(text, "["+id+"]", " ")
	}
	return strings.Join(strings.Fields(text), " ")
}

// wrap breaks text at spaces into lines of at most Width columns, the first
// after head, the others after indent. A word wider than a line stays whole.
func wrap(head, indent, text string) string {
	var b strings.Builder
	line, empty := head, true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > Width {
			b.WriteString(line + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+w, false
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// defaultTimeout is the Makefile's TIMEOUT; another is part of the command.
const defaultTimeout = 5 * time.Minute

// Reproduce is the command that makes the run again from the project's
// root: make's when it can express the options, else smct's own.
func Reproduce(res *Result) string {
	o := res.Request
	type opt struct{ makeVar, flag, value string }
	opts := []opt{{"ARCH", "-arch", o.Arch}}
	switch {
	case o.Kernel != "":
		opts = append(opts, opt{"KERNEL", "-kernel", o.Kernel})
	case o.Tree != "":
		opts = append(opts, opt{"TREE", "-tree", o.Tree})
	case o.Image != "":
		opts = append(opts, opt{"IMAGE", "-image", o.Image})
	case res.Entry != "":
		// The lock's default may change: name the entry that was booted.
		opts = append(opts, opt{"IMAGE", "-image", res.Entry})
	}
	opts = append(opts, opt{"PROFILE", "-profile", o.Profile})
	if o.Labels != "" {
		opts = append(opts, opt{"LABELS", "-labels", o.Labels})
	}
	if o.FtraceDir != "" {
		opts = append(opts, opt{"FTRACETEST", "-ftracetest", o.FtraceDir})
		if o.FtraceMatch != DefaultFtraceMatch {
			opts = append(opts, opt{"FTRACETEST_MATCH", "-ftracetest-match", o.FtraceMatch})
		}
	}
	if o.Seed != 0 {
		opts = append(opts, opt{"SEED", "-seed", fmt.Sprint(o.Seed)})
	}
	if o.Require != RequireAuto {
		opts = append(opts, opt{"REQUIRE", "-require-feature", o.Require})
	}
	if o.Timeout != 0 && o.Timeout != defaultTimeout {
		opts = append(opts, opt{"TIMEOUT", "-timeout", o.Timeout.String()})
	}
	words := []string{"make", "qemu-test"}
	if len(o.BootArgs) > 0 {
		// make has no variable for extra kernel command line words.
		words = []string{"go", "run", "./cmd/smct", "qemu-test"}
		opts = append(opts, opt{"", "-append", strings.Join(o.BootArgs, " ")})
	}
	for _, op := range opts {
		if words[0] == "make" {
			words = append(words, op.makeVar+"="+shellWord(op.value))
		} else {
			words = append(words, op.flag, shellWord(op.value))
		}
	}
	return strings.Join(words, " ")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:,+@%=-]+$`)

// shellWord quotes a value for a POSIX shell when it needs it.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellCommand is a command line a POSIX shell runs as the words given,
// each quoted only when it needs it, like the reproduce line.
func ShellCommand(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}
