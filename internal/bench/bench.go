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
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// The targets, as ratios to a measured figure.
const (
	// A full run on one arch against the floor of its boots.
	RunOverFloor = 3.0
	// A sanitized run against the plain lane's (its last figures).
	SanitizedOverPlain = 5.0
	// Both arches in one command against the slower of the two alone.
	BothOverSlower = 1.25
)

// The targets in seconds.
const (
	// What each boot costs beyond its floor, its specs' own work and the
	// kernel's checkers after the suite; in the sanitized lane, whose
	// kernel makes everything slower, SanitizedBootOverhead.
	BootOverhead          = 0.4
	SanitizedBootOverhead = 3.0
	// What sending a boot's reports to the host may cost of it.
	Transport = 1.0
	// The initramfs built with nothing in Go's cache, as on a fresh machine.
	ColdInitramfs = 60.0
	// What the invariant oracle's checkpoints may cost of the warm run.
	OracleShare = 0.20
)

// Options say what to measure.
type Options struct {
	Base          qemutest.Options // ModuleDir, CacheDir, LockFile, Timeout
	Image         string           // the entry timed per arch
	Arches        arch.List
	Reps          int
	MatrixEntries []string // the matrix whose throughput is measured
	// WalkSeries on WalkTree, walked on WalkArch, is timed against full
	// runs of the whole series when set (make review's cost).
	WalkSeries, WalkTree string
	WalkArch             arch.Arch
	Progress             *progress.Reporter
	Notes                io.Writer
}

// Plan fills in what o times from the lock: the image (the lock's default
// when none is named) and the matrix, matrixImages ("" the debian
// entries, "none" no matrix) narrowed to what o's lane can run.
func (o *Options) Plan(matrixImages string) error {
	lock, err := images.Read(o.Base.LockFile)
	if err != nil {
		return err
	}
	if o.Image == "" {
		o.Image = lock.Default
	}
	switch matrixImages {
	case "none":
		return nil
	case "":
		for _, e := range lock.Entries {
			if e.Kind == images.KindDebian {
				o.MatrixEntries = append(o.MatrixEntries, e.Name)
			}
		}
	default:
		if o.MatrixEntries, err = lock.Names(matrixImages); err != nil {
			return err
		}
	}
	if o.MatrixEntries, err = lock.InLane(o.MatrixEntries, o.Base.Lane, matrixImages != "", o.Notes); err == nil && len(o.MatrixEntries) == 0 {
		fmt.Fprintf(o.Notes, "note: the matrix is not timed\n")
	}
	return err
}

// Written are the files Finish wrote.
type Written struct {
	Table       string // bench.txt's text
	JSON, Last  string // bench.json, and the lane's last figures
	Page        string
	Met, Missed int // the targets
}

