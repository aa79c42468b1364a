// SPDX-License-Identifier: GPL-2.0-only

package bench

import (
	"fmt"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/page"
)

// Page is the bench's page: each target against its limit, each boot's
// time against its floor, and every figure with its change since prev.
func (r *Report) Page(prev *Report) page.Page {
	p := page.Page{Title: "stackmap conformance: time to a verdict", Facts: []page.Fact{
		{Name: "image", Value: r.Image}, {Name: "repetitions", Value: fmt.Sprint(r.Reps)}, {Name: "host", Value: r.Host},
		{Name: "measured", Value: r.Time.Format("2006-01-02 15:04 MST")}}}
	if r.Lane != "" {
		p.Facts = append(p.Facts, page.Fact{Name: "lane", Value: r.Lane + ": the targets are the plain lane's, shown but not judged"})
	}
	met, missed := 0, 0
	targets := &page.Bars{Caption: "Each target's value (bar) against its limit (dashed mark), seconds", Unit: "s"}
	for _, t := range r.Targets {
		class := ""
		switch r.verdict(t) {
		case "met":
			class = "met"
			met++
		case "NOT MET":
			class = "not-met"
			missed++
		}
		targets.Bars = append(targets.Bars, page.Bar{Label: t.Name, Value: t.Value, Reference: t.Limit, RefLabel: "limit", Class: class})
	}
	p.Verdict, p.Class = fmt.Sprintf("%d targets met, %d not met", met, missed), "PASS"
	if missed > 0 {
		p.Class = "FAIL"
	}
	if n := r.Unjudged(); n > 0 {
		p.Verdict += fmt.Sprintf(" (%d of the targets are the plain lane's: not judged in the %s lane)", n, r.Lane)
	}
	p.Sections = append(p.Sections, page.Section{Heading: "Targets", Bars: targets})
	floors := &page.Bars{Caption: "Each boot's time (bar) against its floor, a boot whose init only powers off (dashed mark), seconds", Unit: "s"}
	values := map[string]float64{}
	for _, f := range r.Figures {
		values[f.Name] = f.Value
	}
	for _, f := range r.Figures {
		if boot, ok := strings.CutSuffix(f.Name, ", suite"); ok {
			floors.Bars = append(floors.Bars, page.Bar{Label: boot, Value: f.Value, Reference: values[boot+", floor"], RefLabel: "floor"})
		}
	}
	if len(floors.Bars) > 0 {
		p.Sections = append(p.Sections, page.Section{Heading: "The boots against their floors", Bars: floors})
	}
	old := map[string]float64{}
	if prev != nil && prev.Image == r.Image && prev.Lane == r.Lane {
		for _, f := range prev.Figures {
			old[f.Name] = f.Value
		}
	}
	t := &page.Table{Head: []string{"figure", "median", "previous", "change"}}
	for _, f := range r.Figures {
		row := []page.Cell{{Text: f.Name}, {Text: format(f.Value, f.Unit)}, {}, {}}
		if v, ok := old[f.Name]; ok && v > 0 {
			row[2], row[3] = page.Cell{Text: format(v, f.Unit)}, page.Cell{Text: fmt.Sprintf("%+.1f%%", 100*(f.Value-v)/v)}
		}
		t.Rows = append(t.Rows, row)
	}
	p.Sections = append(p.Sections, page.Section{Heading: "Every figure", Table: t})
	return p
}
