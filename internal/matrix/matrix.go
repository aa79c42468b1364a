// SPDX-License-Identifier: GPL-2.0-only

// Package matrix runs the suite for several kernels and arches, a few boots
// at a time, and tabulates the verdicts: `smct matrix`.
package matrix

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// Cell is one images.lock entry on one arch.
type Cell struct {
	Entry    string
	Arch     arch.Arch // none for a job whose log did not say (lava-results)
	Result   *results.Result
	Err      error // no verdict
	Duration time.Duration
}

// Name is the cell's directory under the matrix's.
func (c Cell) Name() string { return c.Entry + "-" + c.archName() }

// archName is the cell's arch, "?" when unknown.
func (c Cell) archName() string { return cmp.Or(c.Arch.Name, "?") }

// Code is the cell's exit status, as qemu-test's.
func (c Cell) Code() int {
	if c.Err != nil {
		return 2
	}
	return c.Result.ExitCode()
}

// Verdict is "ok", "FAIL" or "NO VERDICT: <reason>", on one line.
func (c Cell) Verdict() string {
	if c.Err != nil {
		return report.OneLine("NO VERDICT: " + c.Err.Error())
	}
	return c.Result.Verdict()
}

// Requires is what the cell expects of its kernel: "stackmap" when its
// UNSUPPORTED stackmap specs fail it, "-" when they may be skipped, "?"
// when the run stopped before deciding.
func (c Cell) Requires() string {
	switch {
	case c.Result == nil || c.Result.RequiredWhy == "":
		return "?"
	case c.Result.Required:
		return "stackmap"
	}
	return "-"
}

// Totals are the cell's passed, failed and skipped specs.
func (c Cell) Totals() (passed, failed, skipped int) {
	if c.Err != nil {
		return 0, 0, 0
	}
	return c.Result.Totals()
}

// Options say what to run.
type Options struct {
	Base     qemutest.Options // all but Arch, Image, ResultsDir and Progress
	Runner   *qemutest.Runner // makes the cells' runs; nil for one of the matrix's own
	Entries  []string
	Arches   arch.List
	Dir      string // results/matrix-<time>; cell runs go to Dir/<entry>-<arch>/
	Parallel int    // boots at a time
	Notes    io.Writer
	// Done is told of each cell as it finishes, one call at a time; done
	// cells are counted in n.
	Done func(c Cell, n, total int)
}

// Select sets the matrix's entries from names (comma-separated; "" is
// every entry of the lock), narrowed to what the lane can run.
func (o *Options) Select(names string) error {
	lock, err := images.Read(o.Base.LockFile)
	if err != nil {
		return err
	}
	if o.Entries, err = lock.Names(names); err != nil {
		return err
	}
	if o.Entries, err = lock.InLane(o.Entries, o.Base.Lane, names != "", o.Notes); err == nil && len(o.Entries) == 0 {
		err = fmt.Errorf("SANITIZE=1: no entry of images.lock is built here")
	}
	return err
}

// Run runs every cell and returns them in entry, then arch, order.
func Run(ctx context.Context, o Options) []Cell {
	var cells []Cell
	for _, e := range o.Entries {
		for _, a := range o.Arches {
			cells = append(cells, Cell{Entry: e, Arch: a})
		}
	}
	if o.Runner == nil {
		o.Runner = new(qemutest.Runner)
	}
	var g errgroup.Group
	g.SetLimit(max(o.Parallel, 1))
	var mu sync.Mutex
	finished := 0
	for i := range cells {
		c := &cells[i]
		g.Go(func() error {
			runCell(ctx, o, c) // a cancelled run ends at once, as NO VERDICT
			mu.Lock()
			defer mu.Unlock()
			finished++
			if o.Done != nil {
				o.Done(*c, finished, len(cells))
			}
			return nil
		})
	}
	g.Wait()
	return cells
}

// runCell makes one normal run. The Runner serialises the preparation
// (kernel, initramfs) of runs side by side, so only their boots overlap.
func runCell(ctx context.Context, o Options, c *Cell) {
	ro := o.Base
	ro.Arch, ro.Image = c.Arch, c.Entry
	ro.BootArgs = append([]string{}, o.Base.BootArgs...)
	ro.ResultsDir = filepath.Join(o.Dir, c.Name())
	ro.Progress = progress.Quiet(o.Notes, c.Entry+"/"+c.Arch.Name+": ")
	if ro.Lanes == 0 {
		// The matrix runs cells side by side already: a lane per cell.
		ro.Lanes = 1
	}
	start := time.Now()
	c.Result, c.Err = o.Runner.Run(ctx, ro)
	c.Duration = time.Since(start)
	if c.Result == nil || c.Result.Dir == "" {
		return
	}
	// The same reports as a qemu-test run's.
	if c.Err != nil {
		c.Result.NoVerdict = report.Plain(c.Err.Error())
	}
	if _, err := results.Write(c.Result); err != nil && c.Err == nil {
		// A run whose reports are not all there has no verdict to give.
		c.Err = &qemutest.InfraError{Err: err}
	}
}

