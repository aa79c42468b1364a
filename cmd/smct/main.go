// Command smct runs the ftrace stackmap conformance suite.
//
// Synopsis:
//
//	smct qemu-test -arch arm64|x86_64 [-kernel PATH | -image ENTRY] [-profile v4|v3] [-labels FILTER]
//
// qemu-test boots a kernel under QEMU with the suite as its init and prints a
// verdict per spec, ending with "N passed, N failed, N skipped". Reports go
// to results/<run>/ (summary.txt, ktap.txt, evidence.txt among them) and
// results/latest points at the newest run.
//
// Exit status: 0 no spec failed, 1 a spec failed, 2 no trustworthy verdict.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/kernels/images"
	"github.com/ftrace-stackmap/conformance/internal/kernels/kbuild"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

const (
	exitFailed    = 1
	exitNoVerdict = 2
)

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  smct qemu-test -arch arm64|x86_64 [-kernel PATH | -image ENTRY] [-profile v4|v3] [-labels FILTER]
  smct kernel -arch arm64|x86_64 [-pin]
  smct mutants -arch arm64|x86_64 [-kernel PATH | -image ENTRY] [-faults a,b]
  smct matrix [-images a,b] [-arches arm64,x86_64] [-parallel 2]
  smct bench [-image ENTRY] [-reps 3] [-matrix-images a,b]`

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "kernel" {
		return kernelMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mutants" {
		return mutantsMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "matrix" {
		return matrixMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "bench" {
		return benchMain(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "qemu-test" {
		fmt.Fprintln(stderr, usage)
		return exitNoVerdict
	}
	var err error
	fs := flag.NewFlagSet("qemu-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rep := progress.New(stderr)
	o := qemutest.Options{Progress: rep}
	fs.StringVar(&o.Arch, "arch", "", "arm64 or x86_64")
	fs.StringVar(&o.Kernel, "kernel", "", "kernel image to boot (overrides -image)")
	fs.StringVar(&o.Image, "image", "", "images.lock entry to boot (default: the lock's default)")
	fs.StringVar(&o.Profile, "profile", "v4", "contract profile: v4 or v3")
	fs.StringVar(&o.Labels, "labels", "", "Ginkgo label filter, e.g. 'SM-RESET-01 || baseline'")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "limit for the whole boot")
	fs.StringVar(&o.ResultsDir, "results", "results", "where run directories go")
	fs.StringVar(&o.LockFile, "lock", "images.lock", "the image lock file")
	fs.StringVar(&o.FtraceDir, "ftracetest", "", "a kernel tree's tools/testing/selftests/ftrace: run its ftracetest in the default boot too")
	fs.StringVar(&o.FtraceMatch, "ftracetest-match", results.DefaultFtraceMatch, "run the .tc files whose path contains this")
	bootArgs := fs.String("append", "", "extra kernel command line words")
	echo := fs.Bool("console", false, "copy the guest console to stderr as it arrives")
	if err := fs.Parse(args[1:]); err != nil {
		return exitNoVerdict
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "qemu-test: unexpected argument %q\n", fs.Arg(0))
		return exitNoVerdict
	}
	o.BootArgs = strings.Fields(*bootArgs)
	if o.FtraceDir != "" {
		if o.FtraceDir, err = filepath.Abs(o.FtraceDir); err != nil {
			fmt.Fprintln(stderr, err)
			return exitNoVerdict
		}
	}
	if *echo {
		o.Echo = rep.Always()
	}
	if o.ModuleDir, err = moduleDir(); err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoVerdict
	}
	o.CacheDir = cacheDir()

	ctx, stop := interruptible()
	defer stop()
	res, err := qemutest.Run(ctx, o)
	if err != nil {
		reason := err.Error()
		if ctx.Err() != nil {
			// The user or CI stopped the run; QEMU went with its context.
			reason = "interrupted: " + context.Cause(ctx).Error()
		}
		if res != nil && res.Dir != "" {
			results.WriteVerdict(res.Dir, "NO VERDICT: "+reason)
			fmt.Fprintf(stdout, "results: %s\n", res.Dir)
		}
		fmt.Fprintf(stdout, "NO VERDICT: %s\n", reason)
		fmt.Fprintln(stdout, "0 passed, 0 failed, 0 skipped")
		return exitNoVerdict
	}
	summary, err := results.Write(res)
	if err != nil {
		fmt.Fprintf(stderr, "note: writing the reports: %v\n", err)
	}
	io.WriteString(stdout, summary)
	return res.ExitCode()
}

// moduleDir finds the project's root (where go.mod is) from the working directory.
func moduleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("run smct inside the project: no go.mod above %s", dir)
		}
	}
}

func cacheDir() string {
	if d := os.Getenv("SMCT_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "stackmap-conformance")
	}
	return filepath.Join(os.TempDir(), "stackmap-conformance")
}

// kernelMain builds the reference kernel; the last line printed is its path.
func kernelMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	arch := fs.String("arch", "", "arm64 or x86_64")
	pin := fs.Bool("pin", false, "record the build's inputs and image hashes in images.lock")
	lock := fs.String("lock", "images.lock", "the image lock file")
	entry := fs.String("entry", "reference", "the lock entry to pin")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	dir, err := moduleDir()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoVerdict
	}
	b := kbuild.Builder{Arch: *arch, KernelDir: filepath.Join(dir, "kernel"), CacheDir: cacheDir(), Progress: progress.New(stderr), Terminal: progress.IsTerminal(stderr)}
	start := time.Now()
	res, err := b.Build()
	if err != nil {
		fmt.Fprintf(stderr, "kernel: %v\n", err)
		return exitNoVerdict
	}
	how := "built in " + time.Since(start).Round(time.Second).String()
	if res.Cached {
		how = "cached"
	}
	fmt.Fprintf(stderr, "%s kernel %s: sha256 %s, inputs %s\n", *arch, how, res.ImageSHA256, res.Key)
	if *pin {
		if err := images.Pin(filepath.Join(dir, *lock), *entry, *arch, res.Key, res.ImageSHA256); err != nil {
			fmt.Fprintf(stderr, "kernel: %v\n", err)
			return exitNoVerdict
		}
		fmt.Fprintf(stderr, "pinned %s/%s in %s\n", *entry, *arch, *lock)
	}
	fmt.Fprintln(stdout, res.Image)
	return 0
}

// mutantsMain boots the reference kernel once per fault switch and prints
// which requirements failed; it fails when a fault is missed or the kernel
// without faults fails anything.
func mutantsMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := qemutest.Options{Progress: io.Discard, Request: results.Request{Profile: "v4"}}
	fs.StringVar(&o.Arch, "arch", "", "arm64 or x86_64")
	fs.StringVar(&o.Kernel, "kernel", "", "kernel image to boot (overrides -image)")
	fs.StringVar(&o.Image, "image", "reference", "images.lock entry to boot")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "limit for each boot")
	fs.StringVar(&o.LockFile, "lock", "images.lock", "the image lock file")
	only := fs.String("faults", "", "comma-separated faults to try (default: all)")
	if err := fs.Parse(args); err != nil {
		return exitNoVerdict
	}
	var err error
	if o.ModuleDir, err = moduleDir(); err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoVerdict
	}
	o.CacheDir = cacheDir()
	o.ResultsDir = filepath.Join(o.ModuleDir, "results", "mutants-"+o.Arch+"-"+time.Now().Format("20060102-150405"))
	faults := mutants.Faults()
	if *only != "" {
		faults = nil
		for _, f := range mutants.Faults() {
			if slices.Contains(strings.Split(*only, ","), f.Name) {
				faults = append(faults, f)
			}
		}
	}
	ctx, stop := interruptible()
	defer stop()
	rows := mutants.Run(ctx, o, faults, stderr)
	var b strings.Builder
	ok := mutants.WriteTable(&b, rows)
	os.WriteFile(filepath.Join(o.ResultsDir, "mutants.txt"), []byte(b.String()), 0o644)
	io.WriteString(stdout, b.String())
	caught := 0
	for _, r := range rows {
		if r.Caught() {
			caught++
		}
	}
	fmt.Fprintf(stdout, "results: %s\n%d passed, %d failed, 0 skipped\n", o.ResultsDir, caught, len(rows)-caught)
	if !ok {
		return exitFailed
	}
	return 0
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
