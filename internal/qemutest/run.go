// SPDX-License-Identifier: GPL-2.0-only

// Package qemutest performs one conformance run under QEMU: it checks the
// inputs, prepares the kernel and the initramfs, boots, and turns what came
// back into a verdict. Anything that leaves no trustworthy verdict is an
// *InfraError.
package qemutest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Options are the user's choices for one run and where it works.
type Options struct {
	results.Request
	Boots      []string // boot plans to make; all when empty (an opt-in one only when Labels asks for it)
	ModuleDir  string   // the project's root
	LockFile   string
	CacheDir   string
	ResultsDir string             // parent of the run directories
	Kind       string             // what makes the run, first in its directory's name; "" for a run here
	Progress   *progress.Reporter // steps as they run, on a terminal; notes always
	Echo       io.Writer          // the guest console, if wanted live
	Jobs       int                // make -j for a kernel built here; 0 means one per CPU
	Accel      string             // ACCEL=: "" chooses KVM when it can, "kvm" or "tcg" insist
	CPU, Mem   string             // CPU=, MEM=: QEMU's -cpu and -m instead of the machine's
	QEMUOpts   []string           // QEMU_OPTS=: added to every QEMU command
	Keep       bool               // KEEP=1: keep each boot's initramfs and a rerun.sh that boots it again
	Lanes      int                // LANES=: boots made at a time; 0 means one per CPU, as memory allows
	Reports    Reports            // REPORTS=: how the guest's frames reach this machine
	// BootQuiet is BOOT_QUIET=: the console's longest silence before the
	// guest's init starts; 0 scales it to the accelerator and the kernel
	// (preInitQuiet).
	BootQuiet time.Duration
}

// BuildEnv is how a kernel the run needs is built here for a, in the
// lane asked for.
func (o Options) BuildEnv(a arch.Arch) kbuild.Env {
	return kbuild.Env{Host: kbuild.Host{Arch: a, KernelDir: filepath.Join(o.ModuleDir, "kernel"), CacheDir: o.CacheDir, Progress: o.Progress, Jobs: o.Jobs}, Lane: o.Lane}
}

// InfraError means the run gave no verdict to trust, and why.
type InfraError struct {
	Err error
}

func (e *InfraError) Error() string { return e.Err.Error() }

func (e *InfraError) Unwrap() error { return e.Err }

// infra is an InfraError whose message says everything (%w wraps a cause).
func infra(format string, args ...any) error {
	return &InfraError{Err: fmt.Errorf(format, args...)}
}

// failed is an InfraError of a step, wrapping its cause. It does not ask
// why the step failed: of a run cut short by SIGINT or SIGTERM, smct sees
// its own context cancelled and reports the run interrupted instead.
func failed(step string, err error) error {
	return &InfraError{Err: fmt.Errorf("%s: %w", step, err)}
}

// Runner makes runs. Runs one Runner makes side by side (smct matrix,
// bench) take turns preparing, since they share apt, the kernel cache and
// build tree, and build/<arch>: only their boots overlap. The zero Runner
// is ready to use.
type Runner struct {
	preparing sync.Mutex
	kvmMu     sync.Mutex
	kvm       map[string]*kvmAnswer // what probing KVM with a kernel found, by QEMU and kernel
	routeMu   sync.Mutex
	routes    map[string]*routeAnswer // how a kernel's first boot through PVH went, by QEMU and kernel
	// specs are the suite's specs when known beforehand (KnownSpecs).
	specs types.SpecReports
	// probeKVM and kvmHost stand in for qemu.KVMWorks and hostKVM in tests.
	probeKVM func(qemu.Machine, string) error
	kvmHost  func() (kvmInputs, error)
}

// Run makes a run alone, with a Runner of its own.
func Run(ctx context.Context, o Options) (*results.Result, error) {
	return new(Runner).Run(ctx, o)
}

