// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"

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
