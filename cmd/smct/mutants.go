// SPDX-License-Identifier: GPL-2.0-only

package main

import (
	"context"
	"flag"
	"fmt"
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
			text, ok, err := mutants.Write(o.ResultsDir, o, rows)
			if err != nil {
				return refuseAt(out, "mutants", err)
			}
			text += fmt.Sprintf("results: %s\npage:    %s\n", o.ResultsDir, filepath.Join(o.ResultsDir, page.File))
			return mutantsOutcome(text, mutants.Count(rows), ok)
		}
	},
}

// mutantsOutcome counts the rows as they must be as passed; a row
// without a verdict says nothing of the suite, and leaves the whole
// without one.
func mutantsOutcome(body string, t mutants.Tally, ok bool) outcome {
	o := outcome{body: body, counted: true, passed: t.Caught, failed: t.Rows - t.Caught}
	switch {
	case len(t.NoVerdict) > 0:
		o.status = exitNoVerdict
		o.reason = fmt.Sprintf("%d of %d rows without a verdict: %s", len(t.NoVerdict), t.Rows, strings.Join(t.NoVerdict, ", "))
	case !ok:
		o.status = exitFailed
	}
	return o
}
