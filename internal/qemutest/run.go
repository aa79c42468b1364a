// SPDX-License-Identifier: GPL-2.0-only

// Package qemutest performs one conformance run under QEMU: it checks the
// inputs, prepares the kernel and the initramfs, boots, and turns what came
// back into a verdict. Anything that leaves no trustworthy verdict is an
// *InfraError.
package qemutest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/dumpcheck"
	"github.com/ftrace-stackmap/conformance/internal/kernels"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/u-root/u-root/pkg/cpio"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/ftracetest"
	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Options are the user's choices for one run and where it works.
type Options struct {
	results.Request
	Boots      []string // boot plans to make; all when empty
	ModuleDir  string   // the project's root
	LockFile   string
	CacheDir   string
	ResultsDir string             // parent of the run directories
	Progress   *progress.Reporter // steps as they run, on a terminal; notes always
	Echo       io.Writer          // the guest console, if wanted live
	Jobs       int                // make -j for a kernel built here; 0 means one per CPU
	Accel      string             // ACCEL=: "" chooses KVM when it can, "kvm" or "tcg" insist
	CPU, Mem   string             // CPU=, MEM=: QEMU's -cpu and -m instead of the machine's
	QEMUOpts   []string           // QEMU_OPTS=: added to every QEMU command
	Keep       bool               // KEEP=1: keep each boot's initramfs and a rerun.sh that boots it again
	Lanes      int                // LANES=: boots made at a time; 0 means one per CPU, as memory allows
}

// InfraError means the run gave no verdict to trust: the step that
// failed, and why.
type InfraError struct {
	Step string // "" when the cause names it
	Err  error
}

func (e *InfraError) Error() string {
	if e.Step == "" {
		return e.Err.Error()
	}
	return e.Step + ": " + e.Err.Error()
}

func (e *InfraError) Unwrap() error { return e.Err }

// infra is an InfraError whose message says everything (%w wraps a cause).
func infra(format string, args ...any) error {
	return &InfraError{Err: fmt.Errorf(format, args...)}
}

// failed is an InfraError of a step, keeping its cause. A run whose context
// was cancelled (SIGINT, SIGTERM) fails its step for that reason alone, and
// says so instead of blaming the kernel or QEMU.
func failed(step string, err error) error {
	return &InfraError{Step: step, Err: err}
}

// defaultBootArgs are added to every boot. The trace_options token lets the
// baseline check that the kernel honours options given at boot. Expedited
// RCU grace periods: tracefs writes (clearing a buffer, switching an event)
// wait for them, several jiffies each under emulation; this cuts a fifth of
// a run and changes nothing the contract speaks of.
var defaultBootArgs = []string{"trace_options=noannotate", "rcupdate.rcu_expedited=1"}

// prepare serialises what runs made side by side (smct matrix) share: apt,
// the kernel cache and build tree, build/<arch>. Only their boots overlap.
var prepare sync.Mutex

// Run runs the suite under QEMU: one boot per plan that selects a spec.
// On an infrastructure problem it returns an *InfraError, with the run
// directory (console logs kept) in results.Result.
func Run(ctx context.Context, o Options) (*results.Result, error) {
	if o.Seed == 0 {
		o.Seed = NewSeed()
	}
	r, res, err := o.begin(ctx)
	if err != nil {
		return res, err
	}
	if err := r.bootAll(ctx, o.plans()); err != nil {
		return r.res, err
	}
	return r.finish()
}

// begin makes the run's directory, then prepares what its boots need;
// the result holds the directory even when preparing fails.
func (o Options) begin(ctx context.Context) (*run, *results.Result, error) {
	res, err := o.start()
	if err != nil {
		return nil, nil, err
	}
	r, err := o.prepare(ctx, res)
	return r, res, err
}

// run is one run under way: what was prepared for its boots and what they
// have brought back so far.
type run struct {
	o         Options
	m         qemu.Machine
	kernel    string // the file QEMU boots
	base      string // the initramfs, without a run configuration
	specs     types.SpecReports
	selftests *selftestSetup
	res       *results.Result
	reports   []types.Report
	bootsUp   bool // a boot without a plan's parameters reached the suite
	lanes     int  // boots made at a time

	mu        sync.Mutex
	noFeature string // why the default boot found no feature, if it did not
}

