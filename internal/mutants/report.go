// SPDX-License-Identifier: GPL-2.0-only

package mutants

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
)

// TableFile is the table make mutants writes beside each row's run.
const TableFile = "mutants.txt"

// Write puts the rows' table (TableFile, said of the kernel o booted) and
// their page into dir, and returns the table's text and whether every
// row is as it must be.
func Write(dir string, o qemutest.Options, rows []Row) (text string, ok bool, err error) {
	var b strings.Builder
	switch {
	case o.Lane.IsSanitized() && o.Kernel != "":
		fmt.Fprintf(&b, "kernel: KERNEL=%s, sanitized (its config has KASAN on)\n\n", o.Kernel)
	case o.Lane.IsSanitized():
		fmt.Fprintf(&b, "kernel: the reference kernel, %s\n\n", o.Lane.Words())
	}
	ok = WriteTable(&b, rows)
	if err := os.WriteFile(filepath.Join(dir, TableFile), []byte(b.String()), 0o644); err != nil {
		return "", false, err
	}
	html, err := page.Render(Page(dir, rows))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, page.File), html, 0o644)
	}
	return b.String(), ok, err
}

// Tally counts the rows: those as they must be (a fault caught, a variant
// or the clean kernel passing), and the names of those without a verdict,
// which say nothing of the suite.
type Tally struct {
	Caught, Rows int
	NoVerdict    []string
}

// Count tallies rows.
func Count(rows []Row) Tally {
	t := Tally{Rows: len(rows)}
	for _, r := range rows {
		if r.Caught() {
			t.Caught++
		}
		if r.Err != nil {
			t.NoVerdict = append(t.NoVerdict, r.line().name)
		}
	}
	return t
}

// line is one row of the table as its readers see it.
type line struct {
	name, want, verdict, also, unresolved string
	ok                                    bool // caught, clean or passes
}

// line is the row in the table's words: what must fail, the verdict, the
// echoes ("!" after one no fault table explains), what was unresolved.
func (r Row) line() line {
	name, want := r.Fault, r.Want
	verdict := "caught"
	switch {
	case name == "":
		name, want, verdict = "(none)", "nothing", "clean"
	case r.Variant:
		name, want, verdict = "variant "+name, "nothing", "passes"
	case r.mustPass():
		want, verdict = "nothing", "passes" // a checker's fault, no checkers
	case r.Checker != "":
		want = r.Checker
	}
	var also []string
	for _, id := range r.Also() {
		if !slices.Contains(r.Echoes, id) {
			id += "!"
		}
		also = append(also, id)
	}
	for _, id := range r.Warned {
		if id != r.Want {
			also = append(also, id+"(warning)")
		}
	}
	if r.Reported != "" {
		also = append(also, r.Reported)
	}
	alsoText, unresolved := dash(also), dash(r.Unresolved)
	switch {
	case r.Err != nil:
		verdict, alsoText, unresolved = "NO VERDICT", r.Err.Error(), ""
	case !r.Caught() && r.Fault == "":
		verdict = "DIRTY"
	case r.mustPass():
		if !r.Caught() {
			verdict = "FALSE"
		}
	case r.Checker != "" && r.Reported == "":
		verdict = "MISSED"
	case r.Checker == "" && !slices.Contains(r.Failed, r.Want) && !slices.Contains(r.Warned, r.Want):
		verdict = "MISSED"
	case !r.Caught():
		verdict = "ECHO"
	}
	if slices.Contains(r.Warned, r.Want) {
		want += "(w)"
	}
	return line{name, want, verdict, alsoText, unresolved, verdict == "caught" || verdict == "clean" || verdict == "passes"}
}

// WriteTable prints the rows, one per fault, and says whether every
// fault was caught alone and every variant and the clean kernel passed.
func WriteTable(w io.Writer, rows []Row) (ok bool) {
	ok = true
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", "fault", "must fail", "verdict", "also failed", "unresolved")
	for _, r := range rows {
		l := r.line()
		ok = ok && l.ok
		if r.Err != nil {
			// The error's words trail the row: no column to align.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.name, l.want, l.verdict, l.also)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.name, l.want, l.verdict, l.also, l.unresolved)
	}
	return ok
}

// Page is the mutants' page: fault × verdict, each row what must fail, its
// verdict, the echoes and what could not be judged, linked to its run.
func Page(dir string, rows []Row) page.Page {
	t := &page.Table{Grid: true, Head: []string{"fault", "must fail", "verdict", "also failed", "unresolved"}}
	ok, caught := true, 0
	for _, r := range rows {
		l := r.line()
		ok = ok && l.ok
		class := "PASS"
		switch {
		case r.Err != nil:
			class = "UNRESOLVED"
		case !l.ok:
			class = "FAIL"
		default:
			caught++
		}
		cell := page.Cell{Text: page.Symbol(class) + " " + l.verdict, Class: class, Title: l.also, Link: r.runLink(dir)}
		t.Rows = append(t.Rows, []page.Cell{{Text: l.name}, {Text: l.want}, cell, {Text: l.also}, {Text: l.unresolved}})
	}
	class := "PASS"
	if !ok {
		class = "FAIL"
	}
	return page.Page{Title: "stackmap conformance: the reference kernel's fault switches", Class: class,
		Verdict: fmt.Sprintf("%d of %d rows as they must be: every fault caught by its own requirement alone, every variant and the clean kernel passing", caught, len(rows)),
		Sections: []page.Section{{Heading: "Fault × verdict", Table: t,
			Text: []string{"A row per fault switch and variant of the reference kernel (kernel/README.md); \"!\" marks an echo no fault table explains. Each verdict links the run of its boot."}}}}
}

// runLink is a row's run page, relative to the mutants' directory: the
// row's directory holds its run under latest.
func (r Row) runLink(dir string) string {
	name := r.Fault
	if name == "" {
		name = cleanRow
	}
	p := filepath.Join(dir, name, "latest", page.File)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return filepath.Join(name, "latest", page.File)
}

func dash(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, " ")
}
