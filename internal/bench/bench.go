// SPDX-License-Identifier: GPL-2.0-only

// Package bench measures time to verdict against its floor, a bare boot of
// the same kernel with the same QEMU command line and an init that only
// powers off: `smct bench`. The timing targets live here, not in tests.
//
// Runs are timed in-process around a qemutest.Runner's Run, which is what
// `smct qemu-test` does apart from printing the summary.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/review"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// The targets, as ratios to a measured figure.
const (
	// A full run on one arch against the floor of its boots.
	RunOverFloor = 1.5
	// Both arches in one command against the slower of the two alone.
	BothOverSlower = 1.25
)

// Options say what to measure.
type Options struct {
	Base          qemutest.Options // ModuleDir, CacheDir, LockFile, Timeout
	Image         string           // the entry timed per arch
	Arches        []string
	Reps          int
	MatrixEntries []string // the matrix whose throughput is measured
	// WalkSeries on WalkTree, walked on WalkArch, is timed against full
	// runs of the whole series when set (make review's cost).
	WalkSeries, WalkTree, WalkArch string
	Progress                       *progress.Reporter
	Notes                          io.Writer
}

// Report is one bench run; it is what the JSON files hold.
type Report struct {
	Time    time.Time `json:"time"`
	Image   string    `json:"image"`
	Reps    int       `json:"reps"`
	Host    string    `json:"host"`
	Figures []Figure  `json:"figures"`
	Targets []Target  `json:"targets"`
}

// Figure is the median of Reps measurements.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "s" or "cells/min"
}

// Target is a limit on a figure.
type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"` // seconds
	Limit float64 `json:"limit"` // seconds
	Ratio float64 `json:"ratio"` // Value over the figure the limit is a multiple of
	Met   bool    `json:"met"`
}

// Run measures everything and returns the figures; an error means a
// measurement could not be made (a run gave no verdict, a floor boot hung).
func Run(ctx context.Context, o Options) (*Report, error) {
	tmp, err := os.MkdirTemp("", "smct-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	m := &measure{o: o, tmp: tmp, alone: map[string]float64{}, r: &Report{Time: time.Now().UTC(), Image: o.Image, Reps: o.Reps,
		Host: fmt.Sprintf("%d CPUs, %s", runtime.NumCPU(), qemu.Machines()[o.Arches[0]].Version())}}
	for _, arch := range o.Arches {
		if err := m.arch(ctx, arch); err != nil {
			return nil, err
		}
	}
	if len(o.Arches) > 1 {
		if err := m.together(ctx); err != nil {
			return nil, err
		}
	}
	if len(o.MatrixEntries) > 0 {
		if err := m.matrix(ctx); err != nil {
			return nil, err
		}
	}
	if o.WalkSeries != "" {
		if err := m.walk(ctx); err != nil {
			return nil, err
		}
	}
	return m.r, nil
}

// measure is a bench under way: its options, scratch directory, report,
// each arch's warm time alone, and the Runner of all its runs, which
// take turns preparing when they run side by side.
type measure struct {
	o      Options
	tmp    string
	r      *Report
	alone  map[string]float64
	runner qemutest.Runner
}

// seconds records the median of xs as a figure and returns it.
func (m *measure) seconds(name string, xs []float64) float64 {
	v := median(xs)
	m.r.Figures = append(m.r.Figures, Figure{Name: name, Value: v, Unit: "s"})
	return v
}

// arch times warm runs of one arch, the floor of each boot they made, and
// its initramfs builds.
func (m *measure) arch(ctx context.Context, arch string) error {
	o := m.o
	// The first run fetches and builds what is missing: not timed.
	end := o.Progress.Step("%s: a first run, to warm up", arch)
	_, err := m.qemuTest(ctx, o.base(), arch)
	end(err)
	if err != nil {
		return err
	}
	var total []float64
	boots := map[string][]float64{}
	var last *results.Result
	for i := range o.Reps {
		end := o.Progress.Step("%s: qemu-test %d/%d", arch, i+1, o.Reps)
		start := time.Now()
		res, err := m.qemuTest(ctx, o.base(), arch)
		end(err)
		if err != nil {
			return err
		}
		total = append(total, time.Since(start).Seconds())
		for _, b := range res.Boots {
			if b.Boot != nil {
				boots[b.Plan.Name] = append(boots[b.Plan.Name], b.Boot.Duration.Seconds())
			}
		}
		last = res
	}
	m.alone[arch] = m.seconds(arch+" qemu-test, warm", total)
	if err := m.floor(ctx, arch, last, boots); err != nil {
		return err
	}
	cold, warm, err := o.initramfs(ctx, arch, m.tmp)
	if err != nil {
		return err
	}
	m.seconds(arch+" initramfs build, fresh out dir", cold)
	m.seconds(arch+" initramfs build, no change", warm)
	return nil
}