// prepare checks the user's input, then gets QEMU, the kernel, the
// initramfs and the list of specs ready for res, whose directory start
// made. Runs side by side share one preparation at a time.
func (o Options) prepare(ctx context.Context, res *results.Result) (*run, error) {
	a, err := arch.Lookup(o.Arch)
	if err != nil {
		return nil, &InfraError{Err: err}
	}
	m := qemu.Machines()[o.Arch]
	accel, err := qemu.ChooseAccel(a.GOARCH, o.Accel, func() error { return qemu.KVMWorks(m) })
	if err != nil {
		return nil, &InfraError{Err: err}
	}
	m = m.WithAccel(accel)
	if o.CPU != "" {
		m = m.WithCPU(o.CPU)
	}
	if o.Profile != "v4" && o.Profile != "v3" {
		return nil, infra("PROFILE=%q: want v4 or v3", o.Profile)
	}
	if o.Require != results.RequireAuto && o.Require != results.RequireStackmap && o.Require != results.RequireNone {
		return nil, infra("REQUIRE=%q: want stackmap, none, or nothing for the kernel's default", o.Require)
	}
	if err := repeatedParam(o.BootArgs, o.plans()); err != nil {
		return nil, err
	}
	// A filter Ginkgo cannot read is refused now, not after a kernel build.
	if _, err := types.ParseLabelFilter(o.Labels); err != nil {
		return nil, infra("LABELS=%q: %s", o.Labels, report.Plain(err.Error()))
	}
	if o.Kernel != "" && o.Tree != "" {
		return nil, infra("KERNEL= and TREE= name two kernels: give one")
	}
	if o.Tree != "" {
		if err := kbuild.CheckTree(o.Tree, o.Arch); err != nil {
			return nil, &InfraError{Err: err}
		}
	}
	r := &run{o: o, m: m}
	if o.FtraceDir != "" {
		tests, err := initramfs.FtraceTests(o.FtraceDir, o.FtraceMatch)
		if err != nil {
			return nil, failed("finding the tree's selftests", err)
		}
		r.selftests = &selftestSetup{tests: tests}
	}
	prepare.Lock()
	defer prepare.Unlock()
	if err := apt.Ensure(o.Progress, apt.Need{Program: m.Binary, Package: m.Package}); err != nil {
		return nil, failed("installing QEMU", err)
	}
	kernelStart := time.Now()
	k, err := kernels.Resolve(kernels.Request{Arch: o.Arch, Kernel: o.Kernel, Tree: o.Tree, Image: o.Image, LockFile: o.LockFile,
		KernelDir: filepath.Join(o.ModuleDir, "kernel"), CacheDir: o.CacheDir, Progress: o.Progress, Jobs: o.Jobs})
	if err != nil {
		return nil, &InfraError{Err: err}
	}
	kernelTime := time.Since(kernelStart)
	if res.Required, res.RequiredWhy, err = required(o.Require, o.LockFile, k.Entry, k.Source); err != nil {
		return nil, &InfraError{Err: err}
	}
	if k.Reference && o.Profile == "v3" {
		// The reference kernel is v4 unless told otherwise.
		r.o.BootArgs = append(r.o.BootArgs, "ftrace_stackmap.profile=v3")
	}
	r.kernel = k.Bootable
	r.res = res
	res.Kernel, res.Entry, res.Source, res.KernelSHA, res.KernelCached, res.Machine = k.Path, k.Entry, k.Source, k.SHA256, k.Cached, m.Describe()
	res.KernelTime = kernelTime
	step := o.step("building initramfs (%s)", o.Arch)
	b := initramfs.Builder{ModuleDir: o.ModuleDir, OutDir: filepath.Join(o.ModuleDir, "build", o.Arch), Arch: o.Arch}
	r.base, err = b.Build(ctx)
	step(err)
	if err != nil {
		return nil, failed("building the initramfs", err)
	}
	if r.specs, err = listSpecs(ctx, b.HostSuite()); err != nil {
		return nil, failed("listing the specs", err)
	}
	if r.selftests != nil {
		if r.selftests.records, err = o.selftestRecords(); err != nil {
			return nil, failed("preparing the selftests", err)
		}
	}
	return r, nil
}

