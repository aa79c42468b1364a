// SPDX-License-Identifier: GPL-2.0-only

// Package page renders what a run, a walk, a matrix, the mutants, the
// claims or the bench leave as one HTML file a reviewer looks at: no
// network, no script, no style or font from elsewhere, pictures as inline
// SVG. It opens from file://, as a CI artifact and as a mail attachment,
// and prints. Its callers build a Page from their own data (what their
// text reports are made from too), never from the text.
package page

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strings"
)

// File is the name of a run's (or a walk's, a matrix's...) page.
const File = "index.html"

// A Page is a title, a verdict and sections.
type Page struct {
	Title    string
	Verdict  string // the run's verdict in its own words
	Class    string // the verdict's class: PASS, FAIL, UNRESOLVED, UNSUPPORTED, or ""
	Facts    []Fact // the run's facts: kernel, machine, how to make it again
	Sections []Section
}

// A Fact is one line of what the page is about.
type Fact struct {
	Name, Value string
	Code        bool // shown as code (a command to copy)
}

// A Section is a heading and what it shows, each part optional.
type Section struct {
	Heading string
	Text    []string
	Table   *Table
	Bars    *Bars
	Times   *Timeline
	Details []Detail
}

// A Table is a grid of cells with its headers.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]Cell
	// Grid marks a table whose cells are results: the browser test counts
	// them against the run's totals.
	Grid bool
}

// A Cell is one cell: text, a result class shown by a word and a symbol
// (never by colour alone), a link and a title to hover.
type Cell struct {
	Text, Class, Link, Title string
}

// Result is a result cell: the class's symbol and word, what to hover.
func Result(class, title string) Cell {
	return Cell{Text: Symbol(class) + " " + class, Class: class, Title: title}
}

// Symbol is a class's symbol, which tells it apart without its colour.
func Symbol(class string) string {
	switch class {
	case "PASS":
		return "✓"
	case "FAIL":
		return "✗"
	case "UNRESOLVED", "NO VERDICT":
		return "?"
	case "UNSUPPORTED", "SKIP":
		return "–"
	}
	return "·"
}

// A Detail is a result that needs words: a FAIL or UNRESOLVED with its
// clause, message and the console around it.
type Detail struct {
	Name, Class, Clause, Message, Excerpt string
}

// Bars is a chart of figures, each against a reference (the claimed
// figure, a floor, a target), which is drawn as a mark.
type Bars struct {
	Caption string
	Unit    string
	Bars    []Bar
}

// A Bar is one figure.
type Bar struct {
	Label     string
	Value     float64
	Reference float64 // 0 for none
	RefLabel  string  // what the reference is: "claimed", "floor", "target"
	Class     string  // how the figure stands against it, if judged
}

// Timeline is when each boot ran, against its floor where known.
type Timeline struct {
	Caption string
	Rows    []Span
}

// A Span is one boot's start and length, in seconds from the run's start.
type Span struct {
	Label         string
	Start, Length float64
	Floor         float64 // 0 when unknown
	Class         string
}

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"lower":    strings.ToLower,
	"bars":     barsSVG,
	"timeline": timelineSVG,
}).Parse(pageTemplate))

// Render is the page's HTML.
func Render(p Page) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// chart sizes: wide enough to read, narrow enough for a 1280-pixel window.
const (
	chartWidth = 880
	labelWidth = 260
	rowHeight  = 22
)

// chartStart opens a chart's SVG of height h, its caption its title.
func chartStart(s *strings.Builder, h int, caption string) {
	fmt.Fprintf(s, `<svg class="chart" role="img" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`, chartWidth, h, chartWidth, h)
	fmt.Fprintf(s, "<title>%s</title>", template.HTMLEscapeString(caption))
}

