// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		fs.Var((*userPath)(&o.FtraceDir), "ftracetest", "a kernel tree's tools/testing/selftests/ftrace: run its ftracetest in the default boot too")
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

// finish writes a run's reports and returns its summary: the verdict's
// status, or no verdict when the run gave none or a report could not be
// written.
func finish(ctx context.Context, res *results.Result, err error, out outputs) outcome {
	if err != nil {
		return noVerdict(ctx, res, err, out)
	}
	summary, err := results.Write(res)
	if err != nil {
		return noVerdict(ctx, res, err, out)
	}
	writeReply(res, out.stderr)
	var b strings.Builder
	if res.Claims != nil {
		fmt.Fprintf(&b, "%s (%s)\n", res.Claims.Line(), filepath.Join(res.Dir, results.ClaimsFile))
	}
	// The summary ends with the closing line, which the door prints.
	body, _ := strings.CutSuffix(report.Plain(summary), res.ClosingLine()+"\n")
	b.WriteString(body)
	o := outcome{body: b.String(), status: res.ExitCode(), counted: true}
	o.passed, o.failed, o.skipped = res.Totals()
	if o.status == exitNoVerdict {
		// Counted specs without a verdict (UNRESOLVED, a kernel log that
		// did not arrive): the run's verdict says why.
		o.reason = strings.TrimPrefix(report.OneLine(res.Verdict()), "NO VERDICT: ")
	}
	return o
}

// noVerdict ends a run that gave no verdict: its reports say why, as the
// output does.
func noVerdict(ctx context.Context, res *results.Result, err error, out outputs) outcome {
	reason := report.Plain(err.Error())
	if ctx.Err() != nil {
		// The user or CI stopped the run; QEMU went with its context.
		reason = "interrupted: " + context.Cause(ctx).Error()
	}
	var body string
	if res != nil && res.Dir != "" {
		// The reports say why too: ktap.txt and junit.xml with an
		// erroring test per boot, verdict.txt the reason.
		res.NoVerdict = reason
		if _, err := results.Write(res); err != nil {
			fmt.Fprintf(out.stderr, "writing the reports of a run without a verdict: %v\n", err)
		}
		writeReply(res, out.stderr)
		body = fmt.Sprintf("results: %s\n", res.Dir)
	}
	// The door says NO VERDICT, once.
	return withoutVerdict(body, reason)
}