// start makes the run's directory, and results/latest with it, before
// anything is checked: even a run refused for its input leaves its verdict
// and reports there.
func (o Options) start() (*results.Result, error) {
	res := &results.Result{Request: o.Request, Started: time.Now(), Suite: suiteID(o.ModuleDir)}
	for _, plan := range o.plans() {
		res.Plans = append(res.Plans, plan.Name)
	}
	var err error
	if res.Dir, err = newRunDir(o.ResultsDir, o.Arch); err != nil {
		return nil, failed("making the run directory", err)
	}
	return res, nil
}

// Refused is the result of a run refused before it began (a flag smct
// cannot use): a run directory, results/latest pointing at it, whose
// reports say why.
func Refused(o Options, reason string) (*results.Result, error) {
	res, err := o.start()
	if err != nil {
		return nil, err
	}
	res.NoVerdict = reason
	_, err = results.Write(res)
	return res, err
}

// made is what one plan's boot brought back, before it is kept.
type made struct {
	plan    contract.BootPlan
	chosen  types.SpecReports
	br      results.BootResult
	reports []types.Report
	err     error
	absent  string // the default boot found no feature: this one was not made
}

// bootAll makes the plans' boots, as many at a time as there are lanes,
// starting them in plan order (the default boot first: it tells whether
// the kernel has the feature at all), and keeps what they say in plan
// order, so the reports do not depend on which boot ended first.
func (r *run) bootAll(ctx context.Context, plans []contract.BootPlan) error {
	lanes := r.o.lanes(len(plans))
	r.res.Lanes = lanes
	outs := make([]*made, len(plans))
	sem := make(chan struct{}, lanes)
	var wg sync.WaitGroup
	for i, plan := range plans {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[i] = r.makeBoot(ctx, plan, lanes > 1)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return failed("booting", ctx.Err())
	}
	for _, m := range outs {
		if err := r.keep(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// lanes is how many boots run at once: LANES=, else one per CPU, as many
// as the free memory holds, one when the console is echoed (boots would
// interleave on it).
func (o Options) lanes(plans int) int {
	n := o.Lanes
	if n <= 0 {
		n = min(runtime.NumCPU(), memoryLanes(o.Mem))
	}
	if o.Echo != nil {
		n = 1
	}
	return max(1, min(n, plans))
}

// memoryLanes is how many guests of mem (QEMU's -m, megabytes, 512 when
// empty) and QEMU's own overhead fit in the memory available now.
func memoryLanes(mem string) int {
	guest := 512
	if v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(mem, "M"), "m")); err == nil && v > 0 {
		guest = v
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 1
	}
	for _, l := range strings.Split(string(data), "\n") {
		var kb int
		if _, err := fmt.Sscanf(l, "MemAvailable: %d kB", &kb); err == nil {
			return max(1, kb/1024/(guest+256))
		}
	}
	return 1
}

// makeBoot makes a plan's boot when its specs need it. It changes nothing
// of the run but the default boot's finding that the feature is absent:
// boots run side by side.
func (r *run) makeBoot(ctx context.Context, plan contract.BootPlan, sideBySide bool) *made {
	o := r.o
	m := &made{plan: plan, br: results.BootResult{Plan: plan}}
	filter := plan.Filter(o.Labels)
	m.chosen, m.err = selected(r.specs, filter)
	if m.err != nil {
		m.err = infra("LABELS=%q: %w", o.Labels, m.err)
		return m
	}
	if len(m.chosen) == 0 {
		m.br.Skipped = results.NoSpecSelected
		return m
	}
	if why := r.absentFeature(); why != "" && plan.Name != "default" {
		// Booting again cannot find a feature the default boot did not.
		m.absent = why
		return m
	}
	var st *selftestSetup
	if plan.Name == "default" {
		st = r.selftests
	}
	if sideBySide {
		o.Progress = o.Progress.Lines()
	}
	var boot *qemu.Result
	m.reports, boot, m.err = o.bootOnce(ctx, r.m, r.kernel, r.base, r.res.Dir, plan, filter, st)
	m.br.Boot = boot
	if plan.Name == "default" && m.err == nil {
		if why := featureAbsent(m.reports); why != "" {
			r.mu.Lock()
			r.noFeature = why
			r.mu.Unlock()
		}
	}
	return m
}

// absentFeature is why the default boot found no feature, once it has.
func (r *run) absentFeature() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noFeature
}

