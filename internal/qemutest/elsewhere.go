// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Runs whose boots another runner makes (a LAVA job): Plan prepares one as
// Run would and says which boots it would make; Collect judges what that
// runner recorded of them as Run judges its own boots, with the same code.

// PlannedBoot is one boot a run would make.
type PlannedBoot struct {
	Plan        contract.BootPlan
	Config      guest.RunConfig // what the guest runs
	CommandLine string          // the kernel's
	// Control marks the boot without any plan's parameters that a run
	// makes only after a boot with them died; one made elsewhere cannot
	// wait for that, so it is planned whenever no other boot is without.
	Control bool
	// Timeout and Quiet are the boot's limits as a run here gives them:
	// its whole time, and the console's longest silence once the suite
	// runs (both longer for a debug kernel).
	Timeout, Quiet time.Duration
}

// Planned is a run prepared for boots made elsewhere.
type Planned struct {
	Result    *results.Result // its directory, its kernel and what it requires
	Kernel    string          // the file QEMU boots
	Initramfs string          // the suite's, without a run configuration
	Machine   qemu.Machine
	Boots     []PlannedBoot
}

// Plan prepares a run as Run does, from checking the input to listing the
// specs, and plans the boots it would make, without booting. On an
// infrastructure problem it returns an *InfraError, and the run's
// directory when it was made.
func (rn *Runner) Plan(ctx context.Context, o Options) (*Planned, error) {
	if o.Seed == 0 {
		o.Seed = NewSeed()
	}
	if o.FtraceDir != "" {
		return nil, infra("FTRACETEST= runs in a boot made here only")
	}
	r, res, err := rn.begin(ctx, o)
	if err != nil {
		return &Planned{Result: res}, err
	}
	p := &Planned{Result: res, Kernel: r.kernel, Initramfs: r.base, Machine: r.m}
	control := true
	for _, plan := range r.plans {
		filter := plan.Filter(o.Labels)
		if len(selected(r.specs, filter)) == 0 {
			continue
		}
		control = control && len(plan.Append) > 0
		p.Boots = append(p.Boots, r.planned(plan, filter))
	}
	if len(p.Boots) == 0 {
		return p, infra("LABELS=%q selects no spec", o.Labels)
	}
	if control {
		b := r.planned(controlPlan, controlPlan.Labels)
		b.Control = true
		p.Boots = append(p.Boots, b)
	}
	return p, nil
}

// planned is a plan's boot as this run would make it.
func (r *run) planned(plan contract.BootPlan, filter labels.Filter) PlannedBoot {
	cfg, _ := r.o.runConfig(plan.Name, filter, nil, r.res.Derived.Timeout)
	b := r.qemuBoot("", "", plan)
	return PlannedBoot{Plan: plan, Config: cfg, CommandLine: b.CommandLine(), Timeout: b.Timeout, Quiet: b.RunQuiet}
}

// Recorded is how a boot made elsewhere went: its console as QEMU's would
// be saved, the command that booted it, and how it ended (Reached, Panic,
// TimedOut, Silent and Duration as qemu.Run would say).
type Recorded struct {
	Console []byte
	Command string
	Boot    qemu.Result
}

// Collect judges the boots made elsewhere of a run Plan prepared, as Run
// judges its own, and returns its result: res is what the run's maker
// knew (its directory made, its request, its kernel and what it requires),
// boots the record of each boot by its plan's name. A boot of the plans
// that is not in boots cannot be judged: unrecorded says why it is not
// ("" when nothing does), and the other boots' verdicts stand.
func (rn *Runner) Collect(ctx context.Context, o Options, res *results.Result, boots map[string]Recorded, unrecorded string) (*results.Result, error) {
	o.Lanes, o.Echo = 1, nil
	r := &run{o: o, res: res, plans: o.plans(), console: results.NewConsole(res.Dir)}
	r.booter = func(_ context.Context, plan contract.BootPlan, _ labels.Filter, _ *selftestSetup, dir string, _ *progress.Reporter) (*qemu.Result, []byte, error) {
		b, ok := boots[plan.Name]
		if !ok {
			return nil, nil, &Unjudged{Boot: plan.Name, Err: noRecord(plan.Name, unrecorded)}
		}
		// For the reader, as a boot made here leaves them.
		err := errors.Join(os.WriteFile(filepath.Join(dir, "console.log"), b.Console, 0o644),
			r.console.Add(plan.Name, b.Command, b.Console),
			os.WriteFile(filepath.Join(dir, "qemu-command.txt"), []byte(b.Command+"\n"), 0o644))
		if err != nil {
			return nil, nil, failed("writing the files of boot "+plan.Name, err)
		}
		boot := b.Boot
		return &boot, b.Console, nil
	}
	// The specs each boot selects, listed as Run lists them.
	a, err := o.arch()
	if err != nil {
		return res, err
	}
	if r.specs = rn.specs; r.specs == nil {
		rn.preparing.Lock()
		bld := initramfs.Builder{ModuleDir: o.ModuleDir, OutDir: filepath.Join(o.ModuleDir, "build", a.Name), Arch: a, Progress: o.Progress}
		step := o.Progress.Step("listing the specs (%s)", a.Name)
		_, err = bld.Build(ctx)
		if err == nil {
			r.specs, err = readSpecs(bld.Specs())
		}
		step(err)
		rn.preparing.Unlock()
	}
	if err != nil {
		return res, failed("listing the specs", err)
	}
	if err := r.bootAll(ctx, r.plans); err != nil {
		return res, err
	}
	return r.finish()
}

// noRecord is why a boot made elsewhere has no record.
func noRecord(boot, why string) error {
	if why == "" {
		return fmt.Errorf("the run's record has no console of boot %s", boot)
	}
	return fmt.Errorf("the run's record has no console of boot %s: %s", boot, why)
}

// KnownSpecs gives Collect the suite's specs, instead of its listing them
// from the suite it builds: for judging many records of one suite
// quickly (a fuzzer's).
func (rn *Runner) KnownSpecs(specs types.SpecReports) { rn.specs = specs }
