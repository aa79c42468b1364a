// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/claims"
	"github.com/ftrace-stackmap/conformance/internal/consoleframe"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// Claims makes a claims run alone (make claims): the kernel, QEMU and the
// initramfs as for a conformance run, then the claims plan's boots only.
// The result holds the run directory even when preparing fails.
func (rn *Runner) Claims(ctx context.Context, o Options) (*results.Result, error) {
	o.Claims = true
	r, res, err := rn.begin(ctx, o)
	if err != nil {
		return res, err
	}
	res.Plans = nil
	res.Claims = r.measureClaims(ctx)
	if ctx.Err() != nil {
		return res, failed("measuring the claims", ctx.Err())
	}
	return res, nil
}

// measureClaims makes the claims plan's boots, as many at a time as the
// run's lanes, and judges what they brought back. A boot that brings back
// nothing is a claim that could not be measured, never a run without a
// verdict: claims do not judge the kernel's conformance.
func (r *run) measureClaims(ctx context.Context) *claims.Report {
	plan := claims.Plan
	lanes := r.o.lanes(len(plan))
	boots := make([]claims.Boot, len(plan))
	rep := r.o.Progress
	if lanes > 1 {
		rep = rep.Lines()
	}
	inLanes(ctx, len(plan), lanes, func(i int) {
		boots[i] = r.claimsBoot(ctx, plan[i], rep)
	})
	out := claims.Judge(r.res.Machine, r.m.Accel.Name != "kvm", boots)
	return &out
}

// claimsBoot makes one boot of the claims plan and reads its sample.
func (r *run) claimsBoot(ctx context.Context, pb claims.PlanBoot, rep *progress.Reporter) claims.Boot {
	b := claims.Boot{Name: pb.Name, Bits: pb.Bits}
	plan := contract.BootPlan{Name: pb.Name, Append: pb.Append(), CPUs: pb.CPUs}
	dir := filepath.Join(r.res.Dir, "boots", plan.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Error = err.Error()
		return b
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	defer os.Remove(initrd)
	cfg := guest.RunConfig{Claims: true, TimeoutSeconds: max(1, int(guestTimeout(r.o.Timeout).Seconds())),
		Args: []string{"-smct.claims=" + strings.Join(pb.Parts, ","), "-smct.workload=" + guest.WorkloadPath,
			"-smct.claims-out=" + filepath.Join(guest.CaptureDir, claims.SampleFile)}}
	if err := initramfs.WithRunConfig(r.base, initrd, cfg); err != nil {
		b.Error = "writing the run configuration: " + err.Error()
		return b
	}
	boot := r.o.qemuBoot(r.m, r.kernel, initrd, dir, plan)
	step := rep.Step("boot %s: %s", plan.Name, boot.CommandLine())
	res, err := qemu.Run(ctx, boot)
	step(err)
	r.console.Add(plan.Name, boot.CommandLine(), boot.ConsoleLog)
	if err != nil {
		b.Error = err.Error()
		return b
	}
	b.Sample, err = readSample(dir, res)
	if err != nil {
		b.Error = err.Error()
	}
	return b
}

// readSample reads the claims boot's frames from dir/console.log, keeps
// the files they carry in dir, and returns its sample when the boot ended
// as it should.
func readSample(dir string, boot *qemu.Result) (*claims.Sample, error) {
	if how := deathOf(boot); how != "" {
		return nil, fmt.Errorf("%s (see %s)", how, filepath.Join(dir, "console.log"))
	}
	log := filepath.Join(dir, "console.log")
	f, err := os.Open(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := consoleframe.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", log, err)
	}
	keepFiles(dir, c.Files)
	if err := untrusted(c, boot, log, claims.SampleFile); err != nil {
		return nil, err
	}
	if c.Exit != 0 {
		return nil, fmt.Errorf("the measurement did not end well (exit %d; see %s)", c.Exit, log)
	}
	var s claims.Sample
	if err := json.Unmarshal(c.Files[claims.SampleFile], &s); err != nil {
		return nil, fmt.Errorf("%s: %v", claims.SampleFile, err)
	}
	return &s, nil
}