// keep adds what a boot said to the run, in plan order.
func (r *run) keep(ctx context.Context, m *made) error {
	o, res, plan := r.o, r.res, m.plan
	switch {
	case m.err != nil && m.br.Boot == nil && m.br.Skipped == "" && !errors.As(m.err, new(*BootDied)):
		if len(m.chosen) == 0 {
			return m.err // the label filter
		}
	case m.br.Skipped != "":
		res.Boots = append(res.Boots, m.br)
		return nil
	case m.absent != "":
		m.br.Skipped = m.absent
		res.Boots = append(res.Boots, m.br)
		r.reports = append(r.reports, skippedAs(plan, m.chosen, m.absent+results.SeenInDefaultBoot+"; boot "+plan.Name+" not made)"))
		return nil
	}
	dmesg, _ := os.ReadFile(filepath.Join(res.Dir, "boots", plan.Name, "dmesg.txt"))
	for _, p := range KernelProblems(dmesg) {
		res.KernelProblems = append(res.KernelProblems, "boot "+plan.Name+": "+p)
	}
	res.Boots = append(res.Boots, m.br)
	var died *BootDied
	if errors.As(m.err, &died) && len(plan.Append) > 0 {
		// The kernel died on the parameter this boot exists to test: a
		// failure of its specs, once a boot without the parameter shows
		// that the kernel itself comes up.
		if !r.bootsUp {
			if err := o.controlBoot(ctx, r.m, r.kernel, r.base, res, died); err != nil {
				return err
			}
			r.bootsUp = true
		}
		r.reports = append(r.reports, failedAs(plan, m.chosen, died.Error()))
		return nil
	}
	if m.err != nil {
		return m.err
	}
	if len(plan.Append) == 0 {
		r.bootsUp = true
	}
	if plan.Name == "default" && r.selftests != nil {
		res.Selftests, res.SelftestsNote = readSelftests(filepath.Join(res.Dir, "boots", plan.Name), o.FtraceDir, r.selftests.tests)
	}
	r.reports = append(r.reports, m.reports...)
	return nil
}

// finish writes Ginkgo's merged reports and summarizes them.
func (r *run) finish() (*results.Result, error) {
	res := r.res
	if len(r.reports) == 0 {
		return res, infra("LABELS=%q selects no spec", r.o.Labels)
	}
	if r.selftests != nil && res.Selftests == nil && res.SelftestsNote == "" {
		res.SelftestsNote = "not run: they run in the default boot, which this run did not make"
	}
	if err := writeReports(res.Dir, r.reports); err != nil {
		return res, failed("writing the reports", err)
	}
	res.Summary = report.Summarize(r.reports)
	if res.Required {
		res.Summary.Require(contract.LabelStackmap, res.RequiredWhy)
	}
	if r.o.Tree != "" {
		res.Decoder, res.DecoderNote = checkDecoder(r.o.Tree, filepath.Join(res.Dir, "boots", "default"), r.o.Progress)
	}
	if res.Summary.Kernel == "" {
		// No guest reported (every boot died): the console still names it.
		console, _ := os.ReadFile(filepath.Join(res.Dir, "console.log"))
		res.Summary.Kernel = kernelFromConsole(console)
	}
	return res, nil
}

// plans are the boot plans this run may make: those -boots names (all when
// it names none), opt-in ones only when LABELS= asks for them.
func (o Options) plans() []contract.BootPlan {
	var out []contract.BootPlan
	for _, plan := range contract.Plans() {
		if len(o.Boots) > 0 && !slices.Contains(o.Boots, plan.Name) || plan.OptIn && !asksFor(o.Labels, plan.Labels) {
			continue
		}
		out = append(out, plan)
	}
	return out
}

// asksFor says whether the user's label filter asks for specs labelled
// label: a filter that names it and selects it, as Ginkgo reads filters
// ("stress" does, "!stress" and no filter do not).
func asksFor(filter, label string) bool {
	if filter == "" {
		return false
	}
	match, err := types.ParseLabelFilter(filter)
	return err == nil && match([]string{label}) && !match(nil)
}

