// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// bootOnce makes one boot of a plan, its steps shown on rep, and judges
// what came back.
func (r *run) bootOnce(ctx context.Context, plan contract.BootPlan, filter string, st *selftestSetup, rep *progress.Reporter) ([]types.Report, *qemu.Result, error) {
	dir := filepath.Join(r.res.Dir, "boots", plan.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, failed("making the boot directory", err)
	}
	boot := r.booter
	if boot == nil {
		boot = r.bootHere
	}
	res, err := boot(ctx, plan, filter, st, dir, rep)
	if err != nil {
		return nil, res, err
	}
	if how := deathOf(res); how != "" {
		return nil, res, &BootDied{Boot: plan.Name, Params: plan.Append, How: how, Console: filepath.Join(dir, "console.log")}
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

// A booter makes a plan's boot, its console saved in dir/console.log and
// added to the run's, and says how it ended.
type booter func(ctx context.Context, plan contract.BootPlan, filter string, st *selftestSetup, dir string, rep *progress.Reporter) (*qemu.Result, error)

// bootHere boots a plan under QEMU on this machine.
func (r *run) bootHere(ctx context.Context, plan contract.BootPlan, filter string, st *selftestSetup, dir string, rep *progress.Reporter) (*qemu.Result, error) {
	o := r.o
	initrd := filepath.Join(dir, "initrd.cpio")
	if !o.Keep {
		defer os.Remove(initrd) // big, and rebuilt in well under a second
	}
	cfg, extra := o.runConfig(filter, st)
	if err := initramfs.WithRunConfig(r.base, initrd, cfg, extra...); err != nil {
		return nil, failed("writing the run configuration", err)
	}
	boot := o.qemuBoot(r.m, r.kernel, initrd, dir, plan)
	step := rep.Step("boot %s: %s", plan.Name, boot.CommandLine())
	res, err := qemu.Run(ctx, boot)
	step(err)
	r.console.Add(plan.Name, boot.CommandLine(), boot.ConsoleLog)
	if err != nil {
		return res, failed("boot "+plan.Name, err)
	}
	// For the reader: a file not written changes no verdict.
	results.WriteQEMUCommand(dir, res.Command)
	if o.Keep {
		// The kept initramfs boots the same suite again, console attached.
		results.WriteRerun(dir, "Boots "+plan.Name+" of this run again, as it was made.", res.Command)
	}
	return res, nil
}