// floor times the boots the last run made, each with the floor's
// initramfs, made the way the run made them (as many at a time, started in
// plan order), and holds the arch's warm run against that; the sum of the
// boots one after the other is shown beside it.
func (m *measure) floor(ctx context.Context, arch string, last *results.Result, boots map[string][]float64) error {
	o := m.o
	initrd, err := initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: filepath.Join(m.tmp, "floor-"+arch), Arch: arch}.Floor(ctx)
	if err != nil {
		return err
	}
	var made []results.BootResult
	for _, b := range last.Boots {
		if b.Boot != nil {
			made = append(made, b)
		}
	}
	lanes := max(1, last.Lanes)
	each := map[string][]float64{}
	var wall []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s: floor of its %d boots, %d at a time, %d/%d", arch, len(made), lanes, i+1, o.Reps)
		d, times, err := floorBoots(ctx, made, initrd, o.Base.Timeout, lanes)
		end(err)
		if err != nil {
			return err
		}
		wall = append(wall, d.Seconds())
		for name, t := range times {
			each[name] = append(each[name], t.Seconds())
		}
	}
	sum := 0.0
	for _, b := range made {
		m.seconds(arch+" boot "+b.Plan.Name+", suite", boots[b.Plan.Name])
		sum += m.seconds(arch+" boot "+b.Plan.Name+", floor", each[b.Plan.Name])
	}
	m.r.Figures = append(m.r.Figures, Figure{Name: fmt.Sprintf("%s floor, its %d boots one after the other", arch, len(made)), Value: sum, Unit: "s"})
	floor := m.seconds(fmt.Sprintf("%s floor, its %d boots %d at a time", arch, len(made), lanes), wall)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s full run <= %.2gx floor of its boots", arch, RunOverFloor),
		m.alone[arch], floor, RunOverFloor))
	return nil
}

// floorBoots makes the floor boot of each boot, lanes at a time, started
// in order, and returns the wall time of them all and each one's time.
func floorBoots(ctx context.Context, made []results.BootResult, initrd string, timeout time.Duration, lanes int) (time.Duration, map[string]time.Duration, error) {
	times := make([]time.Duration, len(made))
	errs := make([]error, len(made))
	var g errgroup.Group
	g.SetLimit(lanes)
	start := time.Now()
	for i, b := range made {
		g.Go(func() error {
			times[i], errs[i] = floorBoot(ctx, b.Boot.Command, initrd, timeout)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("boot %s: %v", b.Plan.Name, errs[i])
			}
			return nil // the first failure in plan order is reported
		})
	}
	g.Wait()
	wall := time.Since(start)
	out := map[string]time.Duration{}
	for i, b := range made {
		if errs[i] != nil {
			return 0, nil, errs[i]
		}
		out[b.Plan.Name] = times[i]
	}
	return wall, out, nil
}

// together times every arch in one command, against the slower alone.
func (m *measure) together(ctx context.Context) error {
	o := m.o
	var both []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s at once %d/%d", strings.Join(o.Arches, " and "), i+1, o.Reps)
		d, err := m.atOnce(ctx)
		end(err)
		if err != nil {
			return err
		}
		both = append(both, d.Seconds())
	}
	slower := 0.0
	for _, s := range m.alone {
		slower = max(slower, s)
	}
	all := strings.Join(o.Arches, "+")
	v := m.seconds(all+" in one command", both)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s at once <= %.3gx the slower alone", all, BothOverSlower),
		v, slower, BothOverSlower))
	return nil
}