// Run runs the suite under QEMU: one boot per plan that selects a spec.
// On an infrastructure problem it returns an *InfraError, with the run
// directory (console logs kept) in results.Result.
func (rn *Runner) Run(ctx context.Context, o Options) (*results.Result, error) {
	if o.Seed == 0 {
		o.Seed = NewSeed()
	}
	r, res, err := rn.begin(ctx, o)
	if err != nil {
		return res, err
	}
	if err := r.bootAll(ctx, r.plans); err != nil {
		return r.res, err
	}
	if o.Claims {
		// After the conformance boots, whose verdict they do not change.
		var err error
		r.res.Claims, err = r.measureClaims(ctx)
		if ctx.Err() != nil {
			return r.res, failed("measuring the claims", ctx.Err())
		}
		if err != nil {
			return r.res, err
		}
	}
	return r.finish()
}

// begin makes the run's directory, then prepares what its boots need;
// the result holds the directory even when preparing fails.
func (rn *Runner) begin(ctx context.Context, o Options) (*run, *results.Result, error) {
	plans := o.plans()
	res, err := o.start(plans)
	if err != nil {
		return nil, nil, err
	}
	r, err := rn.prepare(ctx, o, plans, res)
	return r, res, err
}

// start makes the run's directory, and results/latest with it, before
// anything is checked: even a run refused for its input leaves its verdict
// and reports there.
func (o Options) start(plans []contract.BootPlan) (*results.Result, error) {
	res := &results.Result{Request: o.Request, Started: time.Now(), Suite: suiteID(o.ModuleDir)}
	for _, plan := range plans {
		res.Plans = append(res.Plans, plan.Name)
	}
	archName := o.Arch.Name
	if archName == "" {
		archName = "unknown-arch" // a run has one arch, even when not given
	}
	var err error
	if res.Dir, err = results.NewRunDir(o.ResultsDir, o.Kind, archName); err != nil {
		return nil, failed("making the run directory", err)
	}
	return res, nil
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
	console   *results.Console // the run's console.log
	reports   []types.Report   // Ginkgo's, of every boot kept so far
	summaries []report.Summary // theirs, boot by boot
	bootsUp   bool             // a boot without a plan's parameters reached the suite
	// route says whether kernel is a bzImage's vmlinux or the bzImage,
	// and why (route.go).
	route route
	// bootQuiet is the console's longest silence before the init starts,
	// and quietWhy what it is and why; machine is QEMU's own description,
	// which the run's machine line begins with.
	bootQuiet         time.Duration
	quietWhy, machine string
	// plans are the boots the run may make, computed once (begin).
	plans []contract.BootPlan
	// configFrom is where the kernel's config (res.Derived.Debug) was read.
	configFrom string
	// controlDied is how the control boot failed, once one has: the next
	// boot that dies on its parameters is not given another.
	controlDied error
	booter      booter // makes each boot; nil boots here, under QEMU
	// kvmRemembered is the remembered answer that put the run under KVM,
	// and forgetKVM forgets it, when a boot shows it wrong.
	kvmRemembered *kvmAnswer
	forgetKVM     func() error
	// defaultFiles are the files the default boot's frames carried;
	// banner is the kernel's, from the first console that showed it.
	defaultFiles map[string][]byte
	banner       string

	mu        sync.Mutex
	noFeature string // why the default boot found no feature, if it did not
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
	if err := results.WriteReports(res.Dir, r.reports); err != nil {
		return res, failed("writing the reports", err)
	}
	res.Summary = report.Join(r.summaries...)
	if res.Required {
		res.Summary.Require(contract.LabelStackmap, res.RequiredWhy)
	}
	if r.o.Tree != "" {
		res.Decoder, res.DecoderNote = checkDecoder(r.o.Tree, filepath.Join(res.Dir, "boots", contract.DefaultBoot), r.defaultFiles, r.o.Progress)
	}
	if res.Summary.Kernel == "" {
		// No guest reported (every boot died): the console still names it.
		res.Summary.Kernel = r.banner
	}
	return res, nil
}

// sawConsole keeps the kernel's banner from a boot's console, the first
// one that shows it, in case no guest reports its kernel.
func (r *run) sawConsole(console []byte) {
	if r.banner == "" {
		r.banner = kernelFromConsole(console)
	}
}