// repeatedParam refuses extra command-line words that set a parameter a
// boot plan sets itself: the kernel would see both, and the plan's specs
// would judge only one of them.
func repeatedParam(extra []string, plans []contract.BootPlan) error {
	for _, w := range extra {
		key, _, _ := strings.Cut(w, "=")
		for _, plan := range plans {
			for _, own := range plan.Append {
				if k, _, _ := strings.Cut(own, "="); k == key {
					return infra("-append %q sets %s, which boot %s sets itself (%s): the kernel would parse both; drop it, or leave that boot out with LABELS", w, key, plan.Name, own)
				}
			}
		}
	}
	return nil
}

// bootOnce makes one boot of a plan and judges what came back.
func (o Options) bootOnce(ctx context.Context, m qemu.Machine, kernel, base, runDir string, plan contract.BootPlan, filter string, st *selftestSetup) ([]types.Report, *qemu.Result, error) {
	dir := filepath.Join(runDir, "boots", plan.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, failed("making the boot directory", err)
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	if !o.Keep {
		defer os.Remove(initrd) // big, and rebuilt in well under a second
	}
	guestTimeout := o.Timeout - 20*time.Second
	if guestTimeout < 10*time.Second {
		guestTimeout = o.Timeout / 2
	}
	// Whole seconds, at least one: a TIMEOUT too short for any run must end
	// as the host's "did not power off", not as a guest refusing its config.
	cfg := guest.RunConfig{Args: o.suiteArgs(filter), TimeoutSeconds: max(1, int(guestTimeout.Seconds()))}
	var extra []cpio.Record
	if st != nil {
		cfg.Ftracetest, extra = st.tests, st.records
	}
	if err := initramfs.WithRunConfig(base, initrd, cfg, extra...); err != nil {
		return nil, nil, failed("writing the run configuration", err)
	}
	args := append(append(append([]string{}, defaultBootArgs...), plan.Append...), o.BootArgs...)
	boot := qemu.Boot{Machine: m, Kernel: kernel, Initrd: initrd, Append: args, CPUs: plan.CPUs,
		Timeout: o.Timeout, ConsoleLog: filepath.Join(dir, "console.log"), Echo: o.Echo,
		EarlyConsole: len(plan.Append) > 0, Started: guest.StartMarker, BootQuiet: BootQuiet, RunQuiet: RunQuiet,
		Memory: o.Mem, Extra: o.QEMUOpts}
	step := o.step("boot %s: %s", plan.Name, boot.CommandLine())
	res, err := qemu.Run(ctx, boot)
	step(err)
	appendConsole(runDir, plan.Name, boot)
	if err != nil {
		return nil, res, failed("boot "+plan.Name, err)
	}
	os.WriteFile(filepath.Join(dir, "qemu-command.txt"), []byte(results.ShellCommand(res.Command)+"\n"), 0o644)
	if o.Keep {
		// The kept initramfs boots the same suite again, console attached.
		script := "#!/bin/sh\n# Boots " + plan.Name + " of this run again, as it was made.\nexec " + results.ShellCommand(res.Command) + "\n"
		os.WriteFile(filepath.Join(dir, "rerun.sh"), []byte(script), 0o755)
	}
	if how := deathOf(res); how != "" {
		return nil, res, &BootDied{Boot: plan.Name, Params: plan.Append, How: how, Console: boot.ConsoleLog}
	}
	reports, err := Judge(dir, res)
	if err != nil {
		return nil, res, failed("boot "+plan.Name, err)
	}
	for i := range reports {
		for j := range reports[i].SpecReports {
			sr := &reports[i].SpecReports[j]
			sr.ContainerHierarchyTexts = plan.Prefixed(sr.ContainerHierarchyTexts)
		}
	}
	return reports, res, nil
}

// Silence limits of a boot's console. Before the guest's init starts, a
// kernel that says nothing for BootQuiet has halted: even under emulation
// the slowest boot here prints within a few seconds. Once the suite runs,
// its longest quiet spell is the 30 s stress workload.
const (
	BootQuiet = 20 * time.Second
	RunQuiet  = 2 * time.Minute
)

// BootDied is a boot whose kernel never reached the suite: it panicked, or
// the init never started (a silent halt, a hang, QEMU gone).
type BootDied struct {
	Boot    string
	Params  []string // the plan's own command-line words
	How     string
	Console string // the boot's console log
}

func (d *BootDied) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "boot %s did not reach the suite", d.Boot)
	if len(d.Params) > 0 {
		fmt.Fprintf(&b, " with %s on the kernel command line", strings.Join(d.Params, " "))
	}
	fmt.Fprintf(&b, ": %s", d.How)
	console, _ := os.ReadFile(d.Console)
	if oops := oopsLines(console, 16); len(oops) > 0 {
		b.WriteString("\nthe kernel's report on the console:")
		for _, l := range oops {
			b.WriteString("\n  " + l)
		}
		return b.String()
	}
	tail := lastLines(console, 12)
	if len(tail) == 0 {
		b.WriteString("\nthe console shows nothing")
		return b.String()
	}
	fmt.Fprintf(&b, "\nthe console's last %d lines:", len(tail))
	for _, l := range tail {
		b.WriteString("\n  " + l)
	}
	return b.String()
}

