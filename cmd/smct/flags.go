// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/labels"
	"github.com/ftrace-stackmap/conformance/internal/lava"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// request is what a command line asked for, parsed and checked once at
// the door: the groups fill it, each command adds its own flags.
type request struct {
	run       qemutest.Options
	arches    arch.List // -arches
	exitCodes report.ExitCodes
	args      []string          // after the flags, for a command that takes them
	notify    flagvalue.HTTPURL // -notify of a LAVA job
	server    lava.Server       // -server and -token: a LAVA server to run on
}

// group is flags several commands share, as kunit.py shares its build,
// exec and parse options: each is declared here once.
type group struct {
	name string
	add  func(fs *flag.FlagSet, r *request)
	// check refuses values that cannot go together, once fs is parsed.
	check func(r *request) error
}

var (
	// archGroup is the one arch of a run.
	archGroup = group{name: "arch", add: func(fs *flag.FlagSet, r *request) {
		fs.Var(&r.run.Arch, "arch", "arm64 or x86_64")
	}, check: func(r *request) error {
		if r.run.Arch.Name == "" {
			return fmt.Errorf("ARCH=\"\": want one of %v", arch.Names())
		}
		return nil
	}}

	// anyArchGroup is -arch for a command that may not need one.
	anyArchGroup = group{name: "arch", add: archGroup.add}

	// archesGroup is the arches of a command that makes several runs.
	archesGroup = group{name: "arches", add: func(fs *flag.FlagSet, r *request) {
		r.arches = arch.All()
		fs.Var(&r.arches, "arches", "comma-separated arches")
	}}

	// kernelGroup chooses the kernel: a file, a tree built here, or a
	// lock entry.
	kernelGroup = group{name: "kernel", add: func(fs *flag.FlagSet, r *request) {
		o := &r.run
		fs.Var((*flagvalue.Path)(&o.Kernel), "kernel", "kernel image to boot (overrides -image)")
		fs.Var((*flagvalue.Path)(&o.Tree), "tree", "kernel source tree to build with the suite's config fragments and boot (overrides -image)")
		fs.StringVar(&o.Image, "image", o.Image, "images.lock entry to boot (default: the lock's default)")
	}, check: func(r *request) error { return kernels.CheckChoice(r.run.Choice, r.run.LockFile) }}

	// buildGroup is how kernels are found and built here: every command
	// that resolves or builds a kernel has it.
	buildGroup = group{name: "build", add: func(fs *flag.FlagSet, r *request) {
		fs.Var((*flagvalue.Path)(&r.run.LockFile), "lock", "the image lock file (default: the project's images.lock)")
		fs.Var((*flagvalue.Count)(&r.run.Jobs), "jobs", "make -j for a kernel built here (default: one per CPU)")
		fs.Var(&r.run.Lane, "sanitize", "1: the sanitized lane, a kernel built with the tree's kernel/configs/debug.config and kernel/config/sanitize.config too (KASAN, lockdep, UBSAN, kmemleak), cached apart; a KERNEL= must have KASAN on in its config")
	}}

	// profileGroup is the version of the contract the kernel is held to.
	profileGroup = group{name: "profile", add: func(fs *flag.FlagSet, r *request) {
		r.run.Profile = contract.ProfileV4
		fs.Var(&r.run.Profile, "profile", "contract profile: v4 or v3")
	}}

	// specGroup is which specs run, in which order.
	specGroup = group{name: "spec", add: func(fs *flag.FlagSet, r *request) {
		fs.Var((*labelFilter)(&r.run.Labels), "labels", "Ginkgo label filter, e.g. 'SM-RESET-01 || baseline'")
		fs.Var((*flagvalue.Seed)(&r.run.Seed), "seed", "Ginkgo's random seed for the spec order (default: chosen per run, printed)")
		r.run.Torture = time.Minute
		fs.Var((*flagvalue.Duration)(&r.run.Torture), "torture", "how long the torture boot's actors run (LABELS=torture; make torture DURATION=)")
	}}

	// requireGroup is whether a kernel without the feature fails the run.
	requireGroup = group{name: "require", add: func(fs *flag.FlagSet, r *request) {
		fs.Var(&r.run.Require, "require-feature", report.RequireUsage)
	}}

	// bootGroup is how each boot is made, here or in a lab.
	bootGroup = group{name: "boot", add: func(fs *flag.FlagSet, r *request) {
		o := &r.run
		o.Timeout = qemutest.DefaultTimeout
		fs.Var((*flagvalue.Duration)(&o.Timeout), "timeout", "limit for each boot (the default is x4 for a kernel whose config sets debug options)")
		fs.StringVar(&o.Accel, "accel", "", "kvm or tcg (default: kvm when /dev/kvm works and the guest is the host's arch)")
		fs.StringVar(&o.CPU, "cpu", "", "QEMU -cpu instead of the machine's (e.g. max: pointer authentication on arm64)")
		fs.StringVar(&o.Mem, "mem", "", "QEMU -m, megabytes (default 512)")
		fs.Var((*flagvalue.Words)(&o.BootArgs), "append", "extra kernel command line words (a fault switch of the reference kernel, say)")
	}, check: func(r *request) error { return qemutest.CheckMem(r.run.Mem) }}

	// hereGroup is how boots are made on this machine.
	hereGroup = group{name: "here", add: func(fs *flag.FlagSet, r *request) {
		o := &r.run
		fs.Var((*flagvalue.Words)(&o.QEMUOpts), "qemu-opts", "more QEMU options, added to every boot")
		fs.BoolVar(&o.Keep, "keep", false, "keep each boot's initramfs and a rerun.sh that boots it again")
		fs.Var((*flagvalue.Count)(&o.Lanes), "lanes", "boots made at a time (default: one per CPU, as memory allows); a boot waiting for kmemleak leaves its lane to the next")
		fs.Var(&o.Reports, "reports", "how the guest's reports reach this machine: port (a virtio-serial port, "+
			"the default) or console (base64 on the serial console, as under LAVA)")
		fs.Var((*flagvalue.Quiet)(&o.BootQuiet), "boot-quiet", "the console's longest silence before the guest's init starts, "+
			"past which a boot has hung (default: 20s under KVM, 1m under TCG, twice that for a debug kernel)")
	}}

	// claimsGroup adds the claims plan to a run or a walk's whole series.
	claimsGroup = group{name: "claims", add: func(fs *flag.FlagSet, r *request) {
		fs.BoolVar(&r.run.Claims, "claims", false, "also measure what the series claims (claims.txt); never changes the verdict")
	}}

	// notifyGroup is LAVA's notify callback of the jobs a command writes.
	notifyGroup = group{name: "notify", add: func(fs *flag.FlagSet, r *request) {
		fs.Var(&r.notify, "notify", "URL the LAVA server posts each job's log and results to when it ends (LAVA's notify callback)")
	}}

	// serverGroup is a LAVA server to run on instead of here, and its
	// token: make lab's when none is given.
	serverGroup = group{name: "server", add: func(fs *flag.FlagSet, r *request) {
		fs.StringVar(&r.server.URL, "server", "", "a LAVA server to submit the jobs to, then follow them and judge their logs (make lab's: http://127.0.0.1:8000)")
		fs.StringVar(&r.server.Token, "token", "", "the server user's REST token (default: $LAB_TOKEN, else make lab's)")
	}, check: func(r *request) error {
		if r.server.URL == "" {
			return nil
		}
		if r.server.Token == "" {
			r.server.Token = lava.LabToken(r.run.CacheDir)
		}
		if r.server.Token == "" {
			return fmt.Errorf("no token for %s: give -token (LAB_TOKEN=), or start make lab", r.server.URL)
		}
		return nil
	}}

	// resultsGroup is where run directories go.
	resultsGroup = group{name: "results", add: func(fs *flag.FlagSet, r *request) {
		fs.Var((*flagvalue.Path)(&r.run.ResultsDir), "results", "where run directories go (default: the project's results/)")
	}}

	// exitGroup is the exit status convention: every command has it, and
	// the door applies it on every path.
	exitGroup = group{name: "exit", add: func(fs *flag.FlagSet, r *request) {
		fs.Var(&r.exitCodes, "exit-codes", report.ExitCodesUsage)
	}}
)

