// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/ftrace-stackmap/conformance/internal/flagvalue"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// qemuTestCmd runs the suite under QEMU on one kernel and prints the
// summary; its exit status is the run's: 0, 1, or 2 without a verdict.
var qemuTestCmd = command{
	name:   "qemu-test",
	page:   "docs/running.md",
	about:  "run the suite under QEMU on one kernel",
	groups: append(runGroups, claimsGroup, exitGroup),
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		o := &r.run
		fs.Var((*flagvalue.Path)(&o.FtraceDir), "ftracetest", "a kernel tree's tools/testing/selftests/ftrace: run its ftracetest in the default boot too")
		fs.StringVar(&o.FtraceMatch, "ftracetest-match", results.DefaultFtraceMatch, "run the .tc files whose path contains this")
		echo := fs.Bool("console", false, "copy the guest console to stderr as it arrives")
		shell := fs.Bool("shell", false, "boot to a shell in the guest instead of the suite, the terminal attached")
		return func(ctx context.Context, r *request, out outputs) outcome {
			if *echo {
				r.run.Echo = out.progress.Always()
			}
			if *shell {
				return guestShell(ctx, r.run, out)
			}
			res, err := qemutest.Run(ctx, r.run)
			return finish(ctx, res, err, out)
		}
	},
}

// guestShell boots to a shell in the guest, the terminal attached.
func guestShell(ctx context.Context, o qemutest.Options, out outputs) outcome {
	res, err := qemutest.Shell(ctx, o, os.Stdin, out.stdout, out.stderr)
	if res != nil && res.Dir != "" {
		fmt.Fprintf(out.stderr, "shell session files: %s\n", res.Dir)
	}
	if err != nil {
		return withoutVerdict("", "shell: "+report.OneLine(err.Error()))
	}
	return outcome{}
}