// deathOf says how a boot died before its suite could report, or "" when
// its kernel reached the suite and the frames must be judged.
func deathOf(b *qemu.Result) string {
	switch {
	case b.Panic != "":
		return "the kernel panicked: " + b.Panic
	case b.Reached:
		return ""
	case b.Silent:
		return fmt.Sprintf("the console fell silent for %s before the init started (a halt or a hang)", b.Quiet)
	case b.TimedOut:
		return fmt.Sprintf("the init had not started after %s", b.Duration.Round(time.Second))
	}
	return fmt.Sprintf("QEMU exited (status %d) before the init started", b.ExitCode)
}

// printkTime is the timestamp before a kernel message: the evidence keeps
// the words, which are what fit in a mail's width.
var printkTime = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`)

// oopsPart matches the lines of a kernel fault report a reviewer reads: the
// fault, where it happened, the call trace and the panic.
var oopsPart = regexp.MustCompile(`RIP: |pc : |lr : |Call [Tt]race:|\+0x[0-9a-f]+/0x[0-9a-f]+|Kernel panic`)

// oopsLines returns the kernel's report of the first fault on the console,
// at most n lines of it, or nothing when the console shows no fault.
func oopsLines(console []byte, n int) []string {
	var out []string
	for _, l := range strings.Split(string(console), "\n") {
		l = printkTime.ReplaceAllString(strings.TrimSpace(l), "")
		switch {
		case len(out) == 0 && (kernelTrouble.MatchString(l) || strings.Contains(l, "Kernel panic")):
			out = append(out, l)
		case len(out) > 0 && len(out) < n && oopsPart.MatchString(l):
			out = append(out, l)
		}
	}
	return out
}

// linuxVersion is the kernel's banner line on the console.
var linuxVersion = regexp.MustCompile(`Linux version (\S+) .*?(#\d+ .*)$`)

// kernelFromConsole is the release and build of the kernel's banner, as
// uname would give them, or "".
func kernelFromConsole(console []byte) string {
	for _, l := range strings.Split(string(console), "\n") {
		if m := linuxVersion.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return m[1] + " " + m[2] + " (from the console)"
		}
	}
	return ""
}

// lastLines returns the last n non-blank lines of text, trimmed.
func lastLines(text []byte, n int) []string {
	var out []string
	for _, l := range strings.Split(string(text), "\n") {
		if l = printkTime.ReplaceAllString(strings.TrimSpace(l), ""); l != "" {
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-n):]
}

// controlPlan is a boot without any plan's parameters that runs one cheap
// spec: it shows that the kernel comes up when a boot that has them did not.
var controlPlan = contract.BootPlan{Name: "control", Labels: "BASE-TRACEFS-01"}

// controlBoot makes the control boot after died, when no boot without
// parameters has been made yet. Its result is not reported, only whether
// the kernel reached the suite: if it did not, nothing can be blamed on
// the parameter and the run has no verdict.
func (o Options) controlBoot(ctx context.Context, m qemu.Machine, kernel, base string, res *results.Result, died *BootDied) error {
	_, boot, err := o.bootOnce(ctx, m, kernel, base, res.Dir, controlPlan, controlPlan.Labels, nil)
	res.Boots = append(res.Boots, results.BootResult{Plan: controlPlan, Boot: boot, Control: true})
	if err != nil {
		return infra("%v; and a control boot without its parameters failed too: %w", died, err)
	}
	return nil
}

