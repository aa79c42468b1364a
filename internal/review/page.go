// SPDX-License-Identifier: GPL-2.0-only

package review

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Page is the walk's page: per arch, the requirements × patches grid, a
// patch's cell marked where it changed a requirement, each cell linked to
// that prefix's run page; then the claims of the whole series.
func (w *Walk) Page() page.Page {
	pass, fail, skip := w.Counts()
	class := string(contract.Pass)
	switch w.ExitCode() {
	case 1:
		class = string(contract.Fail)
	case 2:
		class = string(contract.Unresolved)
	}
	p := page.Page{
		Title:   "stackmap conformance: the series " + w.Series.Name + " walked patch by patch",
		Verdict: fmt.Sprintf("%s — %d prefixes passed, %d failed, %d not judged", w.Verdict(), pass, fail, skip),
		Class:   class,
		Facts:   []page.Fact{{Name: "tree", Value: w.Tree + " at " + w.Commit}, {Name: "arches", Value: strings.Join(w.Arches, ", ")}, {Name: "took", Value: w.Wall.Round(1e9).String()}},
	}
	for _, arch := range w.Arches {
		steps := w.Steps[arch]
		head := []string{"requirement"}
		for k := range steps {
			head = append(head, fmt.Sprintf("patch %d", k))
		}
		t := &page.Table{Grid: true, Head: head}
		for _, id := range w.ids(arch) {
			row := []page.Cell{{Text: id}}
			for k, st := range steps {
				c := st.Classes[id]
				cell := page.Result(string(c), st.Reasons[id])
				if c == "" {
					cell = page.Cell{Text: st.problem()}
				}
				if k > 0 && steps[k-1].Classes != nil && st.Classes != nil && steps[k-1].Classes[id] != c {
					cell.Text += " (changed here)"
				}
				cell.Link = pageLink(w.Dir, st.RunDir)
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
		var patches []string
		for k := range steps {
			patches = append(patches, fmt.Sprintf("patch %d: %s", k, subjectOf(w.Series, k)))
		}
		p.Sections = append(p.Sections, page.Section{Heading: "Requirements × patches, " + arch,
			Text: append([]string{"Each prefix of the series built and booted: a column per patch applied, \"changed here\" where that patch changed a requirement; a cell links that prefix's run."}, patches...), Table: t})
	}
	for _, arch := range w.Arches {
		steps := w.Steps[arch]
		if len(steps) > 0 && steps[len(steps)-1].Claims != nil {
			p.Sections = append(p.Sections, results.ClaimsSections(*steps[len(steps)-1].Claims)...)
			break
		}
	}
	return p
}

// problem is why a step has no class for a requirement: not built, not
// booted, or no verdict.
func (st *Step) problem() string {
	switch {
	case st.Build != "" && st.Build != "ok":
		return "did not build"
	case st.Boot != "" && st.Boot != "ok":
		return "did not boot"
	case st.Infra != "":
		return "no verdict"
	}
	return "-"
}

// pageLink is a prefix's run page as the walk's page links it: relative,
// so that the walk's directory can be moved or attached whole.
func pageLink(dir, runDir string) string {
	if runDir == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, filepath.Join(runDir, page.File))
	if err != nil {
		return ""
	}
	return rel
}
