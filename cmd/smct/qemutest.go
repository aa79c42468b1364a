// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// qemuTestMain runs the suite under QEMU on one kernel and prints the
// summary; its exit status is the run's: 0, 1, or 2 without a verdict.
func qemuTestMain(args []string, stdout, stderr io.Writer) int {
	var err error
	fs := flag.NewFlagSet("qemu-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rep := progress.New(stderr)
	o := qemutest.Options{Progress: rep}
	kernelFlags(fs, &o)
	fs.StringVar(&o.Labels, "labels", "", "Ginkgo label filter, e.g. 'SM-RESET-01 || baseline'")
	runFlags(fs, &o)
	requireFlags(fs, &o.Request)
	fs.BoolVar(&o.Claims, "claims", false, "also measure what the series claims (claims.txt); never changes the verdict")
	fs.StringVar(&o.ResultsDir, "results", "", "where run directories go (default: the project's results/)")
	fs.StringVar(&o.FtraceDir, "ftracetest", "", "a kernel tree's tools/testing/selftests/ftrace: run its ftracetest in the default boot too")
	fs.StringVar(&o.FtraceMatch, "ftracetest-match", results.DefaultFtraceMatch, "run the .tc files whose path contains this")
	bootArgs := fs.String("append", "", "extra kernel command line words")
	exitCodes := fs.String("exit-codes", report.ExitCodesSmct, "exit status convention: smct (0 ok, 1 failed, 2 no verdict) or kselftest (0 pass, 1 fail, 4 all skipped, 5 no verdict)")
	echo := fs.Bool("console", false, "copy the guest console to stderr as it arrives")
	shell := fs.Bool("shell", false, "boot to a shell in the guest instead of the suite, the terminal attached")
	// refuse ends a run refused before it began; results/latest still
	// points at a run directory that says why, as for any other refusal.
	refuse := func(reason string) int {
		fmt.Fprintf(stderr, "qemu-test: %s\n", reason)
		if o.ModuleDir != "" || workplace(&o, io.Discard) {
			o.ResultsDir, _ = resultsParent(o.ResultsDir, o.ModuleDir)
			if res, err := qemutest.Refused(o, reason); err == nil {
				fmt.Fprintf(stdout, "results: %s\n", res.Dir)
			}
		}
		printNoVerdict(stdout, reason)
		return exitNoVerdict
	}
	if err := fs.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return refuse(err.Error())
	}
	if fs.NArg() > 0 {
		return refuse(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *exitCodes != report.ExitCodesSmct && *exitCodes != report.ExitCodesKselftest {
		return refuse(fmt.Sprintf("-exit-codes=%q: want smct or kselftest", *exitCodes))
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
	if !workplaceWithResults(&o, stderr) {
		return exitNoVerdict
	}
	if err := absKernelPaths(&o); err != nil {
		fmt.Fprintln(stderr, err)
		return exitNoVerdict
	}

	ctx, stop := interruptible()
	defer stop()
	if *shell {
		res, err := qemutest.Shell(ctx, o, os.Stdin, stdout, stderr)
		if res != nil && res.Dir != "" {
			fmt.Fprintf(stderr, "shell session files: %s\n", res.Dir)
		}
		if err != nil {
			fmt.Fprintf(stderr, "shell: %s\n", report.OneLine(err.Error()))
			return exitNoVerdict
		}
		return 0
	}
	res, err := qemutest.Run(ctx, o)
	if err != nil {
		return noVerdict(ctx, res, err, *exitCodes, stdout, stderr)
	}
	summary, err := results.Write(res)
	if err != nil {
		return noVerdict(ctx, res, err, *exitCodes, stdout, stderr)
	}
	writeReply(res, stderr)
	if res.Claims != nil {
		fmt.Fprintf(stdout, "%s (%s)\n", res.Claims.Line(), filepath.Join(res.Dir, results.ClaimsFile))
	}
	io.WriteString(stdout, report.Plain(summary))
	return res.ExitCodeAs(*exitCodes)
}

// noVerdict ends a run that gave no verdict: its reports say why, as the
// output does, and the exit status is the convention's for no verdict.
func noVerdict(ctx context.Context, res *results.Result, err error, exitCodes string, stdout, stderr io.Writer) int {
	reason := report.Plain(err.Error())
	if ctx.Err() != nil {
		// The user or CI stopped the run; QEMU went with its context.
		reason = "interrupted: " + context.Cause(ctx).Error()
	}
	if res != nil && res.Dir != "" {
		// The reports say why too: ktap.txt and junit.xml with an
		// erroring test per boot, verdict.txt the reason.
		res.NoVerdict = reason
		if _, err := results.Write(res); err != nil {
			fmt.Fprintf(stderr, "note: %v\n", err)
		}
		writeReply(res, stderr)
		fmt.Fprintf(stdout, "results: %s\n", res.Dir)
	}
	fmt.Fprintf(stdout, "NO VERDICT: %s\n", reason)
	fmt.Fprintf(stderr, "NO VERDICT: %s\n", report.OneLine(reason))
	fmt.Fprintln(stdout, noneCounted)
	if exitCodes == report.ExitCodesKselftest {
		return report.KselftestNoVerdict
	}
	return exitNoVerdict
}