// failedAs turns specs that plan's boot would have run into failures with
// the reason, named after the boot as a made boot's specs are.
func failedAs(plan contract.BootPlan, specs types.SpecReports, reason string) types.Report {
	r := types.Report{SuiteDescription: "boot " + plan.Name + " died", SuiteSucceeded: false}
	for _, s := range specs {
		s.State = types.SpecStateFailed
		s.Failure = types.Failure{Message: reason}
		s.ContainerHierarchyTexts = plan.Prefixed(s.ContainerHierarchyTexts)
		r.SpecReports = append(r.SpecReports, s)
	}
	return r
}

// selftestSetup is what the default boot needs to run the tree's ftracetest.
type selftestSetup struct {
	tests   []string
	records []cpio.Record
}

// selftestRecords fetches the pinned busybox for the arch and packs it with
// the tree's selftests.
func (o Options) selftestRecords() ([]cpio.Record, error) {
	busybox, err := o.busybox()
	if err != nil {
		return nil, err
	}
	return initramfs.SelftestRecords(busybox, o.FtraceDir)
}

// busybox fetches (or finds cached) the busybox images.lock pins for the
// arch: the guest's shell for ftracetest and SHELL=1.
func (o Options) busybox() (string, error) {
	lock, err := images.Read(o.LockFile)
	if err != nil {
		return "", err
	}
	tool, err := lock.Tool("busybox")
	if err != nil {
		return "", err
	}
	step := o.step("busybox (%s)", o.Arch)
	busybox, err := images.Fetch(tool, o.Arch, o.CacheDir, o.Progress)
	step(err)
	return busybox, err
}

// readSelftests reads the verdicts the guest sent back from ftracetest; a
// note says why there are none.
func readSelftests(dir, ftraceDir string, tests []string) ([]ftracetest.Case, string) {
	out, err := os.ReadFile(filepath.Join(dir, guest.SelftestOutput))
	if err != nil {
		return nil, "the guest sent no ftracetest output"
	}
	logs, _ := os.ReadFile(filepath.Join(dir, guest.SelftestLogs))
	cases, err := ftracetest.Parse(string(out), string(logs), tests)
	for i := range cases {
		if tc, rerr := os.ReadFile(filepath.Join(ftraceDir, cases[i].File)); rerr == nil && !cases[i].Passed() {
			cases[i].Hint = ftracetest.Diagnose(string(tc))
		}
	}
	if err != nil {
		return cases, err.Error()
	}
	return cases, ""
}

// checkDecoder holds the tree's own stack_map_bin decoder, if it has one,
// to the export the default boot captured; a note says why it was not.
func checkDecoder(tree, bootDir string, rep *progress.Reporter) (*dumpcheck.Check, string) {
	tool := dumpcheck.Find(tree)
	if tool == "" {
		return nil, ""
	}
	bin := filepath.Join(bootDir, "stack_map_bin")
	if _, err := os.Stat(bin); err != nil {
		return nil, "not run: the default boot captured no stack_map_bin (SM-BIN-03 did not run, or the feature is absent)"
	}
	if err := apt.Ensure(rep, apt.Need{Program: "python3", Package: "python3"}); err != nil {
		return nil, "not run: " + err.Error()
	}
	// Both arches the suite boots are little-endian.
	c, err := dumpcheck.Run(tool, bin, filepath.Join(bootDir, "stack_map"), binary.LittleEndian)
	if err != nil {
		return nil, "not run: " + err.Error()
	}
	return c, ""
}

// consoleMu keeps boots ending side by side from mixing their consoles.
var consoleMu sync.Mutex