// Finish writes a bench's figures into dir (bench.txt, bench.json, the
// page) and as the lane's last figures in internal/bench, after comparing
// them with those: each lane is compared with its own.
func Finish(r *Report, o Options, dir string) (Written, error) {
	w := Written{JSON: filepath.Join(dir, "bench.json"), Page: filepath.Join(dir, page.File),
		Last: filepath.Join(o.Base.ModuleDir, "internal", "bench", o.Base.Lane.BenchFile())}
	prev, err := Load(w.Last)
	if err != nil {
		fmt.Fprintf(o.Notes, "bench: previous figures unreadable: %v\n", err)
	}
	var table strings.Builder
	w.Met, w.Missed = r.WriteTable(&table, prev)
	w.Table = table.String()
	if err := os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(w.Table), 0o644); err != nil {
		return w, err
	}
	if err := r.Save(w.JSON, w.Last); err != nil {
		return w, err
	}
	html, err := page.Render(r.Page(prev))
	if err == nil {
		err = os.WriteFile(w.Page, html, 0o644)
	}
	return w, err
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
		Host: fmt.Sprintf("%d CPUs, %s", runtime.NumCPU(), qemu.MachineFor(o.Arches[0]).Version()), Lane: o.Base.Lane.Words()}}
	for _, a := range o.Arches {
		if err := m.arch(ctx, a); err != nil {
			return nil, err
		}
	}
	if err := m.againstPlain(); err != nil {
		return nil, err
	}
	// Both arches at once is the plain lane's target alone: in the
	// sanitized lane it would cost as long as both runs, for no verdict.
	if len(o.Arches) > 1 && !o.Base.Lane.IsSanitized() {
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

// oracle says what the checkpoints cost: each boot's, on the guest's
// clock, and all of them shared over the run's lanes against the warm
// run (OracleShare).
func (m *measure) oracle(name string, last *results.Result, checks map[string][]float64, all []float64) {
	for _, b := range last.Boots {
		if b.Boot != nil {
			m.seconds(name+" boot "+b.Plan.Name+", its checkpoints (guest clock)", checks[b.Plan.Name])
		}
	}
	spent := m.seconds(fmt.Sprintf("%s checkpoints, all boots over %d lanes (guest clock)", name, max(1, last.Lanes)), all)
	m.r.Targets = append(m.r.Targets, target(fmt.Sprintf("%s checkpoints <= %.0f%% of the warm run", name, 100*OracleShare), spent, m.alone[name], OracleShare))
}

// arch times warm runs of one arch, the floor of each boot they made, and
// its initramfs builds.
func (m *measure) arch(ctx context.Context, a arch.Arch) error {
	o, name := m.o, a.Name
	// The first run fetches and builds what is missing: not timed.
	end := o.Progress.Step("%s: a first run, to warm up", name)
	_, err := m.qemuTest(ctx, o.base(), a)
	end(err)
	if err != nil {
		return err
	}
	var total []float64
	boots, guestTimes, checks := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	each := bootParts{} // each boot's parts
	var checksAll []float64
	var last *results.Result
	for i := range o.Reps {
		end := o.Progress.Step("%s: qemu-test %d/%d", name, i+1, o.Reps)
		start := time.Now()
		res, err := m.qemuTest(ctx, o.base(), a)
		end(err)
		if err != nil {
			return err
		}
		total = append(total, time.Since(start).Seconds())
		all := 0.0
		for _, b := range res.Boots {
			if b.Boot == nil {
				continue
			}
			c, err := checkpointSeconds(res, b)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			checks[b.Plan.Name] = append(checks[b.Plan.Name], c)
			all += c
			boots[b.Plan.Name] = append(boots[b.Plan.Name], b.Boot.Duration.Seconds())
			times, err := guestParts(res, b)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			for part, t := range times {
				guestTimes[part] = append(guestTimes[part], t)
				each.add(part, b.Plan.Name, t)
			}
		}
		last = res
		checksAll = append(checksAll, all/float64(max(1, res.Lanes)))
	}
	m.alone[name] = m.seconds(name+" qemu-test, warm", total)
	m.oracle(name, last, checks, checksAll)
	m.transport(name, last, each[transportPart])
	if err := m.floor(ctx, a, last, boots, each); err != nil {
		return err
	}
	for _, p := range parts {
		if p.name != specsPart {
			m.seconds(name+" guest: "+p.name, guestTimes[p.name])
		}
	}
	if err := m.probe(ctx, a, last.Kernel); err != nil {
		return err
	}
	cold, fresh, warm, err := o.initramfs(ctx, a, m.tmp)
	if err != nil {
		return err
	}
	m.r.Figures = append(m.r.Figures, Figure{Name: name + " initramfs build, cold: empty Go cache (one build)", Value: cold, Unit: "s"})
	m.r.Targets = append(m.r.Targets, limit(fmt.Sprintf("%s cold initramfs build <= %.0fs", name, ColdInitramfs), cold, ColdInitramfs))
	m.seconds(name+" initramfs build, fresh out dir", fresh)
	m.seconds(name+" initramfs build, no change", warm)
	if err := m.torture(ctx, a); err != nil {
		return err
	}
	return m.claims(ctx, a)
}

// benchTorture is how long the bench's torture runs.
const benchTorture = time.Minute

// torture makes a short torture run and reports its actors' operations
// per second, from the actor table its spec notes.
func (m *measure) torture(ctx context.Context, a arch.Arch) error {
	base := m.o.base()
	base.Labels, base.Torture = labels.MustParse(contract.LabelTorture), benchTorture
	end := m.o.Progress.Step("%s: torture for %s", a.Name, benchTorture)
	res, err := m.qemuTest(ctx, base, a)
	end(err)
	if err != nil {
		return err
	}
	ops := 0
	for _, sp := range res.Summary.Specs {
		ops += actorOps(sp.Notes)
	}
	if ops == 0 {
		return fmt.Errorf("%s: the torture's notes hold no actor table", a.Name)
	}
	m.r.Figures = append(m.r.Figures, Figure{Name: fmt.Sprintf("%s torture, operations per second (%s)", a.Name, benchTorture),
		Value: float64(ops) / benchTorture.Seconds(), Unit: "ops/s"})
	return nil
}

// tableColumns parts an actor table's row.
var tableColumns = regexp.MustCompile(`\s{2,}`)

// actorOps sums the operations of an actor table's rows ("name  ops  errors
// first failure", columns two spaces apart), the rounds left out.
func actorOps(notes []string) int {
	total := 0
	for _, n := range notes {
		cols := tableColumns.Split(strings.TrimSpace(n), -1)
		if len(cols) < 3 || cols[0] == "round" {
			continue
		}
		if v, err := strconv.Atoi(cols[1]); err == nil {
			total += v
		}
	}
	return total
}

// together times every arch in one command, against the slower alone.
func (m *measure) together(ctx context.Context) error {
	o := m.o
	var both []float64
	for i := range o.Reps {
		end := o.Progress.Step("%s at once %d/%d", strings.ReplaceAll(o.Arches.String(), ",", " and "), i+1, o.Reps)
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
	all := strings.ReplaceAll(o.Arches.String(), ",", "+")
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
	m.r.Figures = append(m.r.Figures, Figure{Name: fmt.Sprintf("matrix %s x %s", strings.Join(o.MatrixEntries, ","), o.Arches.String()),
		Value: median(rate), Unit: "cells/min"})
	return nil
}

func (o Options) base() qemutest.Options {
	b := o.Base
	b.Profile, b.Labels = contract.ProfileV4, labels.Filter{}
	return b
}

// qemuTest makes one full run of base on arch, quietly, and wants a verdict.
func (m *measure) qemuTest(ctx context.Context, base qemutest.Options, a arch.Arch) (*results.Result, error) {
	ro, name := base, a.Name
	ro.Arch, ro.Image = a, m.o.Image
	ro.ResultsDir = filepath.Join(m.tmp, "runs")
	ro.Progress = progress.Quiet(m.o.Notes, name+": ")
	res, err := m.runner.Run(ctx, ro)
	if err != nil {
		return nil, fmt.Errorf("%s: NO VERDICT: %v", name, err)
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
	for i, a := range m.o.Arches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.qemuTest(ctx, base, a)
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

// initramfs times a build with nothing in Go's cache, as a fresh machine
// makes it (once: it takes a minute), builds into a fresh directory, and
// builds into build/<arch> when nothing changed.
func (o Options) initramfs(ctx context.Context, a arch.Arch, tmp string) (cold float64, fresh, warm []float64, err error) {
	name := a.Name
	cache, err := os.MkdirTemp(tmp, "gocache-")
	if err != nil {
		return 0, nil, nil, err
	}
	defer os.RemoveAll(cache)
	end := o.Progress.Step("%s: initramfs build, cold: an empty Go cache", name)
	start := time.Now()
	_, err = initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: filepath.Join(tmp, "cold-"+name), Arch: a, Env: []string{"GOCACHE=" + cache}}.Build(ctx)
	end(err)
	if err != nil {
		return 0, nil, nil, err
	}
	cold = time.Since(start).Seconds()
	for i := range o.Reps {
		dir, err := os.MkdirTemp(tmp, "initramfs-")
		if err != nil {
			return 0, nil, nil, err
		}
		end := o.Progress.Step("%s: initramfs build, fresh out dir %d/%d", name, i+1, o.Reps)
		start := time.Now()
		_, err = initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: dir, Arch: a}.Build(ctx)
		end(err)
		if err != nil {
			return 0, nil, nil, err
		}
		fresh = append(fresh, time.Since(start).Seconds())
		os.RemoveAll(dir)
	}
	b := initramfs.Builder{ModuleDir: o.Base.ModuleDir, OutDir: filepath.Join(o.Base.ModuleDir, "build", name), Arch: a}
	for range o.Reps {
		start := time.Now()
		if _, err := b.Build(ctx); err != nil {
			return 0, nil, nil, err
		}
		warm = append(warm, time.Since(start).Seconds())
	}
	return cold, fresh, warm, nil
}
