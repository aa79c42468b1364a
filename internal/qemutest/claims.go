// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/initramfs/guest"
	"github.com/ftrace-stackmap/conformance/internal/claims"
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
	res.Claims, err = r.measureClaims(ctx)
	if ctx.Err() != nil {
		return res, failed("measuring the claims", ctx.Err())
	}
	return res, err
}

// measureClaims makes the claims plan's boots, as many at a time as the
// run's lanes, and judges what they brought back. A boot that brings back
// nothing is a claim that could not be measured, never a run without a
// verdict: claims do not judge the kernel's conformance. A file of theirs
// that cannot be written is an error, as any report's is.
func (r *run) measureClaims(ctx context.Context) (*claims.Report, error) {
	plan := claims.Plan
	lanes := r.o.lanes(len(plan))
	boots := make([]claims.Boot, len(plan))
	errs := make([]error, len(plan))
	rep := r.o.Progress
	if lanes > 1 {
		rep = rep.Lines()
	}
	first := 0
	for ; first < len(plan) && r.route.open && ctx.Err() == nil; first++ {
		// Alone: it decides how the others boot (route.go).
		boots[first], errs[first] = r.claimsBoot(ctx, plan[first], r.o.Progress)
	}
	// Never a third guest beside two: the claims are timings.
	inLanes(ctx, len(plan)-first, lanes, lanes, func(i int, _ func()) {
		boots[first+i], errs[first+i] = r.claimsBoot(ctx, plan[first+i], rep)
	})
	out := claims.Judge(r.res.Machine, r.m.Accel.Name != "kvm", boots)
	return &out, errors.Join(errs...)
}

// claimsBoot makes one boot of the claims plan and reads its sample; the
// error is a file of the boot's that could not be written.
func (r *run) claimsBoot(ctx context.Context, pb claims.PlanBoot, rep *progress.Reporter) (claims.Boot, error) {
	b := claims.Boot{Name: pb.Name, Bits: pb.Bits}
	plan := contract.BootPlan{Name: pb.Name, Append: pb.Append(), CPUs: pb.CPUs}
	dir := filepath.Join(r.res.Dir, "boots", plan.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Error = err.Error()
		return b, nil
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	if !r.o.Keep {
		defer os.Remove(initrd)
	}
	cfg := guest.RunConfig{Claims: true, TimeoutSeconds: max(1, int(guestTimeout(r.res.Derived.Timeout).Seconds())),
		Args: []string{"-smct.claims=" + strings.Join(pb.Parts, ","), "-smct.workload=" + guest.WorkloadPath,
			"-smct.claims-out=" + filepath.Join(guest.CaptureDir, claims.SampleFile)}}
	if r.o.Reports.onPort() {
		cfg.ReportsPort = guest.ReportsPortName
	}
	if err := initramfs.WithRunConfig(r.base, initrd, cfg); err != nil {
		b.Error = "writing the run configuration: " + err.Error()
		return b, nil
	}
	res, console, err, werr := r.runBoot(ctx, r.qemuBoot(initrd, dir, plan), plan.Name, rep)
	if err == nil {
		// As a conformance boot leaves them: how to make it again.
		werr = errors.Join(werr, r.keepCommand(dir, plan.Name, res))
	}
	if errors.Is(err, qemu.ErrConsoleLog) {
		werr = errors.Join(err, werr)
	}
	if werr != nil {
		return b, failed("boot "+plan.Name, werr)
	}
	if err != nil {
		b.Error = err.Error()
		return b, nil
	}
	files, sample, err := readSample(console, filepath.Join(dir, "console.log"), res)
	if werr := keepFiles(dir, files); werr != nil {
		return b, failed("boot "+plan.Name, werr)
	}
	b.Sample = sample
	if err != nil {
		b.Error = err.Error()
	}
	return b, nil
}

// readSample reads the claims boot's frames from its console (kept in
// log) and returns the files they carry, and its sample when the boot
// ended as it should.
func readSample(console []byte, log string, boot *qemu.Result) (map[string][]byte, *claims.Sample, error) {
	if how := deathOf(boot); how != "" {
		return nil, nil, fmt.Errorf("%s (see %s)", how, log)
	}
	c, err := decode(console, boot)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %v", log, err)
	}
	if err := untrusted(c, boot, log, "claims", claims.SampleFile); err != nil {
		return c.Files, nil, err
	}
	if c.Exit != 0 {
		return c.Files, nil, fmt.Errorf("the measurement did not end well (exit %d; see %s)", c.Exit, log)
	}
	var s claims.Sample
	if err := json.Unmarshal(c.Files[claims.SampleFile], &s); err != nil {
		return c.Files, nil, fmt.Errorf("%s: %v", claims.SampleFile, err)
	}
	return c.Files, &s, nil
}