// appendConsole adds a boot's console to the run's console.log, so one
// file holds every boot in order.
func appendConsole(runDir, name string, boot qemu.Boot) {
	consoleMu.Lock()
	defer consoleMu.Unlock()
	data, _ := os.ReadFile(boot.ConsoleLog)
	f, err := os.OpenFile(filepath.Join(runDir, "console.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "===== boot %s: %s =====\n", name, boot.CommandLine())
	f.Write(data)
}

// kernelTrouble matches the first line of what a kernel prints when it
// warns, oopses or stalls.
var kernelTrouble = regexp.MustCompile(`WARNING: |BUG: |kernel BUG at |Oops|general protection fault|soft lockup|hard LOCKUP|rcu: INFO: |self-detected stall|Unable to handle kernel|UBSAN: |KASAN: |KFENCE: |list_(add|del) corruption|INFO: task .* blocked for more than`)

// KernelProblems returns the kernel log lines that report trouble.
func KernelProblems(dmesg []byte) []string {
	var out []string
	for _, l := range strings.Split(string(dmesg), "\n") {
		if kernelTrouble.MatchString(l) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// featureAbsent returns the reason the default boot gave for the kernel
// lacking the feature (a spec's report entry), or "".
func featureAbsent(reports []types.Report) string {
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			for _, e := range sr.ReportEntries {
				if e.Name == contract.FeatureEntry {
					return e.StringRepresentation()
				}
			}
		}
	}
	return ""
}

// writeReports writes the run's merged reports as Ginkgo's JSON.
func writeReports(dir string, reports []types.Report) error {
	js, err := json.MarshalIndent(reports, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), js, 0o644)
}

// Judge reads the frames the guest wrote into dir/console.log, saves the
// files they carry into dir, and decides whether they can be trusted; only
// then are there reports. boot is how QEMU ended.
func Judge(dir string, boot *qemu.Result) ([]types.Report, error) {
	log := filepath.Join(dir, "console.log")
	f, err := os.Open(log)
	if err != nil {
		return nil, failed("reading the console", err)
	}
	defer f.Close()
	c, err := consoleframe.Decode(f)
	if err != nil {
		return nil, failed("reading "+log, err)
	}
	for name, data := range c.Files {
		if name != filepath.Base(name) || name == ".." {
			continue // a file name only: the guest writes in dir, nowhere else
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	switch {
	case boot.Panic != "":
		return nil, infra("guest kernel panicked: %s (see %s)", boot.Panic, log)
	case boot.TimedOut:
		return nil, infra("guest did not power off within %s: hung? (see %s)", boot.Duration.Round(time.Second), log)
	case len(c.GuestErrors) > 0:
		return nil, infra("guest: %s (see %s)", c.GuestErrors[0], log)
	case len(c.Problems) > 0:
		return nil, infra("result from the guest is damaged: %v (see %s)", c.Problems[0], log)
	case c.Files["report.json"] == nil || !c.HaveExit:
		return nil, infra("guest sent no complete result: did its init run? (see %s)", log)
	}
	reports, err := report.Parse(c.Files["report.json"])
	if err != nil {
		return nil, failed("reading the guest's report", err)
	}
	s := report.Summarize(reports)
	switch {
	case len(s.SuiteProblems) > 0:
		return reports, infra("suite: %s", s.SuiteProblems[0])
	case len(s.Specs) == 0:
		return reports, infra("no spec ran: check LABELS")
	case (c.Exit == 0) != s.Succeeded:
		return reports, infra("suite exit code %d disagrees with its report (succeeded=%v)", c.Exit, s.Succeeded)
	}
	return reports, nil
}

func (o Options) suiteArgs(filter string) []string {
	return []string{"-ginkgo.v", "-ginkgo.no-color", "-ginkgo.fail-on-empty", fmt.Sprintf("-ginkgo.seed=%d", o.Seed),
		"-smct.profile=" + o.Profile, "-smct.workload=" + guest.WorkloadPath, "-smct.capture=" + guest.CaptureDir,
		"-ginkgo.label-filter=" + filter}
}

// step shows a step while it runs (on a terminal only); the returned func
// ends it with the step's error.
func (o Options) step(format string, args ...any) func(error) {
	return o.Progress.Step(format, args...)
}

func newRunDir(parent, archName string) (string, error) {
	if !arch.Known(archName) {
		archName = "unknown-arch" // the name is the user's input, checked later
	}
	name := time.Now().Format("20060102-150405") + "-" + archName
	dir := filepath.Join(parent, name)
	for i := 2; ; i++ {
		err := os.MkdirAll(parent, 0o755)
		if err == nil {
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return "", err
		}
		dir = filepath.Join(parent, fmt.Sprintf("%s.%d", name, i))
	}
	// Replace latest by a rename, which is atomic, so that runs ending
	// together in one parent cannot fail on each other's link.
	latest := filepath.Join(parent, "latest")
	tmp := filepath.Join(parent, ".latest-"+filepath.Base(dir))
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, latest)
}