// TableFile is the matrix's table in its directory.
const TableFile = "matrix.txt"

// Report writes the matrix's table (TableFile) and kcidb.json into dir and
// returns the table with its closing line, and the worst cell's status.
func Report(dir string, cells []Cell) (string, int, error) {
	var b strings.Builder
	b.WriteString("\n")
	worst := WriteTable(&b, cells)
	fmt.Fprintf(&b, "\nresults: %s\npage:    %s\n%s\n", dir, filepath.Join(dir, page.File), Totals(cells))
	if err := os.WriteFile(filepath.Join(dir, TableFile), []byte(b.String()), 0o644); err != nil {
		return b.String(), 2, err
	}
	if err := WriteKCIDB(dir, cells); err != nil {
		return b.String(), 2, fmt.Errorf("writing %s: %w", results.KCIDBFile, err)
	}
	html, err := page.Render(Page(dir, cells))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, page.File), html, 0o644)
	}
	if err != nil {
		return b.String(), 2, fmt.Errorf("writing %s: %w", page.File, err)
	}
	return b.String(), worst, nil
}

// Page is the matrix's page: entries × arches, each cell its verdict and
// counts, linked to the cell's own run page.
func Page(dir string, cells []Cell) page.Page {
	var entries, arches []string
	byName := map[string]Cell{}
	worst := 0
	for _, c := range cells {
		if !slices.Contains(entries, c.Entry) {
			entries = append(entries, c.Entry)
		}
		if !slices.Contains(arches, c.archName()) {
			arches = append(arches, c.archName())
		}
		byName[c.Entry+"/"+c.archName()] = c
		worst = max(worst, c.Code())
	}
	t := &page.Table{Grid: true, Head: append([]string{"entry"}, arches...)}
	for _, e := range entries {
		row := []page.Cell{{Text: e}}
		for _, a := range arches {
			c, ok := byName[e+"/"+a]
			if !ok {
				row = append(row, page.Cell{})
				continue
			}
			p, f, s := c.Totals()
			cell := page.Result(classOf(c.Code()), c.Verdict())
			cell.Text += fmt.Sprintf(" %d/%d/%d", p, f, s)
			if c.Result != nil && c.Result.Dir != "" {
				if rel, err := filepath.Rel(dir, filepath.Join(c.Result.Dir, page.File)); err == nil {
					cell.Link = rel
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return page.Page{Title: "stackmap conformance: the matrix", Verdict: Totals(cells), Class: classOf(worst),
		Sections: []page.Section{{Heading: "Entries × arches", Table: t,
			Text: []string{"Each cell: its verdict, then passed/failed/skipped; it links the cell's own run page."}}}}
}

// classOf is the class an exit status stands for.
func classOf(code int) string {
	switch code {
	case 0:
		return "PASS"
	case 1:
		return "FAIL"
	}
	return "UNRESOLVED"
}

// WriteKCIDB writes the matrix's kcidb.json into dir: the runs of all its
// cells as one document, a checkout or build that cells share (one source
// on two arches) once. A cell that never made a run has nothing to say.
func WriteKCIDB(dir string, cells []Cell) error {
	origin, err := results.KCIDBOrigin()
	if err != nil {
		return err
	}
	var runs []*results.Result
	for _, c := range cells {
		if c.Result != nil {
			runs = append(runs, c.Result)
		}
	}
	return results.WriteKCIDB(dir, origin, runs...)
}

// Line is a cell's one-line account, printed as it finishes.
func Line(c Cell) string {
	line := fmt.Sprintf("%s %s: %s", c.Entry, c.archName(), c.Verdict())
	if c.Err == nil {
		p, f, s := c.Totals()
		line += fmt.Sprintf(" (%d passed, %d failed, %d skipped)", p, f, s)
	}
	return line + " in " + c.Duration.Round(100*time.Millisecond).String()
}

// WriteTable prints entry × arch with the cells' counts and verdicts, and
// returns the worst exit status: 2 beats 1 beats 0.
func WriteTable(w io.Writer, cells []Cell) (worst int) {
	width := len("entry")
	for _, c := range cells {
		width = max(width, len(c.Entry))
	}
	fmt.Fprintf(w, "%-*s  %-6s  %-8s  %6s  %6s  %11s  %s\n", width, "entry", "arch", "requires", "passed", "failed", "unsupported", "verdict")
	for _, c := range cells {
		p, f, s := c.Totals()
		fmt.Fprintf(w, "%-*s  %-6s  %-8s  %6d  %6d  %11d  %s\n", width, c.Entry, c.archName(), c.Requires(), p, f, s, c.Verdict())
		worst = max(worst, c.Code())
	}
	return worst
}

// Totals is the matrix's closing line.
func Totals(cells []Cell) string {
	var p, f, s int
	for _, c := range cells {
		cp, cf, cs := c.Totals()
		p, f, s = p+cp, f+cf, s+cs
	}
	return fmt.Sprintf("%d passed, %d failed, %d skipped", p, f, s)
}