// matrix times a matrix of the chosen entries: cells a minute.
func (m *measure) matrix(ctx context.Context) error {
	o := m.o
	var rate []float64
	for i := range o.Reps {
		end := o.Progress.Step("matrix %s %d/%d", strings.Join(o.MatrixEntries, ","), i+1, o.Reps)
		start := time.Now()
		cells := matrix.Run(ctx, matrix.Options{Base: o.base(), Runner: &m.runner, Entries: o.MatrixEntries, Arches: o.Arches,
			Dir: filepath.Join(m.tmp, "matrix"), Parallel: 2, Notes: o.Notes})
		d := time.Since(start)
		var err error
		for _, c := range cells {
			if c.Code() == 2 && err == nil {
				err = fmt.Errorf("matrix cell %s %s: %s", c.Entry, c.Arch, c.Verdict())
			}
		}
		end(err)
		if err != nil {
			return err
		}
		rate = append(rate, float64(len(cells))/d.Minutes())
	}
	m.r.Figures = append(m.r.Figures, Figure{Name: fmt.Sprintf("matrix %s x %s", strings.Join(o.MatrixEntries, ","), strings.Join(o.Arches, ",")),
		Value: median(rate), Unit: "cells/min"})
	return nil
}

// walk times a series walk on a warm cache (every prefix's kernel built
// before, by a first walk not timed) against (N+1) full runs of the whole
// series plus what the walk spent on kernels: a walk must cost its boots
// and incremental builds, never a full rebuild per prefix.
func (m *measure) walk(ctx context.Context) error {
	o := m.o
	s, err := review.ReadSeries(o.WalkSeries, o.WalkTree, "")
	if err != nil {
		return err
	}
	n := len(s.Patches)
	base := o.base()
	base.Progress = progress.Quiet(o.Notes, "walk: ")
	w := review.Walker{Options: base, Arches: []string{o.WalkArch}}
	var walk *review.Walk
	for i, what := range []string{"a first walk, to warm up", "the walk, timed"} {
		end := o.Progress.Step("%s: %s (%d patches)", o.WalkArch, what, n)
		walk, err = w.Walk(ctx, s, o.WalkTree, filepath.Join(m.tmp, fmt.Sprintf("walk-%d", i)))
		if err == nil && walk.ExitCode() == 2 {
			err = fmt.Errorf("a prefix gave no verdict")
		}
		end(err)
		if err != nil {
			return err
		}
	}
	kernels, largest := 0.0, 0.0
	for _, st := range walk.Steps[o.WalkArch] {
		kernels += st.Kernel.Seconds()
		largest = max(largest, st.Kernel.Seconds())
	}
	// The walk's checkout holds the whole series now: time full runs of it.
	full := base
	full.Arch, full.Tree, full.Image = o.WalkArch, filepath.Join(o.Base.CacheDir, "review", "src"), ""
	full.ResultsDir = filepath.Join(m.tmp, "runs")
	var runs []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s: full run of the whole series %d/%d", o.WalkArch, i+1, o.Reps)
		start := time.Now()
		_, err := m.runner.Run(ctx, full)
		end(err)
		if err != nil {
			return err
		}
		runs = append(runs, time.Since(start).Seconds())
	}
	wall := walk.Wall.Seconds()
	m.r.Figures = append(m.r.Figures,
		Figure{Name: fmt.Sprintf("%s walk of %d patches, warm", o.WalkArch, n), Value: wall, Unit: "s"},
		Figure{Name: fmt.Sprintf("%s walk, kernels of its %d prefixes", o.WalkArch, n+1), Value: kernels, Unit: "s"},
		Figure{Name: fmt.Sprintf("%s walk, largest kernel step", o.WalkArch), Value: largest, Unit: "s"})
	run := m.seconds(fmt.Sprintf("%s full run of the whole series", o.WalkArch), runs)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s walk <= %d full runs + its kernels", o.WalkArch, n+1),
		wall, float64(n+1)*run+kernels, 1))
	return nil
}

func target(name string, value, base, ratio float64) Target {
	return Target{Name: name, Value: value, Limit: ratio * base, Ratio: value / base, Met: value <= ratio*base}
}

func (o Options) base() qemutest.Options {
	b := o.Base
	b.Profile, b.Labels = "v4", ""
	return b
}

// qemuTest makes one full run of base on arch, quietly, and wants a verdict.
func (m *measure) qemuTest(ctx context.Context, base qemutest.Options, arch string) (*results.Result, error) {
	ro := base
	ro.Arch, ro.Image = arch, m.o.Image
	ro.ResultsDir = filepath.Join(m.tmp, "runs")
	ro.Progress = progress.Quiet(m.o.Notes, arch+": ")
	res, err := m.runner.Run(ctx, ro)
	if err != nil {
		return nil, fmt.Errorf("%s: NO VERDICT: %v", arch, err)
	}
	return res, nil
}

