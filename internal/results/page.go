// SPDX-License-Identifier: GPL-2.0-only

package results

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// KernelLogRow is the grid's row of the boots' kernel-log checks.
const KernelLogRow = "kernel log"

// Page is the run's page (index.html): its verdict and how to make it
// again, the requirement × boot grid, each FAIL and UNRESOLVED with its
// clause, message and the kernel's log while it ran, the boots on a
// timeline, the kernel's reports, and the claims when measured.
func Page(res *Result) page.Page {
	p := page.Page{
		Title:   fmt.Sprintf("stackmap conformance: %s on %s", suiteName(res), res.Request.Arch.Name),
		Verdict: res.Verdict() + " — " + res.ClosingLine(),
		Class:   verdictClass(res.ExitCode()),
		Facts: []page.Fact{
			{Name: "kernel", Value: cmpOr(res.Summary.Kernel, res.Kernel)},
			{Name: "image", Value: res.Source + " sha256 " + res.KernelSHA},
			{Name: "machine", Value: res.Machine},
			{Name: "profile", Value: res.Request.Profile.String() + ", seed " + fmt.Sprint(res.Request.Seed)},
			{Name: "suite", Value: res.Suite},
			{Name: "make it again", Value: Reproduce(res), Code: true},
		},
	}
	p.Sections = append(p.Sections, gridSection(res))
	if d := details(res); len(d) > 0 {
		p.Sections = append(p.Sections, page.Section{Heading: "What failed, and what could not be judged", Details: d})
	}
	if t := timeline(res); t != nil {
		p.Sections = append(p.Sections, page.Section{Heading: "The boots", Times: t})
	}
	if r := res.KernelReports(); len(r) > 0 {
		t := &page.Table{Head: []string{"boot", "kind", "while", "report"}}
		for _, k := range res.KernelLogs {
			for _, rep := range k.Reports {
				t.Rows = append(t.Rows, []page.Cell{{Text: k.Boot}, {Text: rep.Kind}, {Text: rep.Where}, {Text: strings.Join(rep.Lines, "\n")}})
			}
		}
		p.Sections = append(p.Sections, page.Section{Heading: "The kernel's own reports", Table: t})
	}
	if res.Claims != nil {
		p.Sections = append(p.Sections, ClaimsSections(*res.Claims)...)
	}
	return p
}

// ClaimsPage is a claims run's page (make claims): the measurements as
// charts beside the cover letter's figures, and every claim. Claims set
// no verdict: the page's headline is what was measured.
func ClaimsPage(res *Result) page.Page {
	r := *res.Claims
	class := string(contract.Pass)
	if !r.Measured() {
		class = string(contract.Unresolved)
	}
	return page.Page{
		Title:   "stackmap claims: measured on " + res.Request.Arch.Name,
		Verdict: r.Line() + " — claims never set a conformance verdict",
		Class:   class,
		Facts: []page.Fact{
			{Name: "kernel", Value: cmpOr(res.Summary.Kernel, res.Kernel)},
			{Name: "image", Value: res.Source + " sha256 " + res.KernelSHA},
			{Name: "machine", Value: res.Machine},
			{Name: "make it again", Value: ReproduceClaims(res), Code: true},
		},
		Sections: ClaimsSections(r),
	}
}

