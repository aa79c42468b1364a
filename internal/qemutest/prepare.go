// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/ftrace-stackmap/conformance/initramfs"
	"github.com/ftrace-stackmap/conformance/internal/apt"
	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/qemu"
)

// prepare checks the user's input, then gets QEMU, the kernel, the
// initramfs and the list of specs ready for res, whose directory start
// made.
func (rn *Runner) prepare(ctx context.Context, o Options, plans []contract.BootPlan, res *results.Result) (*run, error) {
	a, err := o.check(plans)
	if err != nil {
		return nil, err
	}
	r := &run{o: o, res: res, plans: plans, console: results.NewConsole(res.Dir)}
	if o.FtraceDir != "" {
		tests, err := initramfs.FtraceTests(o.FtraceDir, o.FtraceMatch)
		if err != nil {
			return nil, failed("finding the tree's selftests", err)
		}
		r.selftests = &selftestSetup{tests: tests}
	}
	if r.m, err = rn.machine(o, a); err != nil {
		return nil, err
	}
	rn.preparing.Lock()
	defer rn.preparing.Unlock()
	k, err := r.getKernel()
	if err != nil {
		return nil, err
	}
	r.chooseRoute(rn, k) // before the KVM probe boots the run's kernel
	if err := r.chooseAccel(rn); err != nil {
		return nil, err
	}
	d := &res.Derived
	d.Emulated = r.m.Accel.Name != "kvm"
	r.bootQuiet, r.quietWhy = preInitQuiet(o.BootQuiet, r.m.Accel.Name, d.Debug, r.configFrom)
	d.Timeout, d.TimeoutWhy = bootTimeout(o.Timeout, d.Debug, o.Torture, tortured(plans))
	r.describeMachine()
	if err := r.getInitramfs(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// tortured says whether the run makes the torture boot, whose actors'
// time each boot's limit must allow.
func tortured(plans []contract.BootPlan) bool {
	return slices.ContainsFunc(plans, func(p contract.BootPlan) bool { return p.OptIn == contract.LabelTorture })
}

// arch is the run's arch: one must be asked for.
func (o Options) arch() (arch.Arch, error) {
	if o.Arch.Name == "" {
		return o.Arch, infra("ARCH=\"\": want one of %v", arch.Names())
	}
	return o.Arch, nil
}

// check refuses what the user asked when the run cannot use it, before
// anything is installed, fetched, built or booted, and returns the arch.
func (o Options) check(plans []contract.BootPlan) (arch.Arch, error) {
	a, err := o.arch()
	if err != nil {
		return a, err
	}
	// ACCEL= against the arch, as if KVM worked: probing KVM runs QEMU,
	// which may not be installed yet.
	if _, err := qemu.ChooseAccel(a.GOARCH, o.Accel, func() error { return nil }); err != nil {
		return a, &InfraError{Err: err}
	}
	for _, err := range []error{o.Profile.Valid(), o.Require.Valid()} {
		if err != nil {
			return a, &InfraError{Err: err}
		}
	}
	if err := repeatedParam(o.BootArgs, plans); err != nil {
		return a, err
	}
	if o.BootQuiet < 0 {
		return a, infra("BOOT_QUIET=%s: want a duration above 0 (or 0 to scale it to the accelerator and the kernel)", o.BootQuiet)
	}
	if o.Kernel != "" && o.Tree != "" {
		return a, infra("KERNEL= and TREE= name two kernels: give one")
	}
	if o.Tree != "" {
		if err := kbuild.CheckTree(o.Tree, a); err != nil {
			return a, &InfraError{Err: err}
		}
	}
	return a, nil
}

// machine installs QEMU for the arch.
func (rn *Runner) machine(o Options, a arch.Arch) (qemu.Machine, error) {
	m := qemu.MachineFor(a)
	rn.preparing.Lock()
	err := apt.Ensure(o.Progress, apt.Need{Program: m.Binary, Package: a.QEMUPkg})
	rn.preparing.Unlock()
	if err != nil {
		return m, failed("installing QEMU", err)
	}
	return m, nil
}

// chooseAccel chooses how QEMU runs the guest: KVM when it runs the
// kernel under test, which only an installed QEMU and the kernel can tell.
// The answer is remembered, by the runner for the runs it makes after
// (mutants boot one kernel some fifty times) and on disk for other
// processes (kvmprobe.go). Its lock is held.
func (r *run) chooseAccel(rn *Runner) error {
	o, m := r.o, r.m
	var answer *kvmAnswer
	accel, err := qemu.ChooseAccel(m.Arch.GOARCH, o.Accel, func() error {
		answer = r.kvmAnswer(rn)
		return answer.err()
	})
	if err != nil {
		return &InfraError{Err: err}
	}
	if answer != nil && answer.remembered {
		accel.Why += "; remembered from a probe of " + answer.when()
		if accel.Name == "kvm" {
			r.kvmRemembered = answer // a boot that fails under KVM forgets it
			r.forgetKVM = func() error { return rn.forget(answer) }
		}
	}
	m = m.WithAccel(accel)
	if o.CPU != "" {
		m = m.WithCPU(o.CPU)
	}
	r.m, r.machine = m, m.Describe()
	r.describeMachine()
	return nil
}

// describeMachine writes the run's machine line: QEMU's description, then
// how the kernel boots and the console's limit before the init, and why.
func (r *run) describeMachine() {
	line := r.machine
	for _, s := range []string{r.route.why, r.quietWhy, r.res.Derived.TimeoutWhy} {
		if s != "" {
			line += "; " + s
		}
	}
	r.res.Machine = line
}

// getKernel finds, fetches or builds the kernel the run boots, and notes
// where it came from, whether the run requires the feature of it, and
// whether its config makes it a slow debug kernel.
func (r *run) getKernel() (*kernels.Kernel, error) {
	o, res := r.o, r.res
	start := time.Now()
	k, err := kernels.Resolve(kernels.Request{Choice: o.Choice, LockFile: o.LockFile, Host: o.BuildEnv(r.m.Arch).Host})
	if err != nil {
		return nil, &InfraError{Err: err}
	}
	res.KernelTime = time.Since(start)
	if res.Required, res.RequiredWhy, err = required(o.Require, o.LockFile, k.Entry, k.Source); err != nil {
		return nil, &InfraError{Err: err}
	}
	res.Derived.Debug, r.configFrom = debugIn(k.Config), k.ConfigFrom
	if k.Reference && o.Profile == contract.ProfileV3 {
		// The reference kernel is v4 unless told otherwise.
		res.Derived.BootArgs = []string{"ftrace_stackmap.profile=v3"}
	}
	r.kernel = k.Bootable
	res.Kernel, res.Entry, res.Source, res.KernelSHA, res.KernelCached = k.Path, k.Entry, k.Source, k.SHA256, k.Cached
	res.Origin, res.Sanitized = k.Origin, k.Sanitized
	return k, nil
}

// getInitramfs builds the initramfs, lists the specs in it, and packs the
// tree's selftests when the run has them.
func (r *run) getInitramfs(ctx context.Context) error {
	o := r.o
	a := r.m.Arch
	step := o.Progress.Step("building initramfs (%s)", a.Name)
	b := initramfs.Builder{ModuleDir: o.ModuleDir, OutDir: filepath.Join(o.ModuleDir, "build", a.Name), Arch: a, Progress: o.Progress}
	var err error
	r.base, err = b.Build(ctx)
	step(err)
	if err != nil {
		return failed("building the initramfs", err)
	}
	if r.specs, err = readSpecs(b.Specs()); err != nil {
		return failed("listing the specs", err)
	}
	if r.selftests != nil {
		if r.selftests.records, err = o.selftestRecords(a); err != nil {
			return failed("preparing the selftests", err)
		}
	}
	return nil
}
