// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// outcome is how a command ended. Commands return it and the door
// (command.run, realMain) alone prints its end and turns its status into
// the command line's convention, so that every path of every command
// ends the same way.
type outcome struct {
	body string // stdout before the end: a summary, a table, an answer
	// status is smct's: 0, 1, or exitNoVerdict, which reason says why.
	status                  int
	reason                  string
	passed, failed, skipped int // the closing line's
	// counted closes a verdict with the counts. A command whose answer is
	// its last line (kernel's path, claims' line) leaves it false; without
	// a verdict the closing line is always printed.
	counted bool
}

// withoutVerdict is an outcome without a verdict: nothing counted.
func withoutVerdict(body, reason string) outcome {
	return outcome{body: body, status: exitNoVerdict, reason: reason}
}

// noneCounted closes the output of a command that reached no verdict.
const noneCounted = "0 passed, 0 failed, 0 skipped"

// end prints the outcome's body, the NO VERDICT line whenever there is no
// verdict, then the closing line, and returns the status in codes'
// convention.
func (o outcome) end(stdout io.Writer, codes report.ExitCodes) int {
	io.WriteString(stdout, o.body)
	if o.status == exitNoVerdict || o.reason != "" {
		// A reader of the last lines must never meet an exit 2 unexplained.
		o.status = exitNoVerdict
		fmt.Fprintf(stdout, "NO VERDICT: %s\n", cmp.Or(strings.TrimSpace(o.reason), "no reason given"))
	}
	if o.counted || o.status == exitNoVerdict {
		fmt.Fprintln(stdout, report.Closing(o.passed, o.failed, o.skipped))
	}
	if codes == report.ExitCodesKselftest {
		return report.KselftestCounted(o.status, o.passed, o.failed, o.skipped)
	}
	return o.status
}

// exitCodesIn is the convention a command line asks for, read without
// parsing it: a line refused before its flags are parsed, or at a bad
// flag before -exit-codes, still ends in the convention it asked for.
func exitCodesIn(args []string) report.ExitCodes {
	var codes report.ExitCodes
	for i, a := range args {
		if a == "--" {
			break
		}
		name, v, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "exit-codes" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			v = args[i+1]
		}
		var c report.ExitCodes
		if c.Set(v) == nil {
			codes = c
		}
	}
	return codes
}

// refuseAt ends a command that could not do its work, without a verdict.
func refuseAt(out outputs, name string, err error) outcome {
	return withoutVerdict("", err.Error()) // the door says why, once
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

// printMatrix writes a matrix's reports and returns its table; the status
// is the worst cell's, or no verdict when a report could not be written.
func printMatrix(dir string, cells []matrix.Cell, out outputs) outcome {
	table, worst, err := matrix.Report(dir, cells)
	// The table ends with the closing line, which the door prints.
	body, _ := strings.CutSuffix(table, matrix.Totals(cells)+"\n")
	o := outcome{body: body, status: worst, counted: true}
	var none []string
	for _, c := range cells {
		p, f, s := c.Totals()
		o.passed, o.failed, o.skipped = o.passed+p, o.failed+f, o.skipped+s
		if c.Code() == exitNoVerdict {
			none = append(none, c.Name())
		}
	}
	switch {
	case err != nil:
		fmt.Fprintf(out.stderr, "matrix: %v\n", err)
		o.status, o.reason = exitNoVerdict, "the matrix's reports: "+err.Error()
	case len(none) > 0:
		o.reason = fmt.Sprintf("%d of %d cells without a verdict: %s", len(none), len(cells), strings.Join(none, ", "))
	}
	return o
}
