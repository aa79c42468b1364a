// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// bootOnce makes one boot of a plan, its steps shown on rep, and judges
// what came back. It returns what the console carried (also when the
// judging failed, for the kernel's log), how QEMU ended, and the console.
func (r *run) bootOnce(ctx context.Context, plan contract.BootPlan, filter labels.Filter, st *selftestSetup, rep *progress.Reporter) (*Carried, *qemu.Result, []byte, error) {
	dir := filepath.Join(r.res.Dir, "boots", plan.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, failed("making the boot directory", err)
	}
	boot := r.booter
	if boot == nil {
		boot = r.bootHere
	}
	res, console, err := boot(ctx, plan, filter, st, dir, rep)
	if err := r.wrongKVM(res); err != nil {
		return nil, res, console, err
	}
	if err != nil {
		return nil, res, console, err
	}
	c, err := Judge(console, filepath.Join(dir, "console.log"), plan.Name, res)
	if c != nil {
		if werr := keepFiles(dir, c.Files); werr != nil {
			return c, res, console, werr
		}
	}
	ended := *res
	if c != nil && c.Spoke {
		// The init ran, even if the line that says it started was lost.
		ended.Reached = true
	}
	if how := deathOf(&ended); how != "" {
		how = r.routeDeath(how, console)
		// What did arrive is kept for the reader, and names what did not.
		return c, res, console, &BootDied{Boot: plan.Name, Params: plan.Append, How: how, Console: console}
	}
	if err != nil {
		return c, res, console, &Unjudged{Boot: plan.Name, Err: err}
	}
	for i := range c.Reports {
		for j := range c.Reports[i].SpecReports {
			sr := &c.Reports[i].SpecReports[j]
			sr.ContainerHierarchyTexts = plan.Prefixed(sr.ContainerHierarchyTexts)
		}
	}
	return c, res, console, nil
}

// A booter makes a plan's boot, its console saved in dir/console.log and
// added to the run's, and says how it ended and what the console showed.
type booter func(ctx context.Context, plan contract.BootPlan, filter labels.Filter, st *selftestSetup, dir string, rep *progress.Reporter) (*qemu.Result, []byte, error)

// bootHere boots a plan under QEMU on this machine.
func (r *run) bootHere(ctx context.Context, plan contract.BootPlan, filter labels.Filter, st *selftestSetup, dir string, rep *progress.Reporter) (*qemu.Result, []byte, error) {
	o := r.o
	initrd := filepath.Join(dir, "initrd.cpio")
	if !o.Keep {
		defer os.Remove(initrd) // big, and rebuilt in well under a second
	}
	cfg, extra := o.runConfig(plan.Name, filter, st, r.res.Derived.Timeout)
	if o.Reports.onPort() {
		cfg.ReportsPort = guest.ReportsPortName
	}
	if err := initramfs.WithRunConfig(r.base, initrd, cfg, extra...); err != nil {
		return nil, nil, failed("writing the run configuration", err)
	}
	b := r.qemuBoot(initrd, dir, plan)
	b.OnTail = leaveLane(ctx)
	res, console, err, werr := r.runBoot(ctx, b, plan.Name, rep)
	// For the reader; a file that cannot be written leaves no verdict.
	if err != nil {
		what := "boot " + plan.Name
		if r.route.onBzImage {
			what += " from the bzImage" // not the route the user may expect
		}
		return res, console, failed(what, errors.Join(err, werr))
	}
	werr = errors.Join(werr, r.keepCommand(dir, plan.Name, res))
	if werr != nil {
		return res, console, failed("writing the files of boot "+plan.Name, werr)
	}
	return res, console, nil
}

// keepCommand writes a boot's QEMU command into its directory, and with
// KEEP=1 a rerun.sh: the kept initramfs boots the same suite again,
// console attached.
func (r *run) keepCommand(dir, boot string, res *qemu.Result) error {
	err := results.WriteQEMUCommand(dir, res.Command)
	if r.o.Keep {
		err = errors.Join(err, results.WriteRerun(dir, "Boots "+boot+" of this run again, as it was made.", res.Command))
	}
	return err
}

// tee is w, and echo too when there is one: the console kept in memory is
// the one judged, whatever becomes of the copies.
func tee(w, echo io.Writer) io.Writer {
	if echo == nil {
		return w
	}
	return io.MultiWriter(w, echo)
}
