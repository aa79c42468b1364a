// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftrace-stackmap/conformance/internal/contract"
	"github.com/ftrace-stackmap/conformance/internal/mutants"
	"github.com/ftrace-stackmap/conformance/internal/page"
	"github.com/ftrace-stackmap/conformance/internal/progress"
	"github.com/ftrace-stackmap/conformance/internal/results"
	"github.com/ftrace-stackmap/conformance/internal/results/report"
)

// mutantsCmd boots the reference kernel once per fault switch and prints
// which requirements failed; it fails when a fault is missed or the kernel
// without faults fails anything.
var mutantsCmd = command{
	name:   "mutants",
	page:   "docs/judging.md",
	about:  "boot the reference kernel once per fault switch and variant: each fault must be caught, each variant pass",
	groups: []group{archGroup, kernelGroup, buildGroup, bootGroup, hereGroup, resultsGroup, exitGroup},
	prunes: true,
	flags: func(fs *flag.FlagSet, r *request) runFunc {
		// The fault table says which requirement catches each fault, in
		// the contract's classes: a fault that hides the feature must not
		// turn every UNSUPPORTED spec into a FAIL.
		r.run.Image, r.run.Require = "reference", report.RequireNone
		r.run.Profile = contract.ProfileV4 // the table is the v4 contract's
		only := fs.String("faults", "", "comma-separated faults and variants to try (default: all)")
		return func(ctx context.Context, r *request, out outputs) outcome {
			faults, err := mutants.Select(*only)
			if err != nil {
				return refuseAt(out, "mutants: -faults", err)
			}
			o := r.run
			o.Progress = progress.Discard()
			if o.ResultsDir, err = results.NewRunDir(o.ResultsDir, "mutants", o.Arch.Name); err != nil {
				return refuseAt(out, "mutants", err)
			}
			rows := mutants.Run(ctx, o, faults, out.stderr)
			var b strings.Builder
			switch {
			case o.Lane.IsSanitized() && o.Kernel != "":
				fmt.Fprintf(&b, "kernel: KERNEL=%s, sanitized (its config has KASAN on)\n\n", o.Kernel)
			case o.Lane.IsSanitized():
				fmt.Fprintf(&b, "kernel: the reference kernel, %s\n\n", o.Lane.Words())
			}
			ok := mutants.WriteTable(&b, rows)
			if err := os.WriteFile(filepath.Join(o.ResultsDir, "mutants.txt"), []byte(b.String()), 0o644); err != nil {
				return refuseAt(out, "mutants", err)
			}
			html, err := page.Render(mutants.Page(o.ResultsDir, rows))
			if err == nil {
				err = os.WriteFile(filepath.Join(o.ResultsDir, page.File), html, 0o644)
			}
			if err != nil {
				return refuseAt(out, "mutants", err)
			}
			fmt.Fprintf(&b, "results: %s\npage:    %s\n", o.ResultsDir, filepath.Join(o.ResultsDir, page.File))
			return mutantsOutcome(b.String(), rows, ok)
		}
	},
}

// mutantsOutcome counts the rows caught as passed; a row without a
// verdict says nothing of the suite, and leaves the whole without one.
func mutantsOutcome(body string, rows []mutants.Row, ok bool) outcome {
	o := outcome{body: body, counted: true}
	var none []string
	for _, row := range rows {
		if row.Caught() {
			o.passed++
		}
		if row.Err != nil {
			none = append(none, rowName(row))
		}
	}
	o.failed = len(rows) - o.passed
	switch {
	case len(none) > 0:
		o.status = exitNoVerdict
		o.reason = fmt.Sprintf("%d of %d rows without a verdict: %s", len(none), len(rows), strings.Join(none, ", "))
	case !ok:
		o.status = exitFailed
	}
	return o
}

// rowName names a row as the table does.
func rowName(row mutants.Row) string {
	switch {
	case row.Fault == "":
		return "(none)"
	case row.Variant:
		return "variant " + row.Fault
	}
	return row.Fault
}