// barsSVG draws a bar per figure with its reference as a line; each bar
// and mark carries its number as a title and a label.
func barsSVG(c *Bars) template.HTML {
	scale := 0.0
	for _, b := range c.Bars {
		scale = math.Max(scale, math.Max(b.Value, b.Reference))
	}
	if scale <= 0 {
		scale = 1
	}
	plot := float64(chartWidth - labelWidth - 120)
	h := rowHeight*len(c.Bars) + 10
	var s strings.Builder
	chartStart(&s, h, c.Caption)
	for i, b := range c.Bars {
		y := 5 + i*rowHeight
		w := b.Value / scale * plot
		fmt.Fprintf(&s, `<text x="%d" y="%d" class="label">%s</text>`, labelWidth-6, y+15, template.HTMLEscapeString(b.Label))
		fmt.Fprintf(&s, `<rect class="bar %s" data-value="%s" x="%d" y="%d" width="%.1f" height="%d"><title>%s: %s %s</title></rect>`,
			strings.ToLower(b.Class), num(b.Value), labelWidth, y+2, math.Max(w, 1), rowHeight-6, template.HTMLEscapeString(b.Label), num(b.Value), c.Unit)
		text := num(b.Value) + " " + c.Unit
		if b.Reference > 0 {
			x := float64(labelWidth) + b.Reference/scale*plot
			fmt.Fprintf(&s, `<line class="ref" data-value="%s" x1="%.1f" x2="%.1f" y1="%d" y2="%d"><title>%s: %s %s</title></line>`,
				num(b.Reference), x, x, y, y+rowHeight-2, template.HTMLEscapeString(b.RefLabel), num(b.Reference), c.Unit)
			text += " (" + b.RefLabel + " " + num(b.Reference) + ")"
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" class="value">%s</text>`, float64(labelWidth)+math.Max(w, 1)+6, y+15, template.HTMLEscapeString(text))
	}
	s.WriteString("</svg>")
	return template.HTML(s.String())
}

// timelineSVG draws each boot as a bar from its start, its floor as a
// mark inside it.
func timelineSVG(t *Timeline) template.HTML {
	end := 0.0
	for _, r := range t.Rows {
		end = math.Max(end, r.Start+r.Length)
	}
	if end <= 0 {
		end = 1
	}
	plot := float64(chartWidth - labelWidth - 80)
	h := rowHeight*len(t.Rows) + 24
	var s strings.Builder
	chartStart(&s, h, t.Caption)
	for i, r := range t.Rows {
		y := 5 + i*rowHeight
		x := float64(labelWidth) + r.Start/end*plot
		w := math.Max(r.Length/end*plot, 1)
		fmt.Fprintf(&s, `<text x="%d" y="%d" class="label">%s</text>`, labelWidth-6, y+15, template.HTMLEscapeString(r.Label))
		title := fmt.Sprintf("%s: from %ss, %ss", r.Label, num(r.Start), num(r.Length))
		if r.Floor > 0 {
			title += fmt.Sprintf(", floor %ss", num(r.Floor))
		}
		fmt.Fprintf(&s, `<rect class="bar %s" data-value="%s" x="%.1f" y="%d" width="%.1f" height="%d"><title>%s</title></rect>`,
			strings.ToLower(r.Class), num(r.Length), x, y+2, w, rowHeight-6, template.HTMLEscapeString(title))
		if r.Floor > 0 {
			fmt.Fprintf(&s, `<line class="ref" data-value="%s" x1="%.1f" x2="%.1f" y1="%d" y2="%d"><title>floor %ss</title></line>`,
				num(r.Floor), x+r.Floor/end*plot, x+r.Floor/end*plot, y, y+rowHeight-2, num(r.Floor))
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" class="value">%ss</text>`, x+w+6, y+15, num(r.Length))
	}
	fmt.Fprintf(&s, `<text x="%d" y="%d" class="value">0 s</text><text x="%d" y="%d" class="value">%s s</text>`, labelWidth, h-4, chartWidth-70, h-4, num(end))
	s.WriteString("</svg>")
	return template.HTML(s.String())
}

// num is a figure as the page shows it: three significant digits at most.
func num(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e7:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