// atOnce runs every arch at once, as one command would, and returns the
// time until the last verdict.
func (m *measure) atOnce(ctx context.Context) (time.Duration, error) {
	base := m.o.base()
	if base.Lanes == 0 {
		// Runs side by side share the CPUs, as make matrix's cells do.
		base.Lanes = max(1, runtime.NumCPU()/len(m.o.Arches))
	}
	errs := make([]error, len(m.o.Arches))
	var wg sync.WaitGroup
	start := time.Now()
	for i, arch := range m.o.Arches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.qemuTest(ctx, base, arch)
		}()
	}
	wg.Wait()
	d := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return d, nil
}

// initramfs times the build into a fresh directory and into build/<arch>
// when nothing changed.
func (o Options) initramfs(ctx context.Context, arch, tmp string) (cold, warm []float64, err error) {
	for i := range o.Reps {
		dir, err := os.MkdirTemp(tmp, "initramfs-")
		if err != nil {
			return nil, nil, err
		}
		end := o.Progress.Step("%s: initramfs build, fresh out dir %d/%d", arch, i+1, o.Reps)
		start := time.Now()
		_, err = initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: dir, Arch: arch}.Build(ctx)
		end(err)
		if err != nil {
			return nil, nil, err
		}
		cold = append(cold, time.Since(start).Seconds())
		os.RemoveAll(dir)
	}
	b := initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: filepath.Join(o.Base.ModuleDir, "build", arch), Arch: arch}
	for range o.Reps {
		start := time.Now()
		if _, err := b.Build(ctx); err != nil {
			return nil, nil, err
		}
		warm = append(warm, time.Since(start).Seconds())
	}
	return cold, warm, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Load reads a report written by Save; a missing file is no report.
func Load(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// Save writes r to each path.
func (r *Report) Save(paths ...string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints the figures, with their change since prev when prev
// measured the same image, and the targets. It returns how many targets
// were met and missed.
func (r *Report) WriteTable(w io.Writer, prev *Report) (met, missed int) {
	fmt.Fprintf(w, "bench: IMAGE=%s, profile v4, median of %d; %s\n", r.Image, r.Reps, r.Host)
	old := map[string]float64{}
	switch {
	case prev == nil:
		fmt.Fprintln(w, "no previous figures to compare with")
	case prev.Image != r.Image:
		fmt.Fprintf(w, "previous figures (%s) are for IMAGE=%s: not compared\n", prev.Time.Format(time.DateTime), prev.Image)
	default:
		fmt.Fprintf(w, "compared with %s\n", prev.Time.Format(time.DateTime+" MST"))
		for _, f := range prev.Figures {
			old[f.Name] = f.Value
		}
	}
	width := len("target")
	for _, f := range r.Figures {
		width = max(width, len(f.Name))
	}
	for _, t := range r.Targets {
		width = max(width, len(t.Name))
	}
	fmt.Fprintf(w, "\n%-*s  %14s  %14s  %8s\n", width, "figure", "median", "previous", "change")
	for _, f := range r.Figures {
		line := fmt.Sprintf("%-*s  %14s", width, f.Name, format(f.Value, f.Unit))
		if p, ok := old[f.Name]; ok && p > 0 {
			line += fmt.Sprintf("  %14s  %+7.1f%%", format(p, f.Unit), 100*(f.Value-p)/p)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\n%-*s  %14s  %14s  %6s\n", width, "target", "value", "limit", "ratio")
	for _, t := range r.Targets {
		verdict := "met"
		if t.Met {
			met++
		} else {
			verdict = "NOT MET"
			missed++
		}
		fmt.Fprintf(w, "%-*s  %14s  %14s  %5.2fx  %s\n", width, t.Name, format(t.Value, "s"), format(t.Limit, "s"), t.Ratio, verdict)
	}
	return met, missed
}

func format(v float64, unit string) string {
	if unit == "s" {
		if v < 1 {
			return fmt.Sprintf("%.3fs", v)
		}
		return fmt.Sprintf("%.2fs", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
