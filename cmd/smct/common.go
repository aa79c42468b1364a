// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/kernels"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// projectDir is the project's root given with -C, if it was.
var projectDir string

// modulePath names the project's module in its go.mod.
const modulePath = "module github.com/ftrace-stackmap/conformance\n"

// moduleDir finds the project's root: -C's directory, else the nearest
// go.mod of this module above the working directory, else above smct
// itself (bin/smct of a checkout), so that smct runs from anywhere, a
// kernel tree included.
func moduleDir() (string, error) {
	if projectDir != "" {
		if !isProject(projectDir) {
			return "", fmt.Errorf("-C %s: not the conformance suite's checkout (no go.mod of %s)", projectDir, strings.TrimSpace(strings.TrimPrefix(modulePath, "module ")))
		}
		return filepath.Abs(projectDir)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if isProject(d) {
				return d, nil
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the suite's checkout above %v: run smct from it, or give -C DIR", starts)
}

// isProject says whether dir holds this project's go.mod.
func isProject(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), modulePath)
}

// inProject makes a path given relative to the project absolute; the
// user's own paths (KERNEL=, FTRACETEST=) are resolved from where they stand.
func inProject(root, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// absIfThere makes the user's values that name a file or directory
// absolute, from where the user stands; others (a git range, a
// message-id) stay as given.
func absIfThere(values ...*string) {
	for _, p := range values {
		if _, err := os.Stat(*p); err == nil {
			*p, _ = filepath.Abs(*p)
		}
	}
}

// resultsParent is where a command's run directories go, absolute (a
// run's rerun.sh and qemu-command.txt name files under it): -results when
// given, else the project's results/.
func resultsParent(given, root string) (string, error) {
	if given == "" {
		given = filepath.Join(root, "results")
	}
	return filepath.Abs(given)
}

// newRunDir makes the directory of a command's run under -results (given)
// and points latest at it, as a command starts.
func newRunDir(given, root, kind, archName string) (string, error) {
	parent, err := resultsParent(given, root)
	if err != nil {
		return "", err
	}
	return results.NewRunDir(parent, kind, archName)
}

// noneCounted closes the output of a command that reached no verdict.
const noneCounted = "0 passed, 0 failed, 0 skipped"

// printNoVerdict ends a command's output without a verdict, as a run
// without one ends it.
func printNoVerdict(stdout io.Writer, reason string) {
	fmt.Fprintf(stdout, "NO VERDICT: %s\n%s\n", reason, noneCounted)
}

// interruptible is a context that SIGINT (Ctrl-C) and SIGTERM (timeout,
// a cancelled CI job) cancel, naming the signal as the cause, so that a run
// stopped from outside ends as interrupted and kills QEMU.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := <-sigs; ok {
			cancel(fmt.Errorf("%v", sig))
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel(nil)
	}
}

// runFlags are the flags of every command that boots: a boot's time limit
// and the lock file.
// kernelFlags are the flags that choose the arch, the kernel and the
// contract profile of a run.
func kernelFlags(fs *flag.FlagSet, o *qemutest.Options) {
	fs.StringVar(&o.Arch, "arch", "", "arm64 or x86_64")
	fs.StringVar(&o.Kernel, "kernel", "", "kernel image to boot (overrides -image)")
	fs.StringVar(&o.Tree, "tree", "", "kernel source tree to build with the suite's config fragments and boot (overrides -image)")
	fs.StringVar(&o.Image, "image", "", "images.lock entry to boot (default: the lock's default)")
	o.Profile = contract.ProfileV4
	fs.Var(&o.Profile, "profile", "contract profile: v4 or v3")
}

// absKernelPaths makes -kernel and -tree absolute: the user's own paths,
// from where they stand.
func absKernelPaths(o *qemutest.Options) error {
	for _, p := range []*string{&o.Kernel, &o.Tree} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	return nil
}

func runFlags(fs *flag.FlagSet, o *qemutest.Options) {
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "limit for each boot")
	fs.StringVar(&o.LockFile, "lock", "images.lock", "the image lock file")
	fs.IntVar(&o.Jobs, "jobs", 0, "make -j for a kernel built here (default: one per CPU)")
	fs.StringVar(&o.Accel, "accel", "", "kvm or tcg (default: kvm when /dev/kvm works and the guest is the host's arch)")
	fs.StringVar(&o.CPU, "cpu", "", "QEMU -cpu instead of the machine's (e.g. max: pointer authentication on arm64)")
	fs.StringVar(&o.Mem, "mem", "", "QEMU -m (default 512)")
	fs.Func("qemu-opts", "more QEMU options, added to every boot", func(v string) error { o.QEMUOpts = strings.Fields(v); return nil })
	fs.BoolVar(&o.Keep, "keep", false, "keep each boot's initramfs and a rerun.sh that boots it again")
	fs.IntVar(&o.Lanes, "lanes", 0, "boots made at a time (default: one per CPU, as memory allows)")
}

// requireFlags are the flags that say what a run expects of its kernel and
// how it orders the specs.
func requireFlags(fs *flag.FlagSet, r *results.Request) {
	fs.StringVar(&r.Require, "require-feature", "", "stackmap: stackmap specs that find the feature absent fail the run; none: they are UNSUPPORTED (default: stackmap unless images.lock marks the entry has_stackmap: false)")
	fs.Func("seed", "Ginkgo's random seed for the spec order (default: chosen per run, printed)", func(v string) error {
		if v == "" {
			return nil // SEED= left empty by make
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive number")
		}
		r.Seed = n
		return nil
	})
}

// workplace fills in where the project and the cache are; false (said on
// stderr) when smct runs outside the project.
func workplace(o *qemutest.Options, stderr io.Writer) bool {
	var err error
	if o.ModuleDir, err = moduleDir(); err != nil {
		fmt.Fprintln(stderr, err)
		return false
	}
	o.CacheDir = kernels.CacheDir()
	o.LockFile = inProject(o.ModuleDir, o.LockFile)
	return true
}

// workplaceWithResults is workplace, and the results directory made
// absolute under the project when none was given; false (said on stderr)
// when either fails.
func workplaceWithResults(o *qemutest.Options, stderr io.Writer) bool {
	if !workplace(o, stderr) {
		return false
	}
	var err error
	if o.ResultsDir, err = resultsParent(o.ResultsDir, o.ModuleDir); err != nil {
		fmt.Fprintln(stderr, err)
		return false
	}
	return true
}

// archList reads a comma-separated list of arches, each checked before
// anything is built or booted.
func archList(list string) ([]string, error) {
	names := strings.Split(list, ",")
	for _, n := range names {
		if _, err := arch.Lookup(n); err != nil {
			return nil, fmt.Errorf("-arches: %w", err)
		}
	}
	return names, nil
}