// verdictClass is the class a run's exit status stands for.
func verdictClass(code int) string {
	switch code {
	case 0:
		return string(contract.Pass)
	case 1:
		return string(contract.Fail)
	}
	return string(contract.Unresolved)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gridSection is every result as one cell: a row per requirement and
// case, a column per boot, and the kernel-log checks as a row.
func gridSection(res *Result) page.Section {
	// A column per boot the run made (a plan no spec was selected for
	// is not booted), else per plan: a run that made none says what it
	// was to make.
	var boots []string
	for _, b := range res.Boots {
		if b.Skipped != NoSpecSelected {
			boots = append(boots, b.Plan.Name)
		}
	}
	if len(boots) == 0 {
		boots = slices.Clone(res.Plans)
	}
	rows := map[string]map[string]report.Spec{}
	var order []string
	for _, s := range res.Summary.Specs {
		row := strings.TrimPrefix(s.Name, s.Boot+".")
		// A result per cell: a name met twice in a boot gets a row of its own.
		for n := 2; rows[row] != nil && hasBoot(rows[row], s.Boot); n++ {
			row = fmt.Sprintf("%s (%d)", strings.TrimPrefix(s.Name, s.Boot+"."), n)
		}
		if rows[row] == nil {
			rows[row] = map[string]report.Spec{}
			order = append(order, row)
		}
		rows[row][s.Boot] = s
		if !slices.Contains(boots, s.Boot) {
			boots = append(boots, s.Boot)
		}
	}
	slices.Sort(order)
	t := &page.Table{Grid: true, Head: append([]string{"requirement"}, boots...)}
	for _, row := range order {
		cells := []page.Cell{{Text: row}}
		for _, b := range boots {
			s, ok := rows[row][b]
			if !ok {
				cells = append(cells, page.Cell{Text: ""})
				continue
			}
			cells = append(cells, page.Result(string(s.Class), report.Plain(s.Text+prefix(": ", s.Message))))
		}
		t.Rows = append(t.Rows, cells)
	}
	if d := res.Decoder; d != nil {
		class, i := contract.Fail, slices.Index(boots, contract.DefaultBoot)
		if d.Agrees() {
			class = contract.Pass
		}
		cells := make([]page.Cell, len(boots)+1)
		cells[0] = page.Cell{Text: DecoderTest}
		if i >= 0 {
			cells[i+1] = page.Result(string(class), "the tree's own decoder against the export the default boot captured")
		}
		t.Rows = append(t.Rows, cells)
	}
	if len(res.KernelLogs) > 0 {
		cells := []page.Cell{{Text: KernelLogRow}}
		for _, b := range boots {
			i := slices.IndexFunc(res.KernelLogs, func(k KernelLog) bool { return k.Boot == b })
			if i < 0 {
				cells = append(cells, page.Cell{})
				continue
			}
			k := res.KernelLogs[i]
			cells = append(cells, page.Result(string(k.Class()), strings.Join(k.Lines, "\n")))
		}
		t.Rows = append(t.Rows, cells)
	}
	pass, fail, skip := res.Totals()
	failed := fmt.Sprintf("%d failed", fail)
	if n := countUnresolved(res); n > 0 {
		failed += fmt.Sprintf(" (%d of them UNRESOLVED)", n)
	}
	return page.Section{Heading: "Requirements × boots",
		Text:  []string{fmt.Sprintf("%d passed, %s, %d skipped: a cell per result; hover a cell for its spec and message.", pass, failed, skip)},
		Table: t}
}

// countUnresolved counts the run's UNRESOLVED results, specs and kernel-log
// checks, which the closing line counts as failed.
func countUnresolved(res *Result) int {
	n := 0
	for _, s := range res.Summary.Specs {
		if s.Class == contract.Unresolved {
			n++
		}
	}
	for _, k := range res.KernelLogs {
		if k.Class() == contract.Unresolved {
			n++
		}
	}
	return n
}

// hasBoot says whether a row has a result in boot.
func hasBoot(row map[string]report.Spec, boot string) bool {
	_, ok := row[boot]
	return ok
}

// prefix is s after p, or "" when s is.
func prefix(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// details are the FAIL and UNRESOLVED results, each with its clause, its
// message and what the kernel logged while it ran.
func details(res *Result) []page.Detail {
	var out []page.Detail
	for _, s := range res.Summary.Specs {
		if s.Class != contract.Fail && s.Class != contract.Unresolved {
			continue
		}
		clause, _ := contract.ClauseOf(s.Message)
		msg := report.Plain(cmpOr(s.Detail, s.Message))
		out = append(out, page.Detail{Name: s.Name, Class: string(s.Class), Clause: clause, Message: msg, Excerpt: kernelWhile(res, s)})
	}
	if d := res.Decoder; d != nil && !d.Agrees() {
		out = append(out, page.Detail{Name: DecoderTest, Class: string(contract.Fail), Message: "the tree's " + d.Tool + " disagrees with the kernel's export:\n" + strings.Join(d.Problems, "\n")})
	}
	for _, k := range res.KernelLogs {
		out = append(out, page.Detail{Name: KernelLogTest(k.Boot), Class: string(k.Class()), Message: cmpOr(strings.Join(k.Lines, "\n"), KernelLogMissing)})
	}
	for _, n := range res.Unjudged {
		out = append(out, page.Detail{Name: "boot " + n.Boot, Class: string(contract.Unresolved), Message: n.Note, Excerpt: consoleEnd(res, n.Boot)})
	}
	return out
}

// excerptLines bounds an excerpt of a log.
const excerptLines = 30

// kernelWhile is what the boot's kernel logged while the spec ran, from
// the marks the suite writes to the kernel log around each spec.
func kernelWhile(res *Result, s report.Spec) string {
	f, err := os.Open(filepath.Join(res.Dir, "boots", s.Boot, "dmesg.txt"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.Contains(l, "smct-spec: start "+s.Name):
			in, lines = true, nil
		case strings.Contains(l, "smct-spec: end "+s.Name):
			in = false
		case in && !strings.Contains(l, "smct-spec: "):
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "the kernel's log while it ran:\n" + strings.Join(lines[max(0, len(lines)-excerptLines):], "\n")
}

// consoleEnd is the last lines of a boot's console: how a boot that could
// not be judged ended.
func consoleEnd(res *Result, boot string) string {
	b, err := os.ReadFile(filepath.Join(res.Dir, "boots", boot, "console.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return "the console's last lines:\n" + strings.Join(lines[max(0, len(lines)-excerptLines):], "\n")
}

// timeline is the boots that were made, each from its start.
func timeline(res *Result) *page.Timeline {
	t := &page.Timeline{Caption: "Each boot from its start, in seconds from the run's first boot."}
	var first float64
	for i, b := range res.Boots {
		if b.Boot == nil || b.Control {
			continue
		}
		start := float64(b.Boot.Started.UnixNano()) / 1e9
		if len(t.Rows) == 0 || start < first {
			first = start
		}
		t.Rows = append(t.Rows, page.Span{Label: b.Plan.Name, Start: start, Length: b.Boot.Duration.Seconds(), Class: bootClass(res, res.Boots[i].Plan.Name)})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	for i := range t.Rows {
		t.Rows[i].Start -= first
	}
	return t
}

// bootClass is how a boot's specs ended: FAIL if one failed, UNRESOLVED
// if one could not be judged, else PASS.
func bootClass(res *Result, boot string) string {
	c := contract.Pass
	for _, s := range res.Summary.Specs {
		switch {
		case s.Boot != boot:
		case s.Class == contract.Fail:
			return string(contract.Fail)
		case s.Class == contract.Unresolved:
			c = contract.Unresolved
		}
	}
	return string(c)
}

// ClaimsSections are the claims as charts beside the cover letter's
// figures: each claim with a figure, retention on and off per workload,
// and the pool's memory per bits.
func ClaimsSections(r claims.Report) []page.Section {
	var out []page.Section
	byUnit := map[string]*page.Bars{}
	var units []string
	for _, c := range r.Claims {
		if c.Value == 0 || c.ClaimedValue == 0 {
			continue
		}
		b := byUnit[c.Unit]
		if b == nil {
			b = &page.Bars{Caption: "Measured (bar) against the cover letter's figure (dashed mark), " + c.Unit, Unit: c.Unit}
			byUnit[c.Unit] = b
			units = append(units, c.Unit)
		}
		b.Bars = append(b.Bars, page.Bar{Label: c.ID, Value: c.Value, Reference: c.ClaimedValue, RefLabel: "claimed", Class: claimClass(c.Status)})
	}
	for _, u := range units {
		name := u
		if u == "x" {
			name = "ratios (x)"
		}
		out = append(out, page.Section{Heading: "The claims in " + name, Bars: byUnit[u]})
	}
	if len(r.Rows) > 0 {
		b := &page.Bars{Caption: "Events the ring buffer retained, per workload, stackmap off and on", Unit: "events"}
		for _, row := range r.Rows {
			b.Bars = append(b.Bars, page.Bar{Label: row.Workload + ", " + row.Mode, Value: float64(row.Events)})
		}
		out = append(out, page.Section{Heading: "Retention", Bars: b})
	}
	if len(r.Pool) > 0 {
		b := &page.Bars{Caption: "The map's memory per bits= (MB)", Unit: "MB"}
		for _, row := range r.Pool {
			b.Bars = append(b.Bars, page.Bar{Label: fmt.Sprintf("bits=%d (%s)", row.Bits, row.Boot), Value: float64(row.Bytes) / (1 << 20)})
		}
		out = append(out, page.Section{Heading: "Pool memory", Bars: b})
	}
	t := &page.Table{Head: []string{"claim", "what", "claimed", "measured", "status"}}
	for _, c := range r.Claims {
		t.Rows = append(t.Rows, []page.Cell{{Text: c.ID}, {Text: c.What}, {Text: c.Claimed}, {Text: c.Measured}, {Text: string(c.Status), Title: c.Why}})
	}
	out = append(out, page.Section{Heading: "Every claim", Table: t, Text: []string{"Measured on " + r.Machine + "; " + emulatedNote(r.Emulated)}})
	return out
}

func emulatedNote(emulated bool) string {
	if emulated {
		return "under emulation (TCG): times are not hardware times."
	}
	return "on hardware-assisted virtualisation."
}

// claimClass is how a claim's status reads on a chart.
func claimClass(s claims.Status) string {
	switch s {
	case claims.Reproduced:
		return "met"
	case claims.NotReproduced:
		return "not-met"
	}
	return ""
}