// flagSet is the group's flags alone, for the help.
func (g group) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(g.name, flag.ContinueOnError)
	g.add(fs, new(request))
	return fs
}

// runGroups are the groups of a command that makes a run here.
var runGroups = []group{archGroup, kernelGroup, buildGroup, profileGroup, specGroup, requireGroup, bootGroup, hereGroup, resultsGroup}

// labelFilter is -labels, parsed once as it is read: a filter Ginkgo
// cannot read is refused in the words of make's LABELS=.
type labelFilter labels.Filter

func (f *labelFilter) String() string { return (*labels.Filter)(f).String() }

func (f *labelFilter) Set(v string) error {
	if err := (*labels.Filter)(f).Set(v); err != nil {
		return fmt.Errorf("LABELS=%q: %v", v, report.OneLine(errors.Unwrap(err).Error()))
	}
	return nil
}

// workplace fills in where the project and the cache are, and the
// project's files for paths left at their defaults.
func workplace(o *qemutest.Options) error {
	var err error
	if o.ModuleDir, err = moduleDir(); err != nil {
		return err
	}
	o.CacheDir = cacheDir()
	if o.LockFile == "" {
		o.LockFile = filepath.Join(o.ModuleDir, "images.lock")
	}
	if o.ResultsDir == "" {
		o.ResultsDir = filepath.Join(o.ModuleDir, "results")
	}
	return nil
}
